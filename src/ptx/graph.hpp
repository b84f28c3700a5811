// The node table of the PTX proof (issue 48; docs/ptx-proof.md): what the executor's symbolic
// value policy (symbolic.hpp) builds when it runs a kernel on tensor data it does not know.
//
// A node is a leaf (one element of an input tensor), a constant, a PTX ALU instruction over
// nodes, a bit slice or concatenation, a load from a fixed table at a data-dependent address,
// or a lemma's table. Nodes are hash-consed into one table shared by both arms of a proof, so
// two output elements are computed the same way exactly when they are the same NodeId.
//
// Soundness (the argument docs/ptx-proof.md spells out): every node is a deterministic
// function of its operands' bits, computed by the executor's concrete semantics
// (ConcretePolicy, checked against the hardware by tests/ptx/gpu's faith data); equal nodes
// therefore give equal bits for every value of the leaves. Two nodes that differ may still
// compute equal bits ("not proven" is not "refuted"). An opaque node (an Op::kApprox kInst: bits
// the hardware defines and the executor never computes) is a deterministic function of its
// operands' bits too, so hash-consing it is sound; it has no value here (evaluate() is an Error
// at it) and is never inside a lemma. Three things make more nodes equal, each
// justified where it is written:
// - canonical forms (operand order of operations the hardware computes independently of it,
//   one table in graph.cpp, each rule checked on the GPU over NaN payload pairs);
// - exact bit-slice simplifications (extract/concat of integers: identities of the integers,
//   each checked by evaluating both sides exhaustively in tests/ptx/test_ptx_graph.cpp);
// - lemmas: a subgraph over narrow leaves is replaced by its value table over the leaves'
//   admitted values (apply_lemmas), computed here by evaluate() on every combination.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "error.hpp"
#include "ptx/module.hpp"

namespace bitproof::ptx::sym {

using NodeId = std::uint32_t;
inline constexpr NodeId kNoNode = 0xFFFFFFFFu;

enum class NodeKind : std::uint8_t {
  kConst,    // aux64: the bits (width bits wide)
  kLeaf,     // aux64: the leaf's index (Graph::leaf_ref decodes tensor and element)
  kInst,     // a PTX ALU instruction on ops[0..nops): key = the instruction's semantic fields;
             // aux64: which of its results (0 or 1: setp's two predicates, unpack's halves)
  kExtract,  // ops[0]'s bits [lo, lo + width): aux64 = lo
  kConcat,   // ops[0] low, ops[1] high: width = their widths' sum
  kLoad,     // a load of `width` bits from fixed bytes (aux64: a snapshot index) at address ops[0]
  kTable,    // a lemma's table (aux64: the lemma index) over its support leaves ops[0..nops)
  kTuple,    // ops[0..nops) grouped, no value of its own (evaluates to 0): the operands of an opaque
             // instruction with more than four (an mma's), as a tree of tuples (Graph::opaque_group)
};

// The fields of an Inst that decide its result (line, slots, guard excluded): two instructions
// with equal keys compute the same function of their operands.
struct InstKey {
  Op op = Op::kMov;
  Type type, src_type;
  Rnd rnd = Rnd::kNone;
  Cmp cmp = Cmp::kEq;
  BoolOp bool_op = BoolOp::kNone;
  MulPart part = MulPart::kNone;
  bool ftz = false, sat = false;
  std::uint8_t mode = 0, vec = 1, ndst = 0, nsrc = 0;
  // Added in the implementation (ConcretePolicy::alu reads them): setp's negated combining
  // predicate (.and/.or/.xor !%p) and cvta's state space.
  bool neg_src = false;
  Space space = Space::kGeneric;
  bool operator==(const InstKey&) const = default;
  static InstKey of(const Inst& in);
  Inst to_inst() const;  // an Inst with these fields, slots 0..nsrc-1 in, nsrc.. out (for evaluate)
};

// Whether an instruction is opaque (docs/ptx-proof.md, "Opaque instructions"): bits the hardware
// defines and the executor never computes (Op::kApprox, Op::kMma). Its node is hash-consed like any
// other (the hardware is deterministic), has no value on the CPU and is never inside a lemma.
[[nodiscard]] constexpr bool is_opaque(const InstKey& k) { return k.op == Op::kApprox || k.op == Op::kMma; }

// (Fields ordered so that the 3 bytes and the 21-byte key fill the 8 bytes before aux64: 48
// bytes a node.)
struct Node {
  NodeKind kind = NodeKind::kConst;
  std::uint8_t width = 0;  // bits of the value (1 for a predicate, up to 64)
  std::uint8_t nops = 0;
  InstKey key;  // kInst only (default otherwise)
  std::uint64_t aux64 = 0;
  std::array<NodeId, 4> ops = {kNoNode, kNoNode, kNoNode, kNoNode};
  bool operator==(const Node&) const = default;
};

// An input tensor whose elements are leaves: `elements` elements of `element_bits` bits each,
// every one taking only the values of `domain` (empty: all 2^element_bits values).
struct LeafTensor {
  std::string name;  // the spec's tensor ("w.q_a", "x", "e.w1.scales")
  std::uint64_t elements = 0;
  std::uint8_t element_bits = 8;
  std::vector<std::uint64_t> domain;  // the admitted values, ascending; empty: every value
  std::uint64_t first_leaf = 0;       // leaf index of element 0 (set by add_tensor)
};
struct LeafRef {
  std::uint32_t tensor = 0;
  std::uint64_t element = 0;
};

// A lemma: a subgraph shape over narrow leaves, replaced by its value table.
struct Lemma {
  std::string pattern;                 // the shape as text, leaves as #0, #1, ... ("mul.rn.f16(#0, ...)")
  std::vector<std::uint32_t> tensors;  // each position's leaf tensor (its domain)
  std::string digest;                  // SHA-256 of the table: results in lexicographic order, first leaf slowest
  std::uint64_t entries = 0;           // the domain product
  std::uint64_t uses = 0;              // table nodes made from it
  // Every shape that gave this table (the first is `pattern`): two subgraphs of different shape
  // with equal tables over equal domains share one lemma, which is how two arms' dequant
  // sequences merge.
  std::vector<std::string> patterns;
  std::uint8_t width = 0;  // of each result
};

// Where two roots part (first_difference).
struct Difference {
  NodeId a = kNoNode, b = kNoNode;  // the first nodes only one side computes
  std::uint32_t depth = 0;          // edges from the roots
  // Both table nodes over the same support with different digests: the first leaf values
  // (one per support leaf, in order) where the tables differ, and each side's result.
  std::optional<std::vector<std::uint64_t>> counterexample;
  std::uint64_t result_a = 0, result_b = 0;
};

// A canonical form (graph.cpp's table): instructions `applies` accepts forget the order of their
// operands `first` and `second` (the lower NodeId is put first). The card: the PTX ISA section,
// why the result is bitwise independent of the order, and the GPU check that shows it.
struct CanonRule {
  const char* name;
  bool (*applies)(const InstKey&);
  std::uint8_t first, second;
  const char* isa;
  const char* why;
  const char* gpu_check;
};
[[nodiscard]] std::span<const CanonRule> canon_rules();
// The PTX mnemonic of an instruction key: "fma.rn.f32", "mul.lo.u32", "cvt.rn.f16.f32".
[[nodiscard]] std::string inst_name(const InstKey& k);

class Graph {
 public:
  Graph();
  // Room for `nodes` nodes without growing the table (optional: it grows by itself).
  void reserve(std::size_t nodes);
  // Registers an input tensor; its elements become leaves first_leaf .. first_leaf + elements - 1.
  std::uint32_t add_tensor(LeafTensor t);
  [[nodiscard]] const std::vector<LeafTensor>& tensors() const { return tensors_; }
  [[nodiscard]] LeafRef leaf_ref(std::uint64_t leaf) const;

  NodeId leaf(std::uint32_t tensor, std::uint64_t element);
  NodeId constant(std::uint64_t bits, std::uint8_t width);
  // The node(s) of an ALU instruction over operand nodes (constants as constant()); results
  // 0..in.ndst-1 in `out`. Applies canonical forms and simplifications; constant operands only
  // never reach here (the policy folds them), except for an opaque Op::kApprox (never folded:
  // its node has no canonical form and no simplification, only hash-consing).
  void inst(const Inst& in, const NodeId* operands, NodeId* out);
  // An opaque instruction over more operands than a node holds (an mma: 32 lanes' A, B and C
  // registers, lane-major): results.size() nodes, result i an Op::kMma kInst with aux64 = i over one
  // tuple tree of `operands` (in order: a permutation is another node). Width 32 each. `tuples`
  // (optional) receives the tree's nodes, for their origins.
  void opaque_group(const Inst& in, std::span<const NodeId> operands, std::span<NodeId> results,
                    std::vector<NodeId>* tuples = nullptr);
  NodeId extract(NodeId x, std::uint8_t lo, std::uint8_t width);
  NodeId concat(NodeId low, NodeId high);
  // x's value as `width` bits: truncated (extract) or zero-extended (concat with zeros), what an
  // integer instruction does to an operand (`s & mask(width)`).
  NodeId fit(NodeId x, std::uint8_t width);
  NodeId load(std::uint32_t snapshot, NodeId address, std::uint8_t width);
  std::uint32_t snapshot(std::vector<std::uint8_t> bytes, std::uint64_t base_address);  // interned by content

  [[nodiscard]] const Node& node(NodeId id) const { return nodes_[id]; }
  [[nodiscard]] std::size_t size() const { return nodes_.size(); }

  // The node's bits given every leaf's bits (leaf index -> bits). Error: a load outside its
  // snapshot, an undefined result (ConcretePolicy's reason) that reaches the node. Lazy selp: an
  // instruction whose result is undefined (an integer division by zero) makes its value undefined,
  // not the evaluation; a selp is undefined only where its predicate or the operand it chooses is
  // (the other side of an if-converted branch never ran; docs/ptx-proof.md, "If-conversion"). A
  // load at an undefined address is an Error. An opaque approx node
  // has no value here ("...: approximate, runs on the GPU only"): undefined, as above.
  [[nodiscard]] Expected<std::uint64_t> evaluate(
      NodeId id, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& leaves) const;
  // evaluate() for several roots at once, sharing the nodes below them (results in roots' order).
  [[nodiscard]] Expected<std::vector<std::uint64_t>> evaluate_many(
      const std::vector<NodeId>& roots, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& leaves) const;

  // Replaces every maximal narrow subgraph below `roots` (support domain product <= max_entries)
  // by a table node; returns the roots' new ids (same order). A subgraph holding an opaque approx
  // node is not narrow (the approx node stays; its narrow operands may become tables). Error: a
  // table entry undefined.
  [[nodiscard]] Expected<std::vector<NodeId>> apply_lemmas(const std::vector<NodeId>& roots,
                                                           std::uint64_t max_entries = std::uint64_t{1} << 24);
  [[nodiscard]] const std::vector<Lemma>& lemmas() const { return lemmas_; }

  // a == b: no difference (Difference::a and b stay kNoNode).
  [[nodiscard]] Difference first_difference(NodeId a, NodeId b) const;
  [[nodiscard]] std::string describe(NodeId id, int depth = 2) const;  // "fma.rn.f32(cvt.f32.f16(x[17]), ...)"

  // The first PTX line that made a node, per arm (0 or 1); 0 if none recorded.
  void note_origin(NodeId id, int arm, std::uint32_t line);
  [[nodiscard]] std::uint32_t origin(NodeId id, int arm) const;

  // The negative control of the canonical forms (tests only): fma's addend exchangeable with a
  // product operand, a rule the hardware refutes; the tests show that the GPU data catches it.
  void set_unsound_fma_addend_for_test(bool on) { unsound_fma_addend_ = on; }

 private:
  static constexpr std::uint64_t kEmptySlot = ~std::uint64_t{0};
  NodeId intern(const Node& n);
  void keep_origins(NodeId from, NodeId to);
  void rehash(std::size_t cap);
  void build(InstKey key, const NodeId* operands, NodeId* out);
  void canonicalise(Node& n) const;
  bool simplify(const InstKey& k, const NodeId* s, NodeId* out);
  bool simplify_prmt(const InstKey& k, const NodeId* s, NodeId* out);
  NodeId zeros(std::uint8_t width);
  NodeId place(NodeId x, int lo, int count, int width);
  NodeId disjoint_merge(NodeId a, NodeId b, std::uint8_t width);
  void pieces(NodeId x, std::vector<NodeId>& out) const;
  [[nodiscard]] std::optional<std::uint64_t> const_bits(NodeId x) const;
  [[nodiscard]] std::pair<NodeId, std::uint64_t> slice_of(NodeId x) const;
  struct Pattern;
  [[nodiscard]] std::uint64_t step(const Node& n, const std::uint64_t* v, std::uint64_t leaf_bits,
                                   std::string* why) const;
  // A cause of an undefined value (lazy_step): the node whose instruction was undefined, and why.
  struct Poison {
    NodeId node;
    std::string why;
  };
  bool lazy_step(NodeId id, const Node& n, const std::uint64_t* v, const std::uint32_t* poisoned,
                 std::uint64_t leaf_bits, std::uint64_t* out, std::uint32_t* out_poison, std::vector<Poison>& causes,
                 std::string* why) const;
  [[nodiscard]] std::vector<NodeId> below(const std::vector<NodeId>& roots, bool whole = false) const;
  [[nodiscard]] Pattern pattern_of(NodeId root, const std::vector<std::uint64_t>& support) const;
  [[nodiscard]] std::string pattern_text(NodeId root, const std::vector<std::uint64_t>& support) const;
  Expected<std::uint32_t> lemma_for(NodeId root, const std::vector<std::uint64_t>& support);
  NodeId rebuild(NodeId id, const NodeId* ops);
  std::unordered_map<std::string, std::uint32_t> pattern_cache_;  // shape key -> lemma
  std::unordered_map<std::string, std::uint32_t> digest_index_;   // digest -> lemma
  bool unsound_fma_addend_ = false;
  void push(const Node& n);
  std::uint64_t next_leaf_ = 0;
  std::vector<NodeId> leaf_ids_;                          // leaf index -> its node (kNoNode: not made yet)
  std::vector<std::vector<std::uint64_t>> lemma_tables_;  // lemma index -> its results
  std::vector<Node> nodes_;
  std::vector<LeafTensor> tensors_;
  std::vector<Lemma> lemmas_;
  std::vector<std::vector<std::uint8_t>> snapshots_;
  std::vector<std::uint64_t> snapshot_base_;
  std::vector<std::uint64_t> table_;  // open addressing over nodes_: (hash's high 32 bits, NodeId)
  std::vector<std::uint32_t> origin_[2];
};

}  // namespace bitproof::ptx::sym
