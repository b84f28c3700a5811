// The concrete value policy of the PTX executor: a register holds its bits (zero-extended to
// 64), and every ALU instruction computes its exact result, floating point through the soft
// IEEE model of src/arith (the same arithmetic as the CPU backend).
//
// A value policy is what the executor (exec.cpp) asks for everything a value is: the executor
// owns control flow, memory, warps, shuffles and votes; the policy owns
//   Value                               what a register holds
//   constant(bits) -> Value             an immediate, a special register, an address
//   concrete(const Value&) -> optional  the bits, where control flow or an address needs them
//                                       (a symbolic policy answers nullopt for a data value:
//                                       the executor then refuses "not provable by tracing")
//   alu(inst, srcs, dsts) -> reason     one thread's ALU instruction; nullptr or why it is undefined
//   load(where, bytes, size, sign)      a memory element to a value and back; `where` says which
//   store(where, bytes, size, value)    buffer and byte offset the executor resolved (bounds-
//                                       checked) the access to, `bytes` its concrete bytes
//   block_start(shared, local)          a block starts: shared and local memory (bytes per
//                                       thread) are zero again
//   select(inst) -> LaneLoop            the loop running an ALU instruction over a warp's lanes
//                                       (policy: the instance; R: the warp's registers, slot * 32
//                                       + lane; exec: the lanes); nullptr or why, with the lane in
//                                       *bad. Chosen once per instruction at launch: the same
//                                       results as alu() on each lane (a policy may return
//                                       alu()'s loop for all)
// The executor holds one policy *instance* (its state: the symbolic policy's node table and
// shadow memory) and passes it to every loop, load and store; the concrete policy has no state,
// and its members inline to what the executor did before it had one. The symbolic policy
// (symbolic.hpp, issue 48) is a second implementation of these, over nodes; it also answers
// window()/lookup() (a load at a data-dependent address from a fixed table) and select_value()
// (if-conversion of a guard or short forward branch on a node), which the executor asks only of a
// policy that has them.
//
// NaN rule (the hardware's, as SoftArith states it, measured on an H200): every f32
// add/sub/mul/fma/div/sqrt whose result is NaN returns the canonical 0x7FFFFFFF, every f16/bf16
// one 0x7FFF / 0x7FFF; min/max return the non-NaN operand when one is NaN and the canonical NaN
// when both are (PTX ISA 8.x, §9.7.3.10-11 min/max; §9.7.3 leaves other NaN payloads to the
// implementation, so tests/gpu checks the rule); neg/abs act on the sign bit only.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "ptx/module.hpp"

namespace bitproof::ptx {

// Where a load or store lands, as the executor resolved it: argument buffer `index`, module
// .global/.const variable `index`, the block's shared memory, the local memory of thread
// `index` of the block (warp * 32 + lane), or the parameters; `offset` is the byte offset in it.
enum class Area : std::uint8_t { kBuffer, kGlobalVar, kShared, kLocal, kParam };
struct Where {
  Area area = Area::kBuffer;
  std::uint32_t index = 0;
  std::uint64_t offset = 0;
};

struct ConcretePolicy {
  using Value = std::uint64_t;
  static Value constant(std::uint64_t bits) { return bits; }
  static std::optional<std::uint64_t> concrete(Value v) { return v; }
  // One thread's result of an ALU instruction (every Op but ld/st/bra/exit/bar/shfl/vote/
  // warpsync) from its source values s[0..nsrc) into d[0..ndst). nullptr, or why the
  // result is undefined (integer division by zero, cvta outside the window).
  static const char* alu(const Inst& in, const Value* s, Value* d);
  using LaneLoop = const char* (*)(ConcretePolicy& policy, const Inst& in, Value* R, std::uint32_t exec, int* bad);
  static LaneLoop select(const Inst& in);
  // An mma over the warp's registers (exec.cpp, Runner::mma: srcs and dsts lane-major): the
  // tensor cores' accumulation is not computed here, so always the reason (kGpuOnly's words).
  static std::optional<std::string> mma(const Inst& in, const Value*, Value*) { return mma_gpu_only(in.mode); }
  // The executor's memory hooks: the bytes alone decide (no state), so the executor's fast path
  // does not compute where an access lands (kLocates: a policy that reads `where` sets it).
  static constexpr bool kLocates = false;
  Value load(const Where&, const std::uint8_t* p, unsigned size, bool sign_extend) const {
    return load(p, size, sign_extend);
  }
  void store(const Where&, std::uint8_t* p, unsigned size, Value v) const { store(p, size, v); }
  void block_start(std::size_t /*shared_bytes*/, std::size_t /*local_bytes_per_thread*/) const {}
  // `pieces` pieces of `size` bytes each, from scattered places, as one value (the first piece
  // lowest): ldmatrix.trans's two halves (exec.cpp).
  Value load_pieces(const Where*, const std::uint8_t* const* p, unsigned pieces, unsigned size) const {
    Value v = 0;
    for (unsigned j = 0; j < pieces; ++j) v |= load(p[j], size, false) << (8 * size * j);
    return v;
  }
  // Little-endian bytes (the host's order is checked by a static_assert in concrete.cpp).
  static Value load(const std::uint8_t* p, unsigned size, bool sign_extend) {
    std::uint64_t v = 0;
    switch (size) {  // fixed-size copies (a variable one is a library call)
      case 1: v = *p; break;
      case 2: v = copy<std::uint16_t>(p); break;
      case 4: v = copy<std::uint32_t>(p); break;
      default: v = copy<std::uint64_t>(p); break;
    }
    if (sign_extend && size < 8 && (v >> (8 * size - 1) & 1) != 0) v |= ~std::uint64_t{0} << (8 * size);
    return v;
  }
  static void store(std::uint8_t* p, unsigned size, Value v) {
    switch (size) {
      case 1: *p = static_cast<std::uint8_t>(v); break;
      case 2: put(p, static_cast<std::uint16_t>(v)); break;
      case 4: put(p, static_cast<std::uint32_t>(v)); break;
      default: put(p, v); break;
    }
  }

 private:
  template <class T>
  static T copy(const std::uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  template <class T>
  static void put(std::uint8_t* p, T v) {
    std::memcpy(p, &v, sizeof v);
  }
};

}  // namespace bitproof::ptx
