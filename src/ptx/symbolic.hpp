// The symbolic value policy of the PTX executor (issue 48; docs/ptx-executor.md, "The symbolic
// policy"): the executor runs a kernel on tensor data it does not know, and each value derived
// from that data becomes a node of a sym::Graph (graph.hpp), hash-consed into one table for both
// arms of a proof.
//
//   sym::Graph g;
//   const auto x = g.add_tensor({"x", 4096, 16});                  // leaves x[0..4095]
//   SymMemory mem;
//   const auto bx = mem.add_input(g, x), by = mem.add_plain(std::vector<std::uint8_t>(2 * n, 0xFF));
//   Expected<LaunchResult> r = trace_launch(module, kernel, config, args, mem, g, /*arm=*/0);
//   sym::NodeId y0 = mem.element(g, by, 0, 2);                      // output element 0's node
//
// Contracts:
// - A value is concrete (its bits) or a node. Values from the launch (indices, sizes,
//   parameters, loop counters, addresses, every byte of a plain buffer) stay concrete; an ALU
//   instruction whose sources are all concrete is computed by ConcretePolicy::alu (constant
//   folding), except an approximate one (Op::kApprox: the executor cannot compute it), which is
//   always a node; any other makes a node through Graph::inst (concrete sources as Graph::constant,
//   masked to the operand's width, which ConcretePolicy::alu reads no more of). A move of a node
//   (mov, selp on a concrete predicate, cvta of the global window) is the node itself.
// - Control flow, guards, addresses, shuffle lanes and member masks must be concrete: the
//   executor refuses a node there with the PTX line, "not provable by tracing" (exit 2).
//   If-conversion (docs/ptx-proof.md): a guard that is a node on an ALU instruction, and a
//   forward branch on a node over ALU instructions only (a hammock, or an if/else diamond closed
//   by an unguarded `bra END`), run both sides and merge each register write with
//   select_value (a selp node over the predicate); a loop, a store, a load, an exit or a
//   collective under such a condition stays refused. The other exception, a table lookup: a
//   load whose address is a node, from an argument buffer that is plain and all-concrete or a
//   module variable that is unwritten, whose window the address's add chain names by a constant
//   (SymbolicPolicy::window), is a kLoad node over a snapshot of that buffer's bytes; the buffer
//   must not be written after that in the launch (an Error).
// - Shadow memory: every byte of every buffer is concrete (its byte in the executor's buffer),
//   an input's original byte (byte j of leaf e: element e = offset / element bytes), or byte j
//   of a node (a stored value). A load returns the bits if all its bytes are concrete, the node
//   if they are bytes 0..size-1 of one node that wide, else a concat (low first) of extracts and
//   constants. A store of a node narrower than the access stores its zero extension (the
//   register's bits). Tags are kept only where something was written: an input nobody writes
//   costs no shadow bytes (its leaves are computed from the offset).
// - Each node an instruction makes is recorded with its PTX line (Graph::note_origin, per arm).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "error.hpp"
#include "ptx/concrete.hpp"
#include "ptx/graph.hpp"
#include "ptx/ptx.hpp"

namespace bitproof::ptx {

// What a register holds: concrete `bits` (node == kNoNode) or a node of the graph.
struct SymValue {
  std::uint64_t bits = 0;
  sym::NodeId node = sym::kNoNode;
};

// One byte of shadow memory: concrete (node kNoNode: the buffer's byte), an input's original
// byte (node kOriginal), or byte `byte` of node `node`'s bits (zero-extended to whole bytes).
struct ShadowByte {
  sym::NodeId node = sym::kNoNode;
  std::uint8_t byte = 0;
};
inline constexpr sym::NodeId kOriginal = 0xFFFFFFFEu;

// The buffers of one arm's launches: inputs (leaves) and plain buffers (concrete bytes, and the
// nodes launches store). Several launches in a row share it: what one stage writes, the next
// reads as nodes.
class SymMemory {
 public:
  // Input tensor `tensor` of the graph (element_bits a multiple of 8): its elements are leaves.
  // Error: a tensor whose elements are not whole bytes.
  Expected<std::size_t> add_input(const sym::Graph& graph, std::uint32_t tensor);
  // Tensors joined into one buffer, one after another (a fused kernel's weight): each byte is
  // its tensor's leaf's. Error: none, elements not whole bytes, or of different widths.
  Expected<std::size_t> add_joined(const sym::Graph& graph, const std::vector<std::uint32_t>& tensors);
  // A buffer of known bytes (an output's fill, scratch, a lookup table).
  std::size_t add_plain(std::vector<std::uint8_t> bytes);

  // The node of the `size` bytes at `offset` of buffer i (an output element after the launches):
  // a constant node where they are concrete. Error: outside the buffer.
  Expected<sym::NodeId> element(sym::Graph& graph, std::size_t buffer, std::uint64_t offset, unsigned size);

  Memory& memory() { return memory_; }
  [[nodiscard]] std::size_t size() const { return buffers_.size(); }

  struct Segment {
    std::uint64_t begin = 0;  // the tensor's first byte in the buffer
    std::uint32_t tensor = 0;
  };
  struct Buffer {
    bool input = false;
    std::vector<Segment> segments;   // inputs: the tensors, ascending
    std::uint8_t element_bytes = 1;  // inputs
    std::vector<ShadowByte> tags;    // empty: never written (all original)
    // The leaf of an input's byte `offset` and the byte's index in it.
    [[nodiscard]] std::pair<std::uint32_t, std::uint64_t> element_at(std::uint64_t offset) const;
  };
  Buffer& buffer(std::size_t i) { return buffers_.at(i); }

 private:
  Memory memory_;
  std::vector<Buffer> buffers_;
};

class SymbolicPolicy {
 public:
  using Value = SymValue;
  SymbolicPolicy(sym::Graph& graph, SymMemory& memory, const Module& module, int arm);

  static constexpr bool kLocates = true;  // load/store read `where` (shadow memory)
  static Value constant(std::uint64_t bits) { return {bits, sym::kNoNode}; }
  static std::optional<std::uint64_t> concrete(const Value& v) {
    if (v.node != sym::kNoNode) return std::nullopt;
    return v.bits;
  }
  // One thread's ALU instruction (ConcretePolicy::alu's contract) over values.
  const char* alu(const Inst& in, const Value* s, Value* d);
  using LaneLoop = const char* (*)(SymbolicPolicy& policy, const Inst& in, Value* R, std::uint32_t exec, int* bad);
  static LaneLoop select(const Inst& in);
  // An mma over the warp's registers (exec.cpp, Runner::mma: srcs and dsts lane-major): each lane's
  // D registers become opaque nodes over every lane's A, B and C (Graph::opaque_group), each
  // operand taken as the register's 32 bits; never folded, even on constants. Always nullopt.
  std::optional<std::string> mma(const Inst& in, const Value* srcs, Value* dsts);

  // If-conversion (the executor asks this of a policy that has it; exec.cpp, Runner::guarded):
  // the register's value after an ALU instruction that ran under a data-dependent condition,
  // `if_true` where (guard's bit 0) != negate, else `if_false` (the register before). A concrete
  // guard picks one; equal values are that value; otherwise a selp node over the guard node, at
  // least `width` bits (the instruction's result bits) and wide enough for both values (a
  // concrete value past `width` bits makes it 64), recorded with `line`.
  Value select_value(const Value& guard, bool negate, const Value& if_true, const Value& if_false, unsigned width,
                     std::uint32_t line);

  Value load(const Where& at, const std::uint8_t* p, unsigned size, bool sign_extend);
  // `pieces` pieces of `size` bytes from scattered places as one value, first piece lowest: what
  // load() would give if they lay one after another (the same concat of the same sources).
  Value load_pieces(const Where* at, const std::uint8_t* const* p, unsigned pieces, unsigned size);
  void store(const Where& at, std::uint8_t* p, unsigned size, const Value& v);
  void block_start(std::size_t shared_bytes, std::size_t local_bytes_per_thread);

  // The address window (address >> 40) a node address lies in, named by a constant of its add
  // chain; nullopt if none or two disagree.
  [[nodiscard]] std::optional<std::uint64_t> window(const Value& address) const;
  // A load of `size` bytes at `address` + `offset` from the buffer `at` names (its bytes at
  // base_address): a kLoad node over their snapshot. Error: the buffer is an input or was written.
  Expected<Value> lookup(const Where& at, const std::vector<std::uint8_t>& bytes, std::uint64_t base_address,
                         const Value& address, std::uint64_t offset, unsigned size, bool sign_extend,
                         std::uint32_t line);

  // Set when a store hit a buffer read as a table earlier in the launch (the launch's Error).
  [[nodiscard]] const std::optional<std::string>& error() const { return error_; }

 private:
  std::vector<ShadowByte>* tags_for(const Where& at, bool create);
  const SymMemory::Buffer* input_at(const Where& at);          // the input buffer `at` lies in, or nullptr
  [[nodiscard]] std::size_t shadow_at(const Where& at) const;  // `at`'s index in its shadow bytes
  sym::NodeId node_of(const Value& v, std::uint8_t width);
  Value finish_load(sym::NodeId n, unsigned size, bool sign_extend);

  sym::Graph& graph_;
  SymMemory& memory_;
  const Module& module_;
  int arm_ = 0;
  std::vector<ShadowByte> shared_, local_;  // local_: thread * local_bytes_ + offset
  std::size_t local_bytes_ = 0;
  bool shared_dirty_ = false, local_dirty_ = false;
  std::vector<std::vector<ShadowByte>> vars_;  // module variables written in this launch
  // Per module variable / argument buffer read as a table in this launch: the snapshot, and
  // the line of the first such read (a later store is an Error).
  struct Table {
    std::optional<std::uint32_t> snapshot;
    std::uint32_t line = 0;
  };
  std::vector<Table> var_tables_, buffer_tables_;
  std::optional<std::string> error_;
  // Memos in front of the graph's table (speed only: Graph::inst and Graph::leaf are pure
  // functions of their arguments on an append-only table, so a hit returns what the call would):
  // direct-mapped, small enough to stay in cache, for the values every row of a GEMV reloads and
  // converts again (x's leaves and their cvt).
  struct InstMemo {
    const Inst* in = nullptr;
    std::array<sym::NodeId, 4> ops{};
    std::array<sym::NodeId, 2> out{};
  };
  struct LeafMemo {
    std::uint64_t element = ~std::uint64_t{0};
    std::uint32_t tensor = 0;
    sym::NodeId node = sym::kNoNode;
  };
  static constexpr std::size_t kMemo = 1 << 13;
  std::vector<InstMemo> inst_memo_ = std::vector<InstMemo>(kMemo);
  std::vector<LeafMemo> leaf_memo_ = std::vector<LeafMemo>(kMemo);
  sym::NodeId leaf(std::uint32_t tensor, std::uint64_t element);
  void inst(const Inst& in, const sym::NodeId* ops, sym::NodeId* out);
};

// The executor over a symbolic policy (defined in exec.cpp, beside `launch`).
Expected<LaunchResult> launch_symbolic(const Module& module, const Kernel& kernel, const LaunchConfig& config,
                                       std::span<const Arg> args, Memory& memory, SymbolicPolicy& policy);

// One launch traced into `graph` (arm 0 or 1: whose origins the nodes record), on `memory`'s
// buffers: Arg::buf(i) is SymMemory's buffer i. Error: the executor's (bounds, undefined
// results), a value needed concrete that is a node ("not provable by tracing", with the line).
Expected<LaunchResult> trace_launch(const Module& module, const Kernel& kernel, const LaunchConfig& config,
                                    std::span<const Arg> args, SymMemory& memory, sym::Graph& graph, int arm);

}  // namespace bitproof::ptx
