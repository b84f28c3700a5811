// ConcretePolicy::alu: the exact result of each ALU instruction (src/ptx/concrete.hpp).
#include "ptx/concrete.hpp"

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

std::uint64_t convert(const Inst& in, std::uint64_t v) {
  const Type& d = in.type;
  const Type& s = in.src_type;
  const bool df = d.kind == Kind::kFloat, sf = s.kind == Kind::kFloat;
  const auto h = static_cast<std::uint16_t>(v & 0xFFFF);
  const auto f = static_cast<std::uint32_t>(v);
  if (df && sf) {
    if (d.bits == 32) return s.bf ? SoftArith::bfloat162float(h) : SoftArith::half2float(h);
    if (d.bf) return SoftArith::float2bfloat16_rn(f);
    return in.rnd == Rnd::kRz ? SoftArith::float2half_rz(f) : SoftArith::float2half_rn(f);
  }
  if (df) return d.bits == 32 ? int_to_float<soft::Binary32>(in, v) : int_to_float<soft::Binary16>(in, v);
  if (sf) return s.bits == 32 ? float_to_int<soft::Binary32>(in, f) : float_to_int<soft::Binary16>(in, h);
  const std::uint64_t x =
      s.kind == Kind::kSigned ? static_cast<std::uint64_t>(sign_extend(v, s.bits)) : v & bits_mask(s.bits);
  return x & bits_mask(d.bits);
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

}  // namespace

const char* ConcretePolicy::alu(const Inst& in, const Value* s, Value* d) {
  switch (in.op) {
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
