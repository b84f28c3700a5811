// ConcretePolicy::alu: the exact result of each ALU instruction (src/ptx/concrete.hpp).
#include "ptx/concrete.hpp"

#include <bit>
#include <string>
#include <vector>

#include "arith/soft_arith.hpp"
#include "ptx/ptx.hpp"

namespace bitproof::ptx {
namespace {

using soft::Round;

std::uint64_t bits_mask(int bits) { return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1; }
std::int64_t sign_extend(std::uint64_t v, int bits) {
  if (bits >= 64) return static_cast<std::int64_t>(v);
  const int shift = 64 - bits;
  return static_cast<std::int64_t>(v << shift) >> shift;
}

// -1, 0, 1 for a < b, a == b, a > b (+0 == -0); 2 when unordered (a NaN).
template <class F>
int float_order(typename F::Bits a, typename F::Bits b) {
  const auto cls_a = soft::unpack<F>(a).cls, cls_b = soft::unpack<F>(b).cls;
  if (cls_a == soft::Class::kNaN || cls_b == soft::Class::kNaN) return 2;
  const auto key = [](typename F::Bits x) -> std::int64_t {
    const std::int64_t mag = static_cast<std::int64_t>(x & ~F::kSign);
    return (x & F::kSign) != 0 ? -mag : mag;
  };
  const std::int64_t ka = key(a), kb = key(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

template <class F>
bool is_nan(typename F::Bits a) {
  return soft::unpack<F>(a).cls == soft::Class::kNaN;
}

// The format with F's precision and three more exponent bits: a result's tininess "after
// rounding" (rounded to F's precision with an unbounded exponent) is read there, the rule
// SoftArith::hmul_ftz states as measured on an H200 for mul.rn.ftz.f16.
template <class F>
using WideOf = soft::Ieee<F::kBits - 1 - F::kMan + 3, F::kMan>;

// One float lane of add/sub/mul/fma/min/max/neg/abs/div/rcp/sqrt in format F.
template <class F>
typename F::Bits float_op(const Inst& in, typename F::Bits a, typename F::Bits b, typename F::Bits c) {
  using Bits = typename F::Bits;
  const Round mode = in.rnd == Rnd::kRz ? Round::kTowardZero : Round::kNearestEven;
  if (in.ftz) {
    a = static_cast<Bits>(soft::flush_subnormal<F>(a));
    b = static_cast<Bits>(soft::flush_subnormal<F>(b));
    c = static_cast<Bits>(soft::flush_subnormal<F>(c));
  }
  Bits r = 0;
  bool rounds = true;
  switch (in.op) {
    case Op::kAdd: r = soft::add<F>(a, b, mode); break;
    case Op::kSub: r = soft::add<F>(a, static_cast<Bits>(b ^ F::kSign), mode); break;
    case Op::kMul: r = soft::mul<F>(a, b, mode); break;
    case Op::kFma: r = soft::fma<F>(a, b, c, mode); break;
    case Op::kDiv: r = soft::div<F>(a, b, mode); break;
    case Op::kRcp: r = soft::div<F>(static_cast<Bits>(F::kBias) << F::kMan, a, mode); break;
    case Op::kSqrt: r = soft::sqrt<F>(a, mode); break;
    // neg/abs of a NaN: the canonical NaN, not the operand with its sign changed (PTX ISA
    // 9.7.3 leaves it unspecified; measured on an H100, sm_90, by tests/ptx/gpu/faith.ptx:
    // abs.f32 0xFF800001 -> 0x7FFFFFFF, neg.f16 0x7E00 -> 0x7FFF).
    case Op::kNeg: r = is_nan<F>(a) ? F::kNaN : static_cast<Bits>(a ^ F::kSign), rounds = false; break;
    case Op::kAbs: r = is_nan<F>(a) ? F::kNaN : static_cast<Bits>(a & ~F::kSign), rounds = false; break;
    case Op::kMin:
    case Op::kMax: {
      rounds = false;
      const bool na = is_nan<F>(a), nb = is_nan<F>(b);
      if (na && nb)
        r = F::kNaN;
      else if (na)
        r = b;
      else if (nb)
        r = a;
      else {
        // -0 is below +0 here (float_order calls them equal): the sign decides.
        const int o = float_order<F>(a, b);
        const bool a_first = o < 0 || (o == 0 && (a & F::kSign) != 0);
        r = (in.op == Op::kMin) == a_first ? a : b;
      }
      break;
    }
    default: return 0;
  }
  if (in.ftz && rounds) {
    using W = WideOf<F>;
    const auto wa = soft::convert<W, F>(a, Round::kNearestEven), wb = soft::convert<W, F>(b, Round::kNearestEven),
               wc = soft::convert<W, F>(c, Round::kNearestEven);
    typename W::Bits w = 0;
    switch (in.op) {
      case Op::kAdd: w = soft::add<W>(wa, wb, mode); break;
      case Op::kSub: w = soft::add<W>(wa, wb ^ W::kSign, mode); break;
      case Op::kMul: w = soft::mul<W>(wa, wb, mode); break;
      default: w = soft::fma<W>(wa, wb, wc, mode); break;
    }
    const auto wexp = static_cast<std::uint32_t>((w >> W::kMan) & W::kExpAllOnes);
    if (wexp != W::kExpAllOnes && wexp < static_cast<std::uint32_t>(W::kBias - (F::kBias - 1))) {
      r = static_cast<Bits>(r & F::kSign);
    }
  }
  if (in.sat) {  // [+0, 1]; NaN and every negative value (-0 too) to +0
    const Bits one = static_cast<Bits>(F::kBias) << F::kMan;
    if (is_nan<F>(r) || (r & F::kSign) != 0)
      r = 0;
    else if (float_order<F>(r, one) > 0)
      r = one;
  }
  return r;
}

std::uint64_t float_lanes(const Inst& in, const std::uint64_t* s) {
  const auto lane = [&](int i) -> std::uint64_t {
    const auto part = [&](std::uint64_t v) { return static_cast<std::uint32_t>((v >> (16 * i)) & 0xFFFF); };
    if (in.type.bf) return float_op<soft::Bfloat16>(in, part(s[0]), part(s[1]), part(s[2]));
    return float_op<soft::Binary16>(in, part(s[0]), part(s[1]), part(s[2]));
  };
  if (in.type.bits == 32 && !in.type.x2) {
    return float_op<soft::Binary32>(in, static_cast<std::uint32_t>(s[0]), static_cast<std::uint32_t>(s[1]),
                                    static_cast<std::uint32_t>(s[2]));
  }
  if (!in.type.x2) return lane(0);
  return lane(0) | (lane(1) << 16);
}

bool compare(const Inst& in, std::uint64_t a, std::uint64_t b) {
  const Type& t = in.type;
  int o = 0;
  if (t.kind == Kind::kFloat) {
    const auto flush = [&](auto tag, std::uint64_t v) -> std::uint64_t {
      using F = decltype(tag);
      return in.ftz ? soft::flush_subnormal<F>(static_cast<typename F::Bits>(v)) : v;
    };
    if (t.bits == 32)
      o = float_order<soft::Binary32>(static_cast<std::uint32_t>(flush(soft::Binary32{}, a)),
                                      static_cast<std::uint32_t>(flush(soft::Binary32{}, b)));
    else if (t.bf)
      o = float_order<soft::Bfloat16>(static_cast<std::uint32_t>(a & 0xFFFF), static_cast<std::uint32_t>(b & 0xFFFF));
    else
      o = float_order<soft::Binary16>(static_cast<std::uint32_t>(flush(soft::Binary16{}, a & 0xFFFF)),
                                      static_cast<std::uint32_t>(flush(soft::Binary16{}, b & 0xFFFF)));
  } else if (t.kind == Kind::kSigned && in.cmp != Cmp::kLo && in.cmp != Cmp::kLs && in.cmp != Cmp::kHi &&
             in.cmp != Cmp::kHs) {
    const std::int64_t x = sign_extend(a, t.bits), y = sign_extend(b, t.bits);
    o = x < y ? -1 : x > y ? 1 : 0;
  } else {
    const std::uint64_t x = a & bits_mask(t.bits), y = b & bits_mask(t.bits);
    o = x < y ? -1 : x > y ? 1 : 0;
  }
  const bool un = o == 2;
  switch (in.cmp) {
    case Cmp::kEq: return !un && o == 0;
    case Cmp::kNe: return !un && o != 0;
    case Cmp::kLt:
    case Cmp::kLo: return !un && o < 0;
    case Cmp::kLe:
    case Cmp::kLs: return !un && o <= 0;
    case Cmp::kGt:
    case Cmp::kHi: return !un && o == 1;
    case Cmp::kGe:
    case Cmp::kHs: return !un && (o == 0 || o == 1);
    case Cmp::kEqu: return un || o == 0;
    case Cmp::kNeu: return un || o != 0;
    case Cmp::kLtu: return un || o < 0;
    case Cmp::kLeu: return un || o <= 0;
    case Cmp::kGtu: return un || o == 1;
    case Cmp::kGeu: return un || o == 0 || o == 1;
    case Cmp::kNum: return !un;
    case Cmp::kNan: return un;
  }
  return false;
}

// Float -> integer with .rzi/.rni, saturating to the destination's range; NaN gives 0
// (PTX ISA 9.7.9.21 cvt: float-to-integer conversions saturate, NaN converts to 0).
template <class F>
std::uint64_t float_to_int(const Inst& in, std::uint64_t bits) {
  const Type& d = in.type;
  const bool sgn = d.kind == Kind::kSigned;
  const std::uint64_t max_mag = sgn ? (std::uint64_t{1} << (d.bits - 1)) - 1 : bits_mask(d.bits);
  const std::uint64_t min_mag = sgn ? std::uint64_t{1} << (d.bits - 1) : 0;  // of the negative side
  const auto u = soft::unpack<F>(static_cast<typename F::Bits>(bits));
  const auto out = [&](bool neg, std::uint64_t mag, bool overflow) -> std::uint64_t {
    if (neg) {
      if (overflow || mag > min_mag) mag = min_mag;
      return (~mag + 1) & bits_mask(d.bits);
    }
    return (overflow || mag > max_mag) ? max_mag : mag;
  };
  if (u.cls == soft::Class::kNaN || u.cls == soft::Class::kZero) return 0;
  if (u.cls == soft::Class::kInf) return out(u.neg, 0, true);
  if (u.exp >= 0) {
    const bool overflow = u.exp >= 64 || (u.sig >> (63 - u.exp)) > 1 || ((u.sig << u.exp) >> u.exp) != u.sig;
    return out(u.neg, overflow ? 0 : u.sig << u.exp, overflow);
  }
  const int sh = -u.exp;
  std::uint64_t mag = sh >= 64 ? 0 : u.sig >> sh;
  if (in.rnd == Rnd::kRni) {
    const std::uint64_t rem = sh >= 64 ? u.sig : u.sig & ((std::uint64_t{1} << sh) - 1);
    const std::uint64_t half = sh > 64 ? 0 : sh == 64 ? (std::uint64_t{1} << 63) : std::uint64_t{1} << (sh - 1);
    if (sh <= 64 && (rem > half || (rem == half && (mag & 1) != 0))) ++mag;
  }
  return out(u.neg, mag, false);
}

// Integer -> float, one rounding (.rn/.rz) through the soft model's round_pack.
template <class F>
std::uint64_t int_to_float(const Inst& in, std::uint64_t v) {
  const Type& s = in.src_type;
  bool neg = false;
  std::uint64_t mag = v & bits_mask(s.bits);
  if (s.kind == Kind::kSigned) {
    const std::int64_t x = sign_extend(v, s.bits);
    neg = x < 0;
    mag = neg ? ~static_cast<std::uint64_t>(x) + 1 : static_cast<std::uint64_t>(x);
  }
  if (mag == 0) return 0;
  const Round mode = in.rnd == Rnd::kRz ? Round::kTowardZero : Round::kNearestEven;
  int exp = 0;
  if (mag >> 63) mag = (mag >> 1) | (mag & 1), exp = 1;  // round_pack takes < 2^63, sticky kept
  return soft::round_pack<F>(neg, exp, mag, mode);
}

// cvt's result bits at the destination type's width.
std::uint64_t convert_bits(const Inst& in, std::uint64_t v) {
  const Type& d = in.type;
  const Type& s = in.src_type;
  const bool df = d.kind == Kind::kFloat, sf = s.kind == Kind::kFloat;
  const auto h = static_cast<std::uint16_t>(v & 0xFFFF);
  const auto f = static_cast<std::uint32_t>(v);
  if (df && sf) {
    // cvt.f32.bf16 is the exact widening, a NaN's payload kept: bits << 16 (measured on an H100,
    // tests/ptx/data/faith_sm90.bin word 23: 0xFFFF -> 0xFFFF0000, where a canonical NaN was assumed).
    if (d.bits == 32 && s.bf) return std::uint64_t{h} << 16;
    if (d.bits == 32) return SoftArith::half2float(h);
    if (d.bf) return SoftArith::float2bfloat16_rn(f);
    return in.rnd == Rnd::kRz ? SoftArith::float2half_rz(f) : SoftArith::float2half_rn(f);
  }
  if (df) return d.bits == 32 ? int_to_float<soft::Binary32>(in, v) : int_to_float<soft::Binary16>(in, v);
  if (sf) return s.bits == 32 ? float_to_int<soft::Binary32>(in, f) : float_to_int<soft::Binary16>(in, h);
  const std::uint64_t x =
      s.kind == Kind::kSigned ? static_cast<std::uint64_t>(sign_extend(v, s.bits)) : v & bits_mask(s.bits);
  return x & bits_mask(d.bits);
}

// A signed integer result narrower than 64 bits is sign-extended (to 64 bits: every reader masks
// to its own width), as the hardware fills a wider destination register (PTX ISA, "Operand size
// exceeding instruction-type size"; measured on an H100: cvt.rzi.sat.s8.f32 into a .b32 register
// gives 0xFFFFFF80, faith_sm90.bin word 29). result_bits says 64 for it.
std::uint64_t convert(const Inst& in, std::uint64_t v) {
  const std::uint64_t r = convert_bits(in, v);
  if (in.type.kind == Kind::kSigned && in.type.bits < 64) {
    return static_cast<std::uint64_t>(sign_extend(r, in.type.bits));
  }
  return r;
}

// mul/mad .lo/.hi/.wide of two w-bit operands.
std::uint64_t int_mul(const Inst& in, std::uint64_t a, std::uint64_t b) {
  const int w = in.type.bits;
  const bool sgn = in.type.kind == Kind::kSigned;
  using I128 = __int128;
  using U128 = unsigned __int128;
  const U128 p = sgn ? static_cast<U128>(static_cast<I128>(sign_extend(a, w)) * static_cast<I128>(sign_extend(b, w)))
                     : static_cast<U128>(a & bits_mask(w)) * static_cast<U128>(b & bits_mask(w));
  switch (in.part) {
    case MulPart::kHi: return static_cast<std::uint64_t>(p >> w) & bits_mask(w);
    case MulPart::kWide: return static_cast<std::uint64_t>(p) & bits_mask(2 * w);
    default: return static_cast<std::uint64_t>(p) & bits_mask(w);
  }
}

const char* int_op(const Inst& in, const std::uint64_t* s, std::uint64_t* d) {
  const int w = in.type.bits;
  const std::uint64_t m = bits_mask(w);
  const bool sgn = in.type.kind == Kind::kSigned;
  const std::uint64_t a = s[0] & m, b = s[1] & m;
  switch (in.op) {
    case Op::kAdd: d[0] = (a + b) & m; break;
    case Op::kSub: d[0] = (a - b) & m; break;
    case Op::kMul: d[0] = int_mul(in, a, b); break;
    case Op::kMad: {
      const int rw = in.part == MulPart::kWide ? 2 * w : w;
      d[0] = (int_mul(in, a, b) + s[2]) & bits_mask(rw);
      break;
    }
    case Op::kDiv:
    case Op::kRem: {
      if (b == 0) return "integer division by zero (the result is undefined)";
      if (sgn) {
        const std::int64_t x = sign_extend(a, w), y = sign_extend(b, w);
        if (y == -1 && x == sign_extend(std::uint64_t{1} << (w - 1), w))
          return "signed division overflow (the result is undefined)";
        d[0] = static_cast<std::uint64_t>(in.op == Op::kDiv ? x / y : x % y) & m;
      } else {
        d[0] = in.op == Op::kDiv ? a / b : a % b;
      }
      break;
    }
    case Op::kNeg: d[0] = (~a + 1) & m; break;
    case Op::kAbs: d[0] = sign_extend(a, w) < 0 ? (~a + 1) & m : a; break;
    case Op::kMin:
    case Op::kMax: {
      const bool lt = sgn ? sign_extend(a, w) < sign_extend(b, w) : a < b;
      d[0] = (in.op == Op::kMin) == lt ? a : b;
      break;
    }
    case Op::kShl:
      d[0] = (s[1] & 0xFFFFFFFF) >= static_cast<std::uint64_t>(w) ? 0 : (a << (s[1] & 0xFFFFFFFF)) & m;
      break;
    case Op::kShr: {
      // Shift amounts past the width give 0, or the sign (PTX ISA 9.7.8.8: clamped to the width).
      const std::uint64_t n = std::min<std::uint64_t>(s[1] & 0xFFFFFFFF, static_cast<std::uint64_t>(w));
      if (sgn)
        d[0] = static_cast<std::uint64_t>(sign_extend(a, w) >> std::min<std::uint64_t>(n, 63)) & m;
      else
        d[0] = n >= static_cast<std::uint64_t>(w) ? 0 : a >> n;
      break;
    }
    case Op::kAnd: d[0] = a & b; break;
    case Op::kOr: d[0] = a | b; break;
    case Op::kXor: d[0] = a ^ b; break;
    case Op::kNot: d[0] = ~a & m; break;
    default: return "instruction not implemented by the concrete policy";
  }
  return nullptr;
}

// prmt (PTX ISA, prmt): the source byte of each result byte (d.b0 first) for the modes, by c[1:0].
constexpr std::uint8_t kPrmtTable[6][4][4] = {
    {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}},  // f4e: forward 4 extract
    {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}},  // b4e: backward 4 extract
    {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}},  // rc8: replicate 8
    {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}},  // ecl: edge clamp left
    {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}},  // ecr: edge clamp right
    {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}},  // rc16: replicate 16
};

std::uint64_t prmt(const Inst& in, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  const std::uint64_t bytes = ((b & 0xFFFFFFFFu) << 32) | (a & 0xFFFFFFFFu);
  const auto byte = [&](unsigned i) { return (bytes >> (8 * i)) & 0xFF; };
  std::uint64_t d = 0;
  for (unsigned i = 0; i < 4; ++i) {
    std::uint64_t v = 0;
    if (in.mode == static_cast<std::uint8_t>(PrmtMode::kDefault)) {
      const unsigned ctl = (c >> (4 * i)) & 0xF;
      v = byte(ctl & 7);
      if ((ctl & 8) != 0) v = (v & 0x80) != 0 ? 0xFF : 0;  // replicate the byte's sign
    } else {
      v = byte(kPrmtTable[in.mode - 1][c & 3][i]);
    }
    d |= v << (8 * i);
  }
  return d;
}

// bfe / bfi (PTX ISA, bfe and bfi): position and length are c's and d's low bytes; bits past the
// type's msb are not taken (bfe fills them with the sign bit, 0 for unsigned or length 0). Except
// bfe.s64, which on the hardware reads the whole 32-bit b and c (measured on an H100,
// tests/ptx/data/faith_sm90.bin word 27: 8192 of 8192 triples follow that rule, 2652 differ from the
// ISA's; ptxas emulates the 64-bit form, sm_90 has no 64-bit BFE). bfe.u64 is not measured: the ISA's
// rule is kept (docs/ptx-executor.md).
std::uint64_t bfe(const Inst& in, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  const bool whole = in.type.bits == 64 && in.type.kind == Kind::kSigned;
  const std::uint64_t field = whole ? 0xFFFFFFFFu : 0xFFu;
  const std::uint64_t msb = in.type.bits - 1, pos = b & field, len = c & field;
  std::uint64_t sbit = 0;
  if (in.type.kind == Kind::kSigned && len != 0) sbit = (a >> std::min(pos + len - 1, msb)) & 1;
  std::uint64_t d = 0;
  for (std::uint64_t i = 0; i <= msb; ++i) {
    const std::uint64_t bit = (i < len && pos + i <= msb) ? (a >> (pos + i)) & 1 : sbit;
    d |= bit << i;
  }
  return d;
}
std::uint64_t bfi(const Inst& in, std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d) {
  const unsigned msb = in.type.bits - 1, pos = c & 0xFF, len = d & 0xFF;
  std::uint64_t f = b & bits_mask(in.type.bits);
  for (unsigned i = 0; i < len && pos + i <= msb; ++i) {
    f = (f & ~(std::uint64_t{1} << (pos + i))) | (((a >> i) & 1) << (pos + i));
  }
  return f;
}

// shf.l / shf.r (PTX ISA, shf): the upper (l) or lower (r) 32 bits of {b, a} shifted by n,
// n = min(c, 32) with .clamp, c & 31 with .wrap.
std::uint64_t shf(const Inst& in, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  const bool right = (in.mode & 1) != 0, clamp = (in.mode & 2) != 0;
  const std::uint64_t n = clamp ? std::min<std::uint64_t>(c & 0xFFFFFFFFu, 32) : c & 31;
  const std::uint64_t both = ((b & 0xFFFFFFFFu) << 32) | (a & 0xFFFFFFFFu);
  return right ? (both >> n) & 0xFFFFFFFFu : ((both << n) >> 32) & 0xFFFFFFFFu;
}

// The bit-manipulation instructions; false when `in` is none of them.
bool bits_op(const Inst& in, const std::uint64_t* s, std::uint64_t* d) {
  const int w = in.type.bits;
  const std::uint64_t a = s[0] & bits_mask(w);
  switch (in.op) {
    case Op::kPrmt: d[0] = prmt(in, s[0], s[1], s[2]); return true;
    case Op::kBfe: d[0] = bfe(in, a, s[1], s[2]); return true;
    case Op::kBfi: d[0] = bfi(in, a, s[1], s[2], s[3]); return true;
    case Op::kPopc: d[0] = static_cast<std::uint64_t>(std::popcount(a)); return true;
    case Op::kClz: d[0] = static_cast<std::uint64_t>(std::countl_zero(a) - (64 - w)); return true;
    case Op::kBrev: {
      std::uint64_t r = 0;
      for (int i = 0; i < w; ++i) r |= ((a >> i) & 1) << (w - 1 - i);
      d[0] = r;
      return true;
    }
    case Op::kLop3: {
      // Each result bit is the table's bit at (a, b, c) = 4a + 2b + c: the table is immLut =
      // F(0xF0, 0xCC, 0xAA) (PTX ISA, lop3).
      const std::uint64_t lut = s[3] & 0xFF;
      std::uint64_t r = 0;
      for (int i = 0; i < 32; ++i) {
        const unsigned idx = static_cast<unsigned>(((a >> i) & 1) << 2 | ((s[1] >> i) & 1) << 1 | ((s[2] >> i) & 1));
        r |= ((lut >> idx) & 1) << i;
      }
      d[0] = r;
      return true;
    }
    case Op::kShf: d[0] = shf(in, s[0], s[1], s[2]); return true;
    case Op::kCvtPack: {
      const auto one = [&](std::uint64_t v) -> std::uint64_t {
        const auto f = static_cast<std::uint32_t>(v);
        if (in.type.bf) return SoftArith::float2bfloat16_rn(f);
        return in.rnd == Rnd::kRz ? SoftArith::float2half_rz(f) : SoftArith::float2half_rn(f);
      };
      d[0] = (one(s[0]) << 16) | one(s[1]);
      return true;
    }
    default: return false;
  }
}

// The reason for an approximate instruction that runs: its mnemonic and kGpuOnly. Kept in a
// per-thread buffer that the next call overwrites (every caller copies a reason at once: the
// executor's fail(), Graph::step).
const char* gpu_only_reason(const Inst& in) {
  thread_local std::string why;
  const Type& t = in.type;
  const int lane = t.x2 ? t.bits / 2 : t.bits;
  why = std::string(approx_name(static_cast<Approx>(in.mode))) + (in.ftz ? ".ftz" : "") + "." + (t.bf ? "bf" : "f") +
        std::to_string(lane) + (t.x2 ? "x2" : "") + ": approximate, " + std::string(kGpuOnly);
  return why.c_str();
}

}  // namespace

const char* ConcretePolicy::alu(const Inst& in, const Value* s, Value* d) {
  if (bits_op(in, s, d)) return nullptr;
  switch (in.op) {
    case Op::kApprox: return gpu_only_reason(in);  // bits the hardware defines (module.hpp's card)
    case Op::kMov: d[0] = s[0] & bits_mask(in.type.bits); return nullptr;
    case Op::kPack: {
      const int w = in.type.bits / in.vec;
      std::uint64_t v = 0;
      for (int i = 0; i < in.vec; ++i) v |= (s[i] & bits_mask(w)) << (i * w);
      d[0] = v;
      return nullptr;
    }
    case Op::kUnpack: {
      const int w = in.type.bits / in.vec;
      for (int i = 0; i < in.vec; ++i) d[i] = (s[0] >> (i * w)) & bits_mask(w);
      return nullptr;
    }
    case Op::kSelp: d[0] = ((s[2] & 1) != 0 ? s[0] : s[1]) & bits_mask(in.type.bits); return nullptr;
    case Op::kSetp: {
      // p = (a cmp b) op c; q = !(a cmp b) op c (PTX ISA 9.7.7.1 setp)
      const bool r = compare(in, s[0], s[1]);
      bool p = r, q = !r;
      if (in.bool_op != BoolOp::kNone) {
        const bool c = ((s[2] & 1) != 0) != in.neg_src;
        const auto comb = [&](bool x) {
          return in.bool_op == BoolOp::kAnd ? x && c : in.bool_op == BoolOp::kOr ? x || c : x != c;
        };
        p = comb(r), q = comb(!r);
      }
      d[0] = p;
      d[1] = q;
      return nullptr;
    }
    case Op::kCvt: d[0] = convert(in, s[0]); return nullptr;
    case Op::kCvta: {
      const std::uint64_t window = in.space == Space::kShared  ? kSharedWindow
                                   : in.space == Space::kLocal ? kLocalWindow
                                   : in.space == Space::kParam ? kParamWindow
                                                               : 0;
      if (in.part != MulPart::kLo) {
        if (window != 0 && s[0] > kWindowMask) return "cvta: the address is not in its state space";
        d[0] = s[0] + window;
      } else {
        if (window != 0 && (s[0] & ~kWindowMask) != window)
          return "cvta.to: the generic address is not in that state space";
        d[0] = s[0] - window;
      }
      return nullptr;
    }
    default: break;
  }
  if (in.type.kind == Kind::kFloat) {
    d[0] = float_lanes(in, s);
    return nullptr;
  }
  return int_op(in, s, d);
}

}  // namespace bitproof::ptx

// ---- ConcretePolicy::select: loops over a warp's lanes, specialised for the instructions the
// hot loops of compiled kernels are made of; each computes exactly what alu() computes for the
// lane (tests/ptx compares both on every instruction of its fixtures: "select = alu").
namespace bitproof::ptx {
namespace {

static_assert(std::endian::native == std::endian::little, "the executor's memory is little-endian");

using Reg = ConcretePolicy::Value;

// fn(lane) for every lane of exec, lowest first.
template <class Fn>
inline void each_lane(std::uint32_t exec, Fn fn) {
  if (exec == 0xFFFFFFFFu) {
    for (int l = 0; l < kWarpLanes; ++l) fn(l);
  } else {
    for (std::uint32_t m = exec; m != 0; m &= m - 1) fn(std::countr_zero(m));
  }
}

inline Reg* slot(Reg* R, std::uint32_t s) { return R + std::size_t{s} * kWarpLanes; }

const char* generic_loop(ConcretePolicy&, const Inst& in, Reg* R, std::uint32_t exec, int* bad) {
  Reg s[5], d[4];
  for (std::uint32_t m = exec; m != 0; m &= m - 1) {
    const int l = std::countr_zero(m);
    for (int i = 0; i < in.nsrc; ++i) s[i] = R[std::size_t{in.src[i]} * kWarpLanes + static_cast<unsigned>(l)];
    if (const char* why = ConcretePolicy::alu(in, s, d)) return *bad = l, why;
    for (int i = 0; i < in.ndst; ++i) {
      if (in.dst[i] != kNoSlot) R[std::size_t{in.dst[i]} * kWarpLanes + static_cast<unsigned>(l)] = d[i];
    }
  }
  return nullptr;
}

// d = f(a, b) masked to the type's width, for every lane (a, b read before d is written per lane).
template <class F>
const char* binary_loop(const Inst& in, Reg* R, std::uint32_t exec, F f) {
  const Reg* a = slot(R, in.src[0]);
  const Reg* b = slot(R, in.src[1]);
  Reg* d = slot(R, in.dst[0]);
  each_lane(exec, [&](int l) { d[l] = f(a[l], b[l]); });
  return nullptr;
}

template <int W>
const char* add_loop(ConcretePolicy&, const Inst& in, Reg* R, std::uint32_t exec, int*) {
  return binary_loop(in, R, exec, [](Reg a, Reg b) { return (a + b) & bits_mask(W); });
}
template <int W>
const char* sub_loop(ConcretePolicy&, const Inst& in, Reg* R, std::uint32_t exec, int*) {
  return binary_loop(in, R, exec, [](Reg a, Reg b) { return (a - b) & bits_mask(W); });
}
template <int W>
const char* and_loop(ConcretePolicy&, const Inst& in, Reg* R, std::uint32_t exec, int*) {
  return binary_loop(in, R, exec, [](Reg a, Reg b) { return a & b & bits_mask(W); });
}
template <int W>
const char* or_loop(ConcretePolicy&, const Inst& in, Reg* R, std::uint32_t exec, int*) {
  return binary_loop(in, R, exec, [](Reg a, Reg b) { return (a | b) & bits_mask(W); });
}
template <int W>
const char* xor_loop(ConcretePolicy&, const Inst& in, Reg* R, std::uint32_t exec, int*) {
  return binary_loop(in, R, exec, [](Reg a, Reg b) { return (a ^ b) & bits_mask(W); });
}
const char* mul_lo32_loop(ConcretePolicy&, const Inst& in, Reg* R, std::uint32_t exec, int*) {
  return binary_loop(in, R, exec, [](Reg a, Reg b) { return (a * b) & 0xFFFFFFFFu; });
}
const char* mul_wide_u32_loop(ConcretePolicy&, const Inst& in, Reg* R, std::uint32_t exec, int*) {
  return binary_loop(in, R, exec, [](Reg a, Reg b) { return (a & 0xFFFFFFFFu) * (b & 0xFFFFFFFFu); });
}
const char* mul_wide_s32_loop(ConcretePolicy&, const Inst& in, Reg* R, std::uint32_t exec, int*) {
  return binary_loop(in, R, exec, [](Reg a, Reg b) {
    return static_cast<Reg>(static_cast<std::int64_t>(static_cast<std::int32_t>(a)) *
                            static_cast<std::int64_t>(static_cast<std::int32_t>(b)));
  });
}
const char* mad_lo32_loop(ConcretePolicy&, const Inst& in, Reg* R, std::uint32_t exec, int*) {
  const Reg* a = slot(R, in.src[0]);
  const Reg* b = slot(R, in.src[1]);
  const Reg* c = slot(R, in.src[2]);
  Reg* d = slot(R, in.dst[0]);
  each_lane(exec, [&](int l) { d[l] = (a[l] * b[l] + c[l]) & 0xFFFFFFFFu; });
  return nullptr;
}
template <int W>
const char* mov_loop(ConcretePolicy&, const Inst& in, Reg* R, std::uint32_t exec, int*) {
  const Reg* a = slot(R, in.src[0]);
  Reg* d = slot(R, in.dst[0]);
  each_lane(exec, [&](int l) { d[l] = a[l] & bits_mask(W); });
  return nullptr;
}

// setp on integers without .and/.or/.xor: the outcome table's bit (lt, eq, gt) is p, q = !p.
template <bool Signed, int W>
const char* setp_int_loop(ConcretePolicy&, const Inst& in, Reg* R, std::uint32_t exec, int*) {
  unsigned table = 0;  // bit 0: a < b, bit 1: a == b, bit 2: a > b
  switch (in.cmp) {
    case Cmp::kEq: table = 2; break;
    case Cmp::kNe: table = 5; break;
    case Cmp::kLt:
    case Cmp::kLo: table = 1; break;
    case Cmp::kLe:
    case Cmp::kLs: table = 3; break;
    case Cmp::kGt:
    case Cmp::kHi: table = 4; break;
    default: table = 6; break;  // kGe, kHs (select() admits no other)
  }
  const bool sgn = Signed && in.cmp != Cmp::kLo && in.cmp != Cmp::kLs && in.cmp != Cmp::kHi && in.cmp != Cmp::kHs;
  const Reg* a = slot(R, in.src[0]);
  const Reg* b = slot(R, in.src[1]);
  Reg* p = slot(R, in.dst[0]);
  Reg* q = in.ndst == 2 ? slot(R, in.dst[1]) : nullptr;
  each_lane(exec, [&](int l) {
    int idx = 0;
    if (sgn) {
      const std::int64_t x = sign_extend(a[l], W), y = sign_extend(b[l], W);
      idx = x < y ? 0 : x == y ? 1 : 2;
    } else {
      const Reg x = a[l] & bits_mask(W), y = b[l] & bits_mask(W);
      idx = x < y ? 0 : x == y ? 1 : 2;
    }
    const Reg r = (table >> idx) & 1;
    p[l] = r;
    if (q != nullptr) q[l] = r ^ 1;
  });
  return nullptr;
}

// cvt.f32.f16: every binary16's binary32 (exact; SoftArith::half2float), tabulated once.
const std::uint32_t* half_to_float_table() {
  static const std::vector<std::uint32_t> table = [] {
    std::vector<std::uint32_t> t(65536);
    for (std::uint32_t h = 0; h < 65536; ++h) t[h] = SoftArith::half2float(static_cast<std::uint16_t>(h));
    return t;
  }();
  return table.data();
}
const char* cvt_f32_f16_loop(ConcretePolicy&, const Inst& in, Reg* R, std::uint32_t exec, int*) {
  const std::uint32_t* t = half_to_float_table();
  const Reg* a = slot(R, in.src[0]);
  Reg* d = slot(R, in.dst[0]);
  each_lane(exec, [&](int l) { d[l] = t[a[l] & 0xFFFF]; });
  return nullptr;
}

// add/sub/mul/fma .rn.f32 without .ftz/.sat: one soft-float rounding (float_op's case).
const char* fma_rn_f32_loop(ConcretePolicy&, const Inst& in, Reg* R, std::uint32_t exec, int*) {
  const Reg* a = slot(R, in.src[0]);
  const Reg* b = slot(R, in.src[1]);
  const Reg* c = slot(R, in.src[2]);
  Reg* d = slot(R, in.dst[0]);
  each_lane(exec, [&](int l) {
    d[l] = soft::fma<soft::Binary32>(static_cast<std::uint32_t>(a[l]), static_cast<std::uint32_t>(b[l]),
                                     static_cast<std::uint32_t>(c[l]), Round::kNearestEven);
  });
  return nullptr;
}
const char* add_rn_f32_loop(ConcretePolicy&, const Inst& in, Reg* R, std::uint32_t exec, int*) {
  return binary_loop(in, R, exec, [](Reg a, Reg b) -> Reg {
    return soft::add<soft::Binary32>(static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b), Round::kNearestEven);
  });
}
const char* mul_rn_f32_loop(ConcretePolicy&, const Inst& in, Reg* R, std::uint32_t exec, int*) {
  return binary_loop(in, R, exec, [](Reg a, Reg b) -> Reg {
    return soft::mul<soft::Binary32>(static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b), Round::kNearestEven);
  });
}

// A width-templated loop for a 16-, 32- or 64-bit type; nullptr for another width.
#define BP_BY_WIDTH(loop, bits) \
  ((bits) == 16   ? &loop<16>   \
   : (bits) == 32 ? &loop<32>   \
   : (bits) == 64 ? &loop<64>   \
                  : static_cast<ConcretePolicy::LaneLoop>(nullptr))

ConcretePolicy::LaneLoop special(const Inst& in) {
  const Type& t = in.type;
  const bool integer = t.kind == Kind::kBits || t.kind == Kind::kUnsigned || t.kind == Kind::kSigned;
  const bool plain_float = t.kind == Kind::kFloat && t.bits == 32 && !t.x2 && in.rnd == Rnd::kRn && !in.ftz && !in.sat;
  switch (in.op) {
    case Op::kMov: return integer || t.kind == Kind::kFloat ? BP_BY_WIDTH(mov_loop, t.bits) : nullptr;
    case Op::kAdd:
      if (plain_float) return &add_rn_f32_loop;
      return integer ? BP_BY_WIDTH(add_loop, t.bits) : nullptr;
    case Op::kSub: return integer ? BP_BY_WIDTH(sub_loop, t.bits) : nullptr;
    case Op::kAnd: return integer ? BP_BY_WIDTH(and_loop, t.bits) : nullptr;
    case Op::kOr: return integer ? BP_BY_WIDTH(or_loop, t.bits) : nullptr;
    case Op::kXor: return integer ? BP_BY_WIDTH(xor_loop, t.bits) : nullptr;
    case Op::kMul:
      if (plain_float) return &mul_rn_f32_loop;
      if (!integer || t.bits != 32) return nullptr;
      if (in.part == MulPart::kLo) return &mul_lo32_loop;
      if (in.part == MulPart::kWide) return t.kind == Kind::kSigned ? &mul_wide_s32_loop : &mul_wide_u32_loop;
      return nullptr;
    case Op::kMad: return integer && t.bits == 32 && in.part == MulPart::kLo ? &mad_lo32_loop : nullptr;
    case Op::kFma: return plain_float ? &fma_rn_f32_loop : nullptr;
    case Op::kSetp:
      if (!integer || in.bool_op != BoolOp::kNone || in.cmp > Cmp::kHs) return nullptr;
      if (t.bits == 32) return t.kind == Kind::kSigned ? &setp_int_loop<true, 32> : &setp_int_loop<false, 32>;
      if (t.bits == 64) return t.kind == Kind::kSigned ? &setp_int_loop<true, 64> : &setp_int_loop<false, 64>;
      return nullptr;
    case Op::kCvt:
      return t.kind == Kind::kFloat && t.bits == 32 && !t.x2 && in.src_type.kind == Kind::kFloat &&
                     in.src_type.bits == 16 && !in.src_type.bf && !in.src_type.x2
                 ? &cvt_f32_f16_loop
                 : nullptr;
    default: return nullptr;
  }
}
#undef BP_BY_WIDTH

}  // namespace

// Memory and control instructions have no loop (the executor runs them); ALU ones a special
// loop where one exists, else alu() lane by lane.
ConcretePolicy::LaneLoop ConcretePolicy::select(const Inst& in) {
  if (executor_runs(in.op)) return nullptr;
  if (LaneLoop f = special(in)) return f;
  return &generic_loop;
}

}  // namespace bitproof::ptx
