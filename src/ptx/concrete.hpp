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
//   load(bytes, size, sign) / store     a memory element to a value and back
// so the symbolic policy (issue 48) is a second implementation of these, over nodes.
//
// NaN rule (the hardware's, as SoftArith states it, measured on an H200): every f32
// add/sub/mul/fma/div/sqrt whose result is NaN returns the canonical 0x7FFFFFFF, every f16/bf16
// one 0x7FFF / 0x7FFF; min/max return the non-NaN operand when one is NaN and the canonical NaN
// when both are (PTX ISA 8.x, §9.7.3.10-11 min/max; §9.7.3 leaves other NaN payloads to the
// implementation, so tests/gpu checks the rule); neg/abs act on the sign bit only.
#pragma once

#include <cstdint>
#include <optional>

#include "ptx/module.hpp"

namespace bitproof::ptx {

struct ConcretePolicy {
  using Value = std::uint64_t;
  static Value constant(std::uint64_t bits) { return bits; }
  static std::optional<std::uint64_t> concrete(Value v) { return v; }
  // One thread's result of an ALU instruction (every Op but ld/st/bra/exit/bar/shfl/vote/
  // warpsync) from its source values s[0..nsrc) into d[0..ndst). nullptr, or why the
  // result is undefined (integer division by zero, cvta outside the window).
  static const char* alu(const Inst& in, const Value* s, Value* d);
  static Value load(const std::uint8_t* p, unsigned size, bool sign_extend) {
    std::uint64_t v = 0;
    for (unsigned i = 0; i < size; ++i) v |= std::uint64_t{p[i]} << (8 * i);
    if (sign_extend && size < 8 && (v >> (8 * size - 1) & 1) != 0) v |= ~std::uint64_t{0} << (8 * size);
    return v;
  }
  static void store(std::uint8_t* p, unsigned size, Value v) {
    for (unsigned i = 0; i < size; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
  }
};

}  // namespace bitproof::ptx
