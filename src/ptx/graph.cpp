// The node table of the PTX proof (src/ptx/graph.hpp; docs/ptx-proof.md): hash-consing,
// canonical forms, bit-slice simplification. Evaluation, lemmas and differences are in
// graph_eval.cpp.
#include "ptx/graph.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <optional>

#include "ptx/concrete.hpp"

namespace bitproof::ptx::sym {
namespace {

std::uint64_t low_mask(int bits) { return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1; }

// A 64-bit mix (splitmix64's finaliser): every input bit reaches every output bit.
std::uint64_t fmix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
std::uint64_t combine(std::uint64_t h, std::uint64_t v) { return fmix(h ^ (v + 0x9E3779B97F4A7C15ull)); }

std::uint64_t type_word(const Type& t) {
  return static_cast<std::uint64_t>(t.kind) | std::uint64_t{t.bits} << 8 | std::uint64_t{t.x2} << 16 |
         std::uint64_t{t.bf} << 17;
}

// The hash of a node: a function of exactly the fields operator== compares.
std::uint64_t hash_node(const Node& n) {
  const InstKey& k = n.key;
  const std::uint64_t head = static_cast<std::uint64_t>(n.kind) | std::uint64_t{n.width} << 8 |
                             std::uint64_t{n.nops} << 16 | static_cast<std::uint64_t>(k.op) << 24 |
                             static_cast<std::uint64_t>(k.rnd) << 32 | static_cast<std::uint64_t>(k.cmp) << 40 |
                             static_cast<std::uint64_t>(k.bool_op) << 48 | static_cast<std::uint64_t>(k.part) << 56;
  const std::uint64_t flags = std::uint64_t{k.ftz} | std::uint64_t{k.sat} << 1 | std::uint64_t{k.neg_src} << 2 |
                              static_cast<std::uint64_t>(k.space) << 3 | std::uint64_t{k.mode} << 8 |
                              std::uint64_t{k.vec} << 16 | std::uint64_t{k.ndst} << 24 | std::uint64_t{k.nsrc} << 32;
  std::uint64_t h = combine(head, n.aux64);
  h = combine(h, type_word(k.type) | type_word(k.src_type) << 24 | flags << 48);
  h = combine(h, flags);
  h = combine(h, std::uint64_t{n.ops[0]} | std::uint64_t{n.ops[1]} << 32);
  return combine(h, std::uint64_t{n.ops[2]} | std::uint64_t{n.ops[3]} << 32);
}

bool is_integer(const Type& t) {
  return t.kind == Kind::kBits || t.kind == Kind::kUnsigned || t.kind == Kind::kSigned || t.kind == Kind::kPred;
}

}  // namespace

// ---- InstKey ----

InstKey InstKey::of(const Inst& in) {
  InstKey k;
  k.op = in.op, k.type = in.type, k.src_type = in.src_type, k.rnd = in.rnd, k.cmp = in.cmp;
  k.bool_op = in.bool_op, k.part = in.part, k.ftz = in.ftz, k.sat = in.sat, k.neg_src = in.neg_src;
  k.space = in.space, k.mode = in.mode, k.vec = in.vec, k.ndst = in.ndst, k.nsrc = in.nsrc;
  return k;
}

Inst InstKey::to_inst() const {
  Inst in;
  in.op = op, in.type = type, in.src_type = src_type, in.rnd = rnd, in.cmp = cmp, in.bool_op = bool_op;
  in.part = part, in.ftz = ftz, in.sat = sat, in.neg_src = neg_src, in.space = space, in.mode = mode, in.vec = vec;
  in.ndst = ndst, in.nsrc = nsrc;
  for (std::uint32_t i = 0; i < nsrc && i < 5; ++i) in.src[i] = i;
  for (std::uint32_t i = 0; i < ndst && i < 4; ++i) in.dst[i] = nsrc + i;
  return in;
}

namespace {
// The bits of result `i` of an instruction: what ConcretePolicy::alu leaves in d[i] fits in them.
std::uint8_t result_width(const InstKey& k, int /*i*/) {
  return result_bits(k.op, k.type.bits, k.part == MulPart::kWide, k.vec, k.type.kind == Kind::kSigned);
}
}  // namespace

// ---- Canonical forms ----
//
// One table: each rule names the instructions it applies to and the two operand positions whose
// order it forgets (the lower NodeId goes first). Each rule's card: the PTX ISA section, why the
// result is bitwise independent of the order, and the GPU check (tests/ptx/gpu/canon.ptx, recorded
// in tests/ptx/data/canon_sm90.bin, compared in CI by test_ptx_graph.cpp "canon: recorded"). NOT
// canonicalised: sub, div, shifts, cvt, fma's addend with a product operand, setp orderings.

namespace {

bool float_arith(const InstKey& k) { return k.type.kind == Kind::kFloat && (k.type.bits == 16 || k.type.bits == 32); }

constexpr CanonRule kCanonRules[] = {
    {"float add/mul: operand order",
     [](const InstKey& k) { return (k.op == Op::kAdd || k.op == Op::kMul) && float_arith(k); }, 0, 1,
     "PTX ISA 9.7.3.1 add, 9.7.3.3 mul (f32), 9.7.4.1/9.7.4.3 (f16, f16x2), 9.7.4.x bf16/bf16x2",
     "IEEE 754 addition and multiplication are commutative for every rounding direction, and .ftz/.sat act on "
     "operands and result alike; a NaN result is the canonical NaN whatever the operands' payloads (concrete.hpp's "
     "NaN rule), so no payload order can leak",
     "canon.ptx add/mul .rn/.rz/.ftz/.sat on f32, f16, f16x2, bf16, bf16x2: both orders over NaN payload pairs"},
    {"float fma: the two product operands", [](const InstKey& k) { return k.op == Op::kFma && float_arith(k); }, 0, 1,
     "PTX ISA 9.7.3.5 fma (f32; mad.rnd.f32 is the same, 9.7.3.6), 9.7.4.4 fma (f16, f16x2, bf16, bf16x2)",
     "a*b+c is computed exactly then rounded once: the exact product is commutative; canonical NaN as above. The "
     "addend is NOT exchangeable with a product operand (canon.ptx's fma a,c,b words differ: the control)",
     "canon.ptx fma .rn/.rz/.ftz.sat on f32, f16, f16x2, bf16, bf16x2: (a,b,c) against (b,a,c)"},
    {"integer add/mul.lo/and/or/xor/min/max: operand order",
     [](const InstKey& k) {
       if (!is_integer(k.type)) return false;
       switch (k.op) {
         case Op::kAdd:
         case Op::kAnd:
         case Op::kOr:
         case Op::kXor:
         case Op::kMin:
         case Op::kMax: return true;
         case Op::kMul: return k.part == MulPart::kLo;
         default: return false;
       }
     },
     0, 1, "PTX ISA 9.7.1.1 add, 9.7.1.3 mul, 9.7.1.10-11 min/max, 9.7.8.1-3 and/or/xor",
     "exact integer functions, symmetric in their operands (mul.lo: the low half of a commutative product)",
     "canon.ptx add/mul.lo/and/or/xor/min/max on u32/s32 and u16: both orders"},
    {"setp.eq/ne: the compared operands",
     [](const InstKey& k) { return k.op == Op::kSetp && (k.cmp == Cmp::kEq || k.cmp == Cmp::kNe); }, 0, 1,
     "PTX ISA 9.7.7.1 setp (integer), 9.7.4.x setp (float: eq/ne are false/true when either is NaN)",
     "equality is symmetric for integers and floats alike (+0 == -0, NaN unordered either way, .ftz flushes both); "
     "the combining predicate (.and/.or/.xor c) keeps its position",
     "canon.ptx setp.eq/ne on f32 (and .ftz), f16, u32, s32: both orders, as 0/1 words"},
};

}  // namespace

std::span<const CanonRule> canon_rules() { return kCanonRules; }

// ---- Graph ----

Graph::Graph() { table_.assign(std::size_t{1} << 10, kEmptySlot); }

void Graph::reserve(std::size_t nodes) {
  nodes_.reserve(nodes);
  std::size_t cap = table_.size();
  while (nodes * 4 > cap * 3) cap *= 2;
  if (cap != table_.size()) rehash(cap);
}

namespace {
// Large tables and node arrays are accessed at random: 2 MiB pages (where the kernel's
// transparent huge pages are on `madvise`) save most TLB misses. Advice only: no effect on bits.
void advise_huge(const void* p, std::size_t bytes) {
  constexpr std::uintptr_t kHuge = std::uintptr_t{1} << 21;
  const auto lo = (reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const auto hi = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
}
}  // namespace

void Graph::rehash(std::size_t cap) {
  std::vector<std::uint64_t> t;
  t.reserve(cap);
  advise_huge(t.data(), cap * sizeof(std::uint64_t));
  t.assign(cap, kEmptySlot);
  const std::size_t m = cap - 1;
  for (const std::uint64_t e : table_) {
    if (e == kEmptySlot) continue;
    std::size_t i = static_cast<std::size_t>(e >> 32) & m;
    while (t[i] != kEmptySlot) i = (i + 1) & m;
    t[i] = e;
  }
  table_.swap(t);
}

// Open addressing, linear probing; a slot holds the hash's high 32 bits (which also pick the
// slot, so growing needs no node) and the NodeId. Load factor at most 3/4.
NodeId Graph::intern(const Node& n) {
  const auto tag = static_cast<std::uint32_t>(hash_node(n) >> 32);
  const std::size_t m = table_.size() - 1;
  std::size_t i = tag & m;
  for (;; i = (i + 1) & m) {
    const std::uint64_t e = table_[i];
    if (e == kEmptySlot) break;
    if (static_cast<std::uint32_t>(e >> 32) == tag && nodes_[static_cast<NodeId>(e)] == n)
      return static_cast<NodeId>(e);
  }
  const auto id = static_cast<NodeId>(nodes_.size());
  push(n);
  table_[i] = std::uint64_t{tag} << 32 | id;
  if (nodes_.size() * 4 > table_.size() * 3) rehash(table_.size() * 2);
  return id;
}

// Appends a node; the array grows by half (not double) to bound the peak while it moves.
void Graph::push(const Node& n) {
  if (nodes_.size() == nodes_.capacity()) {
    const std::size_t cap = std::max<std::size_t>(1024, nodes_.capacity() + nodes_.capacity() / 2);
    std::vector<Node> bigger;
    bigger.reserve(cap);
    advise_huge(bigger.data(), cap * sizeof(Node));
    bigger.insert(bigger.end(), nodes_.begin(), nodes_.end());
    nodes_.swap(bigger);
  }
  nodes_.push_back(n);
}

std::uint32_t Graph::add_tensor(LeafTensor t) {
  t.first_leaf = next_leaf_;
  next_leaf_ += t.elements;
  tensors_.push_back(std::move(t));
  return static_cast<std::uint32_t>(tensors_.size() - 1);
}

LeafRef Graph::leaf_ref(std::uint64_t leaf) const {
  // The last tensor whose first leaf is at or below `leaf` (first_leaf ascends).
  const auto it = std::upper_bound(tensors_.begin(), tensors_.end(), leaf,
                                   [](std::uint64_t l, const LeafTensor& t) { return l < t.first_leaf; });
  const auto ti = static_cast<std::uint32_t>(it - tensors_.begin() - 1);
  return {ti, leaf - tensors_[ti].first_leaf};
}

// Leaves are found through a dense array by leaf index (inputs are read in order: no hashing);
// they are never in the hash table, so this is their one way in.
NodeId Graph::leaf(std::uint32_t tensor, std::uint64_t element) {
  const LeafTensor& t = tensors_.at(tensor);
  const std::uint64_t index = t.first_leaf + element;
  if (leaf_ids_.size() <= index) leaf_ids_.resize(std::max<std::uint64_t>(next_leaf_, index + 1), kNoNode);
  NodeId& id = leaf_ids_[index];
  if (id != kNoNode) return id;
  Node n;
  n.kind = NodeKind::kLeaf;
  n.width = t.element_bits;
  n.aux64 = index;
  id = static_cast<NodeId>(nodes_.size());
  push(n);
  return id;
}

NodeId Graph::constant(std::uint64_t bits, std::uint8_t width) {
  Node n;
  n.kind = NodeKind::kConst;
  n.width = width;
  n.aux64 = bits & low_mask(width);
  return intern(n);
}

NodeId Graph::zeros(std::uint8_t width) { return constant(0, width); }

// x's value as `width` bits: truncated (extract) or zero-extended (concat with zeros), which is
// what every integer instruction of ConcretePolicy does to an operand (`s & mask(width)`).
NodeId Graph::fit(NodeId x, std::uint8_t width) {
  const std::uint8_t w = nodes_[x].width;
  if (w == width) return x;
  if (w > width) return extract(x, 0, width);
  return concat(x, zeros(static_cast<std::uint8_t>(width - w)));
}

NodeId Graph::extract(NodeId x, std::uint8_t lo, std::uint8_t width) {
  const Node n = nodes_[x];  // a copy: intern may grow nodes_
  if (lo >= n.width) return zeros(width);
  if (lo + width > n.width) {  // the bits above x's width are zeros
    const auto in = static_cast<std::uint8_t>(n.width - lo);
    return concat(extract(x, lo, in), zeros(static_cast<std::uint8_t>(width - in)));
  }
  if (lo == 0 && width == n.width) return x;
  switch (n.kind) {
    case NodeKind::kConst: return constant(n.aux64 >> lo, width);
    case NodeKind::kExtract: return extract(n.ops[0], static_cast<std::uint8_t>(n.aux64 + lo), width);
    case NodeKind::kConcat: {
      const std::uint8_t wl = nodes_[n.ops[0]].width;
      if (lo + width <= wl) return extract(n.ops[0], lo, width);
      if (lo >= wl) return extract(n.ops[1], static_cast<std::uint8_t>(lo - wl), width);
      const auto in_low = static_cast<std::uint8_t>(wl - lo);
      return concat(extract(n.ops[0], lo, in_low), extract(n.ops[1], 0, static_cast<std::uint8_t>(width - in_low)));
    }
    default: break;
  }
  Node e;
  e.kind = NodeKind::kExtract;
  e.width = width;
  e.nops = 1;
  e.ops[0] = x;
  e.aux64 = lo;
  return intern(e);
}

// A piece's source as (node, lo): an extract's operand and position, or the node itself at 0.
std::pair<NodeId, std::uint64_t> Graph::slice_of(NodeId x) const {
  const Node& n = nodes_[x];
  if (n.kind == NodeKind::kExtract) return {n.ops[0], n.aux64};
  return {x, 0};
}

// Concatenations are kept right-nested (concat(a, concat(b, c))), adjacent constants merged and
// adjacent slices of one node joined, so one bit layout has one node.
NodeId Graph::concat(NodeId low, NodeId high) {
  const Node l = nodes_[low];
  const Node h = nodes_[high];
  if (l.kind == NodeKind::kConcat) return concat(l.ops[0], concat(l.ops[1], high));
  const auto wl = l.width;
  // The head of `high` and what follows it.
  const NodeId head = h.kind == NodeKind::kConcat ? h.ops[0] : high;
  const NodeId rest = h.kind == NodeKind::kConcat ? h.ops[1] : kNoNode;
  const Node& hd = nodes_[head];
  NodeId joined = kNoNode;
  if (l.kind == NodeKind::kConst && hd.kind == NodeKind::kConst) {
    joined = constant(l.aux64 | hd.aux64 << wl, static_cast<std::uint8_t>(wl + hd.width));
  } else if (l.kind != NodeKind::kConst && hd.kind != NodeKind::kConst) {
    const auto [src_l, lo_l] = slice_of(low);
    const auto [src_h, lo_h] = slice_of(head);
    if (src_l == src_h && lo_l + wl == lo_h) {
      joined = extract(src_l, static_cast<std::uint8_t>(lo_l), static_cast<std::uint8_t>(wl + hd.width));
    }
  }
  if (joined != kNoNode) return rest == kNoNode ? joined : concat(joined, rest);
  Node c;
  c.kind = NodeKind::kConcat;
  c.width = static_cast<std::uint8_t>(wl + h.width);
  c.nops = 2;
  c.ops[0] = low;
  c.ops[1] = high;
  return intern(c);
}

NodeId Graph::load(std::uint32_t snapshot, NodeId address, std::uint8_t width) {
  Node n;
  n.kind = NodeKind::kLoad;
  n.width = width;
  n.nops = 1;
  n.ops[0] = address;
  n.aux64 = snapshot;
  return intern(n);
}

std::uint32_t Graph::snapshot(std::vector<std::uint8_t> bytes, std::uint64_t base_address) {
  for (std::size_t i = 0; i < snapshots_.size(); ++i) {
    if (snapshot_base_[i] == base_address && snapshots_[i] == bytes) return static_cast<std::uint32_t>(i);
  }
  snapshots_.push_back(std::move(bytes));
  snapshot_base_.push_back(base_address);
  return static_cast<std::uint32_t>(snapshots_.size() - 1);
}

void Graph::inst(const Inst& in, const NodeId* operands, NodeId* out) { build(InstKey::of(in), operands, out); }

void Graph::opaque_group(const Inst& in, std::span<const NodeId> operands, std::span<NodeId> results,
                         std::vector<NodeId>* tuples) {
  std::vector<NodeId> level(operands.begin(), operands.end());
  while (level.size() > 1) {  // groups of four, in order, until one root
    std::vector<NodeId> up;
    for (std::size_t i = 0; i < level.size(); i += 4) {
      Node t;
      t.kind = NodeKind::kTuple;
      t.nops = static_cast<std::uint8_t>(std::min<std::size_t>(4, level.size() - i));
      for (std::size_t j = 0; j < t.nops; ++j) t.ops[j] = level[i + j];
      up.push_back(intern(t));
      if (tuples != nullptr) tuples->push_back(up.back());
    }
    level = std::move(up);
  }
  Node n;
  n.kind = NodeKind::kInst;
  n.key = InstKey::of(in);
  n.width = 32;
  n.nops = level.empty() ? 0 : 1;
  if (!level.empty()) n.ops[0] = level[0];
  for (std::size_t i = 0; i < results.size(); ++i) {
    n.aux64 = i;
    results[i] = intern(n);
  }
}

void Graph::build(InstKey key, const NodeId* operands, NodeId* out) {
  if (simplify(key, operands, out)) return;
  const int ndst = key.ndst;
  if (key.op == Op::kSetp) key.ndst = 2;  // p's node is the same whether or not q is written
  Node n;
  n.kind = NodeKind::kInst;
  n.key = key;
  n.nops = key.nsrc;
  for (int i = 0; i < key.nsrc && i < 4; ++i) n.ops[i] = operands[i];
  canonicalise(n);
  for (int i = 0; i < ndst; ++i) {
    n.width = result_width(key, i);
    n.aux64 = static_cast<std::uint64_t>(i);
    out[i] = intern(n);
  }
}

// ---- Bit-slice simplification ----
//
// Exact integer identities only, each the instruction's ConcretePolicy result written as slices
// and concatenations of its operands (tests/ptx/test_ptx_graph.cpp evaluates both sides on every
// value of a narrow input). An instruction that matches none is interned as it is.

namespace {

// The single run of ones of m as (lo, count); nullopt when m has none or several.
std::optional<std::pair<int, int>> one_run(std::uint64_t m) {
  if (m == 0) return std::nullopt;
  const int lo = std::countr_zero(m);
  const std::uint64_t run = m >> lo;
  if ((run & (run + 1)) != 0) return std::nullopt;
  return std::pair{lo, std::popcount(run)};
}

}  // namespace

// Operand i as a constant's bits, if it is one.
std::optional<std::uint64_t> Graph::const_bits(NodeId x) const {
  const Node& n = nodes_[x];
  if (n.kind != NodeKind::kConst) return std::nullopt;
  return n.aux64;
}

// x's bits [lo, lo + count) placed at bit lo of a `width`-bit value, zeros elsewhere.
NodeId Graph::place(NodeId x, int lo, int count, int width) {
  NodeId v = extract(x, static_cast<std::uint8_t>(lo), static_cast<std::uint8_t>(count));
  if (lo + count < width) v = concat(v, zeros(static_cast<std::uint8_t>(width - lo - count)));
  if (lo > 0) v = concat(zeros(static_cast<std::uint8_t>(lo)), v);
  return v;
}

// The pieces of a value, lowest first: (piece node, width); a concat is flattened.
void Graph::pieces(NodeId x, std::vector<NodeId>& out) const {
  while (nodes_[x].kind == NodeKind::kConcat) {
    out.push_back(nodes_[x].ops[0]);
    x = nodes_[x].ops[1];
  }
  out.push_back(x);
}

// a | b (and a ^ b, a + b) where every bit is a known zero on at least one side: the bits of
// the other side, no carry; kNoNode when the sides overlap.
NodeId Graph::disjoint_merge(NodeId a, NodeId b, std::uint8_t width) {
  std::vector<NodeId> pa, pb;
  pieces(fit(a, width), pa);
  pieces(fit(b, width), pb);
  NodeId result = kNoNode;
  std::vector<NodeId> parts;
  std::size_t ia = 0, ib = 0;
  int offa = 0, offb = 0;  // bits of the current piece already taken
  for (int at = 0; at < width;) {
    const Node na = nodes_[pa[ia]];  // copies: extract below may grow nodes_
    const Node nb = nodes_[pb[ib]];
    const int ra = na.width - offa, rb = nb.width - offb;
    const int take = std::min(ra, rb);
    const bool za = na.kind == NodeKind::kConst && ((na.aux64 >> offa) & low_mask(take)) == 0;
    const bool zb = nb.kind == NodeKind::kConst && ((nb.aux64 >> offb) & low_mask(take)) == 0;
    if (!za && !zb) return kNoNode;
    const NodeId from = za ? pb[ib] : pa[ia];
    const int off = za ? offb : offa;
    parts.push_back(extract(from, static_cast<std::uint8_t>(off), static_cast<std::uint8_t>(take)));
    at += take;
    offa += take, offb += take;
    if (offa == na.width) ++ia, offa = 0;
    if (offb == nb.width) ++ib, offb = 0;
  }
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) result = result == kNoNode ? *it : concat(*it, result);
  return result;
}

bool Graph::simplify(const InstKey& k, const NodeId* s, NodeId* out) {
  const auto w = static_cast<std::uint8_t>(k.type.bits);
  const bool integer = is_integer(k.type);
  switch (k.op) {
    case Op::kMov:  // d = a & mask(bits), any type
      out[0] = fit(s[0], w);
      return true;
    case Op::kPack: {  // d = {s0, s1, ...}, lowest first
      const auto e = static_cast<std::uint8_t>(w / k.vec);
      NodeId v = fit(s[k.vec - 1], e);
      for (int i = k.vec - 2; i >= 0; --i) v = concat(fit(s[i], e), v);
      out[0] = v;
      return true;
    }
    case Op::kUnpack: {
      const auto e = static_cast<std::uint8_t>(w / k.vec);
      const NodeId a = fit(s[0], w);
      for (int i = 0; i < k.ndst; ++i) out[i] = extract(a, static_cast<std::uint8_t>(i * e), e);
      return true;
    }
    case Op::kAnd: {
      if (!integer) return false;
      const auto ca = const_bits(s[0]), cb = const_bits(s[1]);
      if (ca.has_value() == cb.has_value()) return false;
      const std::uint64_t m = (ca ? *ca : *cb) & low_mask(w);
      const NodeId x = ca ? s[1] : s[0];
      if (m == 0) return out[0] = zeros(w), true;
      const auto run = one_run(m);
      if (!run) return false;
      out[0] = place(fit(x, w), run->first, run->second, w);
      return true;
    }
    case Op::kOr:
    case Op::kXor:
    case Op::kAdd: {
      if (!integer) return false;
      const NodeId v = disjoint_merge(s[0], s[1], w);
      if (v == kNoNode) return false;
      out[0] = v;
      return true;
    }
    case Op::kShl:
    case Op::kShr: {
      if (!integer || (k.op == Op::kShr && k.type.kind == Kind::kSigned)) return false;
      const auto c = const_bits(s[1]);
      if (!c) return false;
      const std::uint64_t n = *c & 0xFFFFFFFFu;
      if (n >= w) return out[0] = zeros(w), true;
      const NodeId a = fit(s[0], w);
      const auto keep = static_cast<std::uint8_t>(w - n);
      if (k.op == Op::kShl)
        out[0] = n == 0 ? a : concat(zeros(static_cast<std::uint8_t>(n)), extract(a, 0, keep));
      else
        out[0] =
            n == 0 ? a : concat(extract(a, static_cast<std::uint8_t>(n), keep), zeros(static_cast<std::uint8_t>(n)));
      return true;
    }
    case Op::kBfe: {  // unsigned: bits [pos, pos + len) of a, zero-extended (PTX ISA, bfe)
      if (k.type.kind == Kind::kSigned) return false;
      const auto cp = const_bits(s[1]), cl = const_bits(s[2]);
      if (!cp || !cl) return false;
      const int pos = static_cast<int>(*cp & 0xFF), len = static_cast<int>(*cl & 0xFF);
      if (len == 0 || pos >= w) return out[0] = zeros(w), true;
      const int take = std::min(len, w - pos);
      const NodeId bits = extract(fit(s[0], w), static_cast<std::uint8_t>(pos), static_cast<std::uint8_t>(take));
      out[0] = take == w ? bits : concat(bits, zeros(static_cast<std::uint8_t>(w - take)));
      return true;
    }
    case Op::kPrmt: return simplify_prmt(k, s, out);
    case Op::kCvt: {  // integer to integer: (v & mask(src)) & mask(dst); a signed widening is not a slice
      const Type& d = k.type;
      const Type& src = k.src_type;
      if (!is_integer(d) || !is_integer(src) || k.sat || k.rnd != Rnd::kNone) return false;
      if (src.kind == Kind::kSigned && src.bits < d.bits) return false;
      if (d.kind == Kind::kSigned && d.bits < 64) return false;  // sign-extended to the register (convert)
      out[0] = fit(fit(s[0], src.bits), d.bits);
      return true;
    }
    default: return false;
  }
}

// prmt with a constant selector: which source byte lands in each result byte is read off
// ConcretePolicy itself (one semantics), by running it on byte-numbered operands twice; a byte
// that is a sign replication (default mode, selector bit 3) is not a slice.
bool Graph::simplify_prmt(const InstKey& k, const NodeId* s, NodeId* out) {
  const auto c = const_bits(s[2]);
  if (!c) return false;
  const Inst in = k.to_inst();
  std::uint64_t lo_src[3] = {0x03020100u, 0x07060504u, *c}, hi_src[3] = {0x83828180u, 0x87868584u, *c};
  std::uint64_t lo_out[2] = {}, hi_out[2] = {};
  if (ConcretePolicy::alu(in, lo_src, lo_out) != nullptr || ConcretePolicy::alu(in, hi_src, hi_out) != nullptr)
    return false;
  NodeId v = kNoNode;
  const NodeId a = fit(s[0], 32), b = fit(s[1], 32);
  for (int i = 3; i >= 0; --i) {
    const std::uint64_t r1 = (lo_out[0] >> (8 * i)) & 0xFF, r2 = (hi_out[0] >> (8 * i)) & 0xFF;
    if (r1 >= 8 || r2 != (r1 | 0x80)) return false;
    const NodeId byte = extract(r1 < 4 ? a : b, static_cast<std::uint8_t>(8 * (r1 % 4)), 8);
    v = v == kNoNode ? byte : concat(byte, v);
  }
  out[0] = v;
  return true;
}

void Graph::canonicalise(Node& n) const {
  for (const CanonRule& r : kCanonRules) {
    if (r.applies(n.key) && n.ops[r.first] > n.ops[r.second]) std::swap(n.ops[r.first], n.ops[r.second]);
  }
  // The deliberately unsound rule of the negative control (set_unsound_fma_addend_for_test):
  // fma's three operands in any order, which the GPU data refutes.
  if (unsound_fma_addend_ && n.key.op == Op::kFma && float_arith(n.key)) std::sort(n.ops.begin(), n.ops.begin() + 3);
}

void Graph::note_origin(NodeId id, int arm, std::uint32_t line) {
  auto& o = origin_[arm & 1];
  if (o.size() <= id) o.resize(std::max<std::size_t>(nodes_.size(), std::size_t{id} + 1), 0);
  if (o[id] == 0) o[id] = line;
}

std::uint32_t Graph::origin(NodeId id, int arm) const {
  const auto& o = origin_[arm & 1];
  return id < o.size() ? o[id] : 0;
}

}  // namespace bitproof::ptx::sym
