// A PTX module decoded for execution (docs/ptx-executor.md): what parse_module makes of the
// text nvcc -ptx / NVRTC emit, as a flat, pre-decoded instruction stream per kernel.
//
// Contract: every instruction of a Kernel is one the executor implements; anything else was
// refused by parse_module with its PTX line. Operands are register slots: immediates, symbol
// addresses and special registers (%tid.x, ...) are given slots of their own that the executor
// fills before the first instruction, so an instruction reads and writes only slots.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bitproof::ptx {

enum class Op : std::uint8_t {
  kMov,
  kAdd,
  kSub,
  kMul,
  kMad,
  kFma,
  kDiv,
  kRem,
  kNeg,
  kAbs,
  kMin,
  kMax,
  kShl,
  kShr,
  kAnd,
  kOr,
  kXor,
  kNot,
  kSelp,
  kSetp,
  kCvt,
  kCvta,
  kRcp,
  kSqrt,
  kLd,
  kSt,
  kBra,
  kExit,
  kBar,
  kShfl,
  kVote,
  kPack,
  kUnpack,    // mov.bN d, {a, b} and mov.bN {a, b}, s: vector moves, lowest element first
  kWarpSync,  // bar.warp.sync mask: every lane of the mask converged here
  // Bit manipulation (PTX ISA 9.7.1.x): prmt's mode, shf's direction and clamp in Inst::mode.
  kPrmt,
  kBfe,
  kBfi,
  kPopc,
  kClz,
  kBrev,
  kLop3,
  kShf,
  kCvtPack,  // cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32 d, a, b: a to the upper half, b to the lower
  kApprox,   // an approximate instruction (ex2.approx.f32, div.full.f32, ...): Inst::mode is its Approx
  // stmatrix.sync.aligned.m8n8.{x1,x2,x4}.shared.b16 [a], {r0, ..} (PTX ISA 9.7.14.5.16, "stmatrix";
  // Triton's layout conversions on sm_90): the warp stores `vec` 8x8 matrices of 16-bit elements
  // to shared memory. Matrix m's row r starts at lane 8m + r's address (16-byte aligned); its
  // elements 2k and 2k + 1 are the low and high halves of lane 4r + k's register r_m, i.e. that
  // register's 4 bytes at row + 4k. All 32 lanes issue it together (.aligned). Not .trans.
  kStmatrix,
  // ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16 {r0, ..}, [a] (PTX ISA 9.7.14.5.15,
  // "ldmatrix"; the fragments of mma): the warp loads `vec` 8x8 matrices of 16-bit elements from
  // shared memory. Matrix m's row i starts at lane 8m + i's address (16-byte aligned). Without
  // .trans, lane 4i + k's register r_m gets row i's elements 2k and 2k + 1 (its 4 bytes at row + 4k:
  // stmatrix's inverse); with .trans (Inst::mode 1), lane 4j + k's r_m gets column j's elements of
  // rows 2k (low half) and 2k + 1 (high half). All 32 lanes issue it together (.aligned).
  kLdmatrix,
  // mma.sync.aligned.<form> {d..}, {a..}, {b..}, {c..} (PTX ISA 9.7.14.5.14, "mma"): the warp's
  // tensor-core product D = A x B + C over fragments spread across its 32 lanes (Inst::mode: the
  // form's index in kMmaForms; Inst::list: its registers in Kernel::lists). Opaque: the PTX ISA
  // gives no rounding order for the accumulation, so the executor never computes it (the concrete
  // policy refuses it, "runs on the GPU only"), and the proof makes each lane's result register a
  // node over every lane's A, B and C registers (docs/ptx-proof.md, "Opaque instructions").
  kMma,
};
// The instructions the executor runs itself (memory, control flow, barriers, warp collectives);
// a value policy computes every other one (concrete.hpp: its ALU lane loops).
constexpr bool executor_runs(Op op) {
  switch (op) {
    case Op::kLd:
    case Op::kSt:
    case Op::kBra:
    case Op::kExit:
    case Op::kBar:
    case Op::kShfl:
    case Op::kVote:
    case Op::kWarpSync:
    case Op::kStmatrix:
    case Op::kLdmatrix:
    case Op::kMma: return true;
    default: return false;
  }
}
// Op::kApprox's forms (Inst::mode): PTX ISA 9.7.3, floating-point instructions (rcp.approx,
// sqrt.approx, rsqrt.approx, sin.approx, cos.approx, lg2.approx, ex2.approx, tanh.approx on f32;
// div.approx and div.full on f32), and 9.7.4, half-precision instructions (ex2.approx.f16/.f16x2,
// ex2.approx.ftz.bf16/.bf16x2, tanh.approx.f16/.f16x2/.bf16/.bf16x2). Inst::type and Inst::ftz are
// kept as written. Card: their bits are defined by the hardware, not by IEEE (the ISA gives an
// error bound, not a result), so the executor never computes them: the concrete policy refuses
// one where it runs ("runs on the GPU only"), and the proof makes it an opaque node
// (docs/ptx-proof.md, "Opaque instructions"): the hardware is deterministic, so the same form on
// the same operand bits gives the same bits.
enum class Approx : std::uint8_t { kEx2, kLg2, kRcp, kRsqrt, kSqrt, kSin, kCos, kTanh, kDiv, kDivFull };
// The form's mnemonic up to the type: "ex2.approx", "div.full".
constexpr const char* approx_name(Approx a) {
  switch (a) {
    case Approx::kEx2: return "ex2.approx";
    case Approx::kLg2: return "lg2.approx";
    case Approx::kRcp: return "rcp.approx";
    case Approx::kRsqrt: return "rsqrt.approx";
    case Approx::kSqrt: return "sqrt.approx";
    case Approx::kSin: return "sin.approx";
    case Approx::kCos: return "cos.approx";
    case Approx::kTanh: return "tanh.approx";
    case Approx::kDiv: return "div.approx";
    case Approx::kDivFull: return "div.full";
  }
  return "approx";
}

// The words ending the concrete policy's reason for an opaque instruction that runs (an
// Op::kApprox: "ex2.approx.f32: approximate, runs on the GPU only"; an Op::kMma: "mma.sync...:
// tensor-core accumulation, runs on the GPU only"): a caller that may go on without the concrete
// result (ab --prove's cases) recognises the executor's Error by them.
inline constexpr std::string_view kGpuOnly = "runs on the GPU only";

// The mma forms the executor decodes (Op::kMma; PTX ISA 9.7.14.5.14, "Matrix shape" and the
// fragment layouts of 9.7.14.5.8-12): the text after "mma.sync.aligned.", and how many 32-bit
// registers each lane gives for A, B, C and takes for D (16x8xK: A is 16xK, B Kx8, C and D 16x8,
// spread over 32 lanes; f16 and bf16 pack two to a register, s8 and e4m3 four). Only .row.col
// (the one layout these shapes have) and 32-bit registers; f64, sparse and block-scaled forms are
// refused at parse time. Any two lanes' results depend on every lane's fragments, so the proof's
// node is over all of them (graph.hpp, Graph::opaque_group).
struct MmaForm {
  std::string_view name;
  std::uint8_t a, b, c, d;
};
inline constexpr MmaForm kMmaForms[] = {
    {"m16n8k8.row.col.f32.f16.f16.f32", 2, 1, 4, 4},          {"m16n8k8.row.col.f16.f16.f16.f16", 2, 1, 2, 2},
    {"m16n8k8.row.col.f32.bf16.bf16.f32", 2, 1, 4, 4},        {"m16n8k8.row.col.f32.tf32.tf32.f32", 4, 2, 4, 4},
    {"m16n8k16.row.col.f32.f16.f16.f32", 4, 2, 4, 4},         {"m16n8k16.row.col.f16.f16.f16.f16", 4, 2, 2, 2},
    {"m16n8k16.row.col.f32.bf16.bf16.f32", 4, 2, 4, 4},       {"m16n8k32.row.col.s32.s8.s8.s32", 4, 2, 4, 4},
    {"m16n8k32.row.col.satfinite.s32.s8.s8.s32", 4, 2, 4, 4}, {"m16n8k32.row.col.f32.e4m3.e4m3.f32", 4, 2, 4, 4},
    {"m16n8k32.row.col.f32.e5m2.e5m2.f32", 4, 2, 4, 4},
};
// "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32": form `index`'s mnemonic.
inline std::string mma_name(std::size_t index) {
  return "mma.sync.aligned." + std::string(index < std::size(kMmaForms) ? kMmaForms[index].name : "?");
}
// Why an mma of form `index` has no value off the GPU (the executor's Error, Graph::evaluate's).
inline std::string mma_gpu_only(std::size_t index) {
  return mma_name(index) + ": tensor-core accumulation, " + std::string(kGpuOnly);
}

// The bits of result `i` of an ALU instruction (op, type, mul part, vector count): what
// ConcretePolicy::alu leaves in d[i] fits in them (1 for setp's predicates, the element for unpack,
// twice the type for .wide, 64 for cvta, else the type's bits).
constexpr std::uint8_t result_bits(Op op, std::uint8_t type_bits, bool wide, std::uint8_t vec,
                                   bool signed_type = false) {
  switch (op) {
    case Op::kCvt:  // a signed integer result is sign-extended to the register (concrete.cpp, convert)
      return signed_type ? 64 : type_bits;
    case Op::kSetp: return 1;
    case Op::kUnpack: return static_cast<std::uint8_t>(type_bits / (vec == 0 ? 1 : vec));
    case Op::kMul:
    case Op::kMad:
      if (wide) return static_cast<std::uint8_t>(2 * type_bits);
      break;
    case Op::kCvta: return 64;
    default: break;
  }
  return type_bits;
}
// prmt's modes (Inst::mode); shf's: bit 0 set for .r, bit 1 set for .clamp.
enum class PrmtMode : std::uint8_t { kDefault, kF4e, kB4e, kRc8, kEcl, kEcr, kRc16 };

// Scalar types; Kind says how the bits are read.
enum class Kind : std::uint8_t { kBits, kUnsigned, kSigned, kFloat, kPred };
struct Type {
  Kind kind = Kind::kBits;
  std::uint8_t bits = 0;  // 1 for .pred; 16 for f16, bf16; 32 for f16x2
  bool x2 = false;        // f16x2 / bf16x2: two 16-bit lanes
  bool bf = false;        // bfloat16 (bf16, bf16x2)
  bool operator==(const Type&) const = default;
};

enum class Space : std::uint8_t { kGeneric, kGlobal, kShared, kLocal, kParam, kConst };
enum class Rnd : std::uint8_t { kNone, kRn, kRz, kRni, kRzi };
enum class Cmp : std::uint8_t {
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kLo,
  kLs,
  kHi,
  kHs,
  kEqu,
  kNeu,
  kLtu,
  kLeu,
  kGtu,
  kGeu,
  kNum,
  kNan,
};
enum class BoolOp : std::uint8_t { kNone, kAnd, kOr, kXor };
enum class ShflMode : std::uint8_t { kUp, kDown, kBfly, kIdx };
enum class VoteMode : std::uint8_t { kAll, kAny, kUni, kBallot };
enum class MulPart : std::uint8_t { kNone, kLo, kHi, kWide };

inline constexpr std::uint32_t kNoSlot = 0xFFFFFFFFu;
inline constexpr int kWarpLanes = 32;  // the lanes of a warp: a register slot's values are kWarpLanes apart

// One decoded instruction. Slots index the executor's flat per-thread register arrays.
struct Inst {
  Op op = Op::kMov;
  Type type;      // the instruction type (the destination's for cvt)
  Type src_type;  // cvt's source type; setp's compared type is `type`
  Space space = Space::kGeneric;
  Rnd rnd = Rnd::kNone;
  Cmp cmp = Cmp::kEq;
  BoolOp bool_op = BoolOp::kNone;
  MulPart part = MulPart::kNone;
  ShflMode shfl = ShflMode::kIdx;
  VoteMode vote = VoteMode::kAll;
  bool ftz = false, sat = false, neg_guard = false, neg_src = false;  // neg_src: vote's !%p
  std::uint8_t mode = 0;  // prmt's PrmtMode; shf's direction/clamp; kApprox's Approx
  std::uint8_t vec = 1;   // ld/st .v2/.v4, pack/unpack element count
  std::uint8_t ndst = 0, nsrc = 0;
  std::uint32_t guard = kNoSlot;  // @%p / @!%p
  std::uint32_t dst[4] = {kNoSlot, kNoSlot, kNoSlot, kNoSlot};
  std::uint32_t src[5] = {kNoSlot, kNoSlot, kNoSlot, kNoSlot, kNoSlot};  // st.v4: the address and 4 values
  std::int64_t offset = 0;   // ld/st: [src[0] + offset] (src[0] kNoSlot: absolute)
  std::uint32_t target = 0;  // bra: instruction index
  std::uint32_t line = 0;    // the PTX line, for every message
  std::uint32_t list = 0;    // mma: its registers' first index in Kernel::lists (d, a, b, c in order)
};

// Where a slot's initial value comes from before a warp starts.
enum class SlotInit : std::uint8_t { kZero, kConst, kTid, kNtid, kCtaid, kNctaid, kLaneId, kWarpId };
struct SlotSource {
  SlotInit init = SlotInit::kZero;
  std::uint8_t dim = 0;  // x, y, z
  std::uint64_t value = 0;
};

struct Param {
  std::string name;
  std::uint32_t offset = 0, size = 0;  // in the parameter image
  bool pointer_sized = false;          // .u64/.b64/.s64: may carry a buffer
  bool is_float = false;               // .f16/.f32/.f64: a float scalar (nvcc's `float x`)
};

// A .global/.const variable of the module: its bytes (initialiser or zeros).
struct GlobalVar {
  std::string name;
  std::vector<std::uint8_t> bytes;
};

struct Kernel {
  std::string name;
  std::vector<Param> params;
  std::uint32_t param_bytes = 0;
  std::uint32_t static_shared = 0;  // bytes of .shared variables; dynamic shared starts here
  std::uint32_t local_bytes = 0;    // per thread
  std::vector<SlotSource> slots;
  std::vector<Inst> code;
  std::vector<std::uint32_t> lists;  // register slots of instructions with more than Inst holds (mma)
  // Lines of add/sub/mul.f32/.f16 without a rounding modifier: ptxas may contract such an
  // instruction with a neighbour into an fma (PTX ISA 9.7.3.1/9.7.4.1), which the executor does
  // not model; a caller proving equality must decide whether to accept them.
  std::vector<std::uint32_t> contractible_lines;
};

struct Module {
  std::string name;  // the file name every message starts with
  std::vector<Kernel> kernels;
  std::vector<GlobalVar> globals;
};

}  // namespace bitproof::ptx
