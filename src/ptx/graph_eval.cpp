// The node table's concrete side (src/ptx/graph.hpp): evaluate() through ConcretePolicy (one
// semantics), lemmas by exhaustion (apply_lemmas), first_difference and describe.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <unordered_map>
#include <unordered_set>

#include "hash/digest.hpp"
#include "ptx/concrete.hpp"
#include "ptx/graph.hpp"

namespace bitproof::ptx::sym {
namespace {

std::uint64_t width_mask(int bits) { return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1; }

std::string type_name(const Type& t) {
  switch (t.kind) {
    case Kind::kPred: return "pred";
    case Kind::kBits: return fmt::format("b{}", t.bits);
    case Kind::kUnsigned: return fmt::format("u{}", t.bits);
    case Kind::kSigned: return fmt::format("s{}", t.bits);
    case Kind::kFloat: break;
  }
  const int lane = t.x2 ? t.bits / 2 : t.bits;
  return fmt::format("{}{}{}", t.bf ? "bf" : "f", lane, t.x2 ? "x2" : "");
}

const char* op_name(Op op) {
  switch (op) {
    case Op::kMov: return "mov";
    case Op::kAdd: return "add";
    case Op::kSub: return "sub";
    case Op::kMul: return "mul";
    case Op::kMad: return "mad";
    case Op::kFma: return "fma";
    case Op::kDiv: return "div";
    case Op::kRem: return "rem";
    case Op::kNeg: return "neg";
    case Op::kAbs: return "abs";
    case Op::kMin: return "min";
    case Op::kMax: return "max";
    case Op::kShl: return "shl";
    case Op::kShr: return "shr";
    case Op::kAnd: return "and";
    case Op::kOr: return "or";
    case Op::kXor: return "xor";
    case Op::kNot: return "not";
    case Op::kSelp: return "selp";
    case Op::kSetp: return "setp";
    case Op::kCvt: return "cvt";
    case Op::kCvta: return "cvta";
    case Op::kRcp: return "rcp";
    case Op::kSqrt: return "sqrt";
    case Op::kPack: return "pack";
    case Op::kUnpack: return "unpack";
    case Op::kPrmt: return "prmt";
    case Op::kBfe: return "bfe";
    case Op::kBfi: return "bfi";
    case Op::kPopc: return "popc";
    case Op::kClz: return "clz";
    case Op::kBrev: return "brev";
    case Op::kLop3: return "lop3";
    case Op::kShf: return "shf";
    case Op::kCvtPack: return "cvt";
    case Op::kApprox: return "approx";  // inst_name writes the form
    default: return "op";
  }
}

const char* cmp_name(Cmp c) {
  static constexpr const char* kNames[] = {"eq", "ne",  "lt",  "le",  "gt",  "ge",  "lo",  "ls",  "hi",
                                           "hs", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
  return kNames[static_cast<int>(c)];
}

// The domain size of a leaf tensor (every value when its domain is empty; 2^64 saturates).
std::uint64_t domain_size(const LeafTensor& t) {
  if (!t.domain.empty()) return t.domain.size();
  return t.element_bits >= 64 ? ~std::uint64_t{0} : std::uint64_t{1} << t.element_bits;
}

// The index of v in t's domain (its position among the admitted values), or nullopt.
std::optional<std::uint64_t> domain_index(const LeafTensor& t, std::uint64_t v) {
  if (t.domain.empty()) {
    if (t.element_bits < 64 && v >> t.element_bits != 0) return std::nullopt;
    return v;
  }
  const auto it = std::lower_bound(t.domain.begin(), t.domain.end(), v);
  if (it == t.domain.end() || *it != v) return std::nullopt;
  return static_cast<std::uint64_t>(it - t.domain.begin());
}
std::uint64_t domain_value(const LeafTensor& t, std::uint64_t i) { return t.domain.empty() ? i : t.domain[i]; }

// A node's name without its operands: "fma.rn.f32", "setp.lt.f32[1]", "mma.sync...[lane 3, d1]",
// "bits[0+16]", "concat", "load#0", "lemma#2", "operands" (a tuple).
std::string node_head(const Node& n) {
  switch (n.kind) {
    case NodeKind::kInst:
      if (n.key.op == Op::kMma && n.key.ndst != 0)
        return fmt::format("{}[lane {}, d{}]", inst_name(n.key), n.aux64 / n.key.ndst, n.aux64 % n.key.ndst);
      return n.aux64 != 0 ? fmt::format("{}[{}]", inst_name(n.key), n.aux64) : inst_name(n.key);
    case NodeKind::kExtract: return fmt::format("bits[{}+{}]", n.aux64, n.width);
    case NodeKind::kConcat: return "concat";
    case NodeKind::kLoad: return fmt::format("load#{}", n.aux64);
    case NodeKind::kTable: return fmt::format("lemma#{}", n.aux64);
    case NodeKind::kTuple: return "operands";
    default: return "?";
  }
}

}  // namespace

// The PTX mnemonic of an instruction key ("fma.rn.f32", "mul.lo.u32", "cvt.rn.f16.f32").
std::string inst_name(const InstKey& k) {
  if (k.op == Op::kMma) return mma_name(k.mode);
  if (k.op == Op::kApprox)  // "ex2.approx.ftz.f32", "div.full.f32"
    return fmt::format("{}{}.{}", approx_name(static_cast<Approx>(k.mode)), k.ftz ? ".ftz" : "", type_name(k.type));
  std::string s = op_name(k.op);
  if (k.op == Op::kSetp) {
    s += fmt::format(".{}", cmp_name(k.cmp));
    if (k.bool_op != BoolOp::kNone) s += k.bool_op == BoolOp::kAnd ? ".and" : k.bool_op == BoolOp::kOr ? ".or" : ".xor";
  }
  if (k.part == MulPart::kLo && (k.op == Op::kMul || k.op == Op::kMad)) s += ".lo";
  if (k.part == MulPart::kHi) s += ".hi";
  if (k.part == MulPart::kWide) s += ".wide";
  if (k.op == Op::kShf)
    s += fmt::format("{}{}", (k.mode & 1) != 0 ? ".r" : ".l", (k.mode & 2) != 0 ? ".clamp" : ".wrap");
  if (k.op == Op::kPrmt && k.mode != 0) {
    static constexpr const char* kModes[] = {"", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"};
    s += kModes[k.mode < 7 ? k.mode : 0];
  }
  switch (k.rnd) {
    case Rnd::kRn: s += ".rn"; break;
    case Rnd::kRz: s += ".rz"; break;
    case Rnd::kRni: s += ".rni"; break;
    case Rnd::kRzi: s += ".rzi"; break;
    case Rnd::kNone: break;
  }
  if (k.ftz) s += ".ftz";
  if (k.sat) s += ".sat";
  s += fmt::format(".{}", type_name(k.type));  // (not "." + string: GCC 12's -Wstringop-overflow false positive)
  if (k.op == Op::kCvt || k.op == Op::kCvtPack) s += fmt::format(".{}", type_name(k.src_type));
  return s;
}

// ---- evaluation ----

// One node's bits from its operands' bits v[0..nops) (a leaf's from `leaf_bits`); a kTable
// reads its lemma's table. nullptr, or why the bits are undefined (into *why).
std::uint64_t Graph::step(const Node& n, const std::uint64_t* v, std::uint64_t leaf_bits, std::string* why) const {
  switch (n.kind) {
    case NodeKind::kConst: return n.aux64;
    case NodeKind::kLeaf: return leaf_bits & width_mask(n.width);
    case NodeKind::kExtract: return (v[0] >> n.aux64) & width_mask(n.width);
    case NodeKind::kConcat: return v[0] | v[1] << nodes_[n.ops[0]].width;  // the low part is < 64 bits
    case NodeKind::kTuple: return 0;
    case NodeKind::kInst: {
      if (n.key.op == Op::kMma) {  // opaque: no value here (module.hpp's card)
        *why = mma_gpu_only(n.key.mode);
        return 0;
      }
      const Inst in = n.key.to_inst();
      std::uint64_t s[5] = {v[0], v[1], v[2], v[3], 0}, d[4] = {};
      if (const char* r = ConcretePolicy::alu(in, s, d)) {
        // An opaque approx node has no value here: its reason names it already.
        *why = n.key.op == Op::kApprox ? std::string(r) : fmt::format("{}: {}", inst_name(n.key), r);
        return 0;
      }
      return d[n.aux64];
    }
    case NodeKind::kLoad: {
      const auto& bytes = snapshots_[n.aux64];
      const std::uint64_t base = snapshot_base_[n.aux64];
      const unsigned size = (n.width + 7) / 8;
      if (v[0] < base || v[0] - base > bytes.size() || bytes.size() - (v[0] - base) < size) {
        *why = fmt::format("a load of {} bytes at 0x{:x} outside its table (0x{:x}, {} bytes)", size, v[0], base,
                           bytes.size());
        return 0;
      }
      return ConcretePolicy::load(bytes.data() + (v[0] - base), size, false) & width_mask(n.width);
    }
    case NodeKind::kTable: {
      const Lemma& lm = lemmas_[n.aux64];
      std::uint64_t index = 0;
      for (int i = 0; i < n.nops; ++i) {
        const LeafTensor& t = tensors_[lm.tensors[i]];
        const auto at = domain_index(t, v[i]);
        if (!at) {
          *why = fmt::format("lemma {}: {} value 0x{:x} is outside its admitted values", n.aux64, t.name, v[i]);
          return 0;
        }
        index = index * domain_size(t) + *at;
      }
      return lemma_tables_[n.aux64][index];
    }
  }
  return 0;
}

// step() under the lazy rule for undefined results (graph.hpp, evaluate): an instruction whose
// result is undefined is *poisoned* (its cause kept in `causes`) rather than an error; a selp is
// poisoned only when its predicate or the operand it chooses is, and reads no other; every other
// node over a poisoned operand is poisoned. Errors (false, *why): a load at a poisoned address (the
// load ran on the GPU at an undefined address), a load outside its table, a table outside its
// domain. `poisoned[i]` / `*out_poison`: 0 defined, else 1 + the index of the cause in `causes`.
bool Graph::lazy_step(NodeId id, const Node& n, const std::uint64_t* v, const std::uint32_t* poisoned,
                      std::uint64_t leaf_bits, std::uint64_t* out, std::uint32_t* out_poison,
                      std::vector<Poison>& causes, std::string* why) const {
  *out_poison = 0, *out = 0;
  if (n.kind == NodeKind::kInst && n.key.op == Op::kSelp) {
    const std::uint32_t p = poisoned[2] != 0 ? poisoned[2] : poisoned[(v[2] & 1) != 0 ? 0 : 1];
    if (p != 0) return *out_poison = p, true;
  } else {
    for (int i = 0; i < n.nops; ++i) {
      if (poisoned[i] == 0) continue;
      if (n.kind == NodeKind::kLoad) {
        const Poison& c = causes[poisoned[i] - 1];
        *why = fmt::format("a table load at an undefined address ({}: {})", describe(c.node, 1), c.why);
        return false;
      }
      return *out_poison = poisoned[i], true;
    }
  }
  std::string w;
  *out = step(n, v, leaf_bits, &w);
  if (w.empty()) return true;
  *out = 0;
  if (n.kind == NodeKind::kInst) {
    causes.push_back({id, std::move(w)});
    *out_poison = static_cast<std::uint32_t>(causes.size());
    return true;
  }
  *why = std::move(w);
  return false;
}

// The nodes below `roots` (roots included), ascending: operands come before their users.
// Small subgraphs (a lemma's) are searched in `out` itself; past 64 nodes a hash set takes over.
// `whole`: a mark per node of the table instead (the roots of a proof reach most of it).
std::vector<NodeId> Graph::below(const std::vector<NodeId>& roots, bool whole) const {
  std::vector<NodeId> out, stack(roots.begin(), roots.end());
  if (whole) {
    std::vector<bool> mark(nodes_.size(), false);
    while (!stack.empty()) {
      const NodeId id = stack.back();
      stack.pop_back();
      if (mark[id]) continue;
      mark[id] = true;
      const Node& n = nodes_[id];
      for (int i = 0; i < n.nops; ++i) stack.push_back(n.ops[i]);
    }
    for (std::size_t id = 0; id < mark.size(); ++id) {
      if (mark[id]) out.push_back(static_cast<NodeId>(id));
    }
    return out;
  }
  std::unordered_set<NodeId> seen;
  while (!stack.empty()) {
    const NodeId id = stack.back();
    stack.pop_back();
    if (out.size() <= 64) {
      if (std::find(out.begin(), out.end(), id) != out.end()) continue;
      if (out.size() == 64) seen.insert(out.begin(), out.end());
    }
    if (out.size() >= 64 && !seen.insert(id).second) continue;
    out.push_back(id);
    const Node& n = nodes_[id];
    for (int i = 0; i < n.nops; ++i) stack.push_back(n.ops[i]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Expected<std::vector<std::uint64_t>> Graph::evaluate_many(
    const std::vector<NodeId>& roots, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& leaves) const {
  std::unordered_map<std::uint64_t, std::uint64_t> leaf_bits(leaves.begin(), leaves.end());
  const std::vector<NodeId> ids = below(roots, roots.size() > 1);
  std::unordered_map<NodeId, std::uint64_t> value;
  value.reserve(ids.size());
  std::unordered_map<NodeId, std::uint32_t> poison;  // the poisoned nodes only (lazy_step)
  std::vector<Poison> causes;
  std::string why;
  for (const NodeId id : ids) {
    const Node& n = nodes_[id];
    std::uint64_t v[4] = {};
    std::uint32_t pv[4] = {};
    for (int i = 0; i < n.nops; ++i) {
      v[i] = value[n.ops[i]];
      if (!poison.empty()) {
        if (const auto it = poison.find(n.ops[i]); it != poison.end()) pv[i] = it->second;
      }
    }
    std::uint64_t lb = 0;
    if (n.kind == NodeKind::kLeaf) {
      const auto it = leaf_bits.find(n.aux64);
      if (it == leaf_bits.end()) return Error{fmt::format("graph: {} has no value", describe(id, 0))};
      lb = it->second;
    }
    std::uint32_t p = 0;
    if (!lazy_step(id, n, v, pv, lb, &value[id], &p, causes, &why))
      return Error{fmt::format("graph: {}: {}", describe(id, 1), why)};
    if (p != 0) poison.emplace(id, p);
  }
  std::vector<std::uint64_t> out;
  out.reserve(roots.size());
  for (const NodeId r : roots) {
    if (const auto it = poison.find(r); it != poison.end()) {
      const Poison& c = causes[it->second - 1];
      return Error{fmt::format("graph: {}: {}", describe(c.node, 1), c.why)};
    }
    out.push_back(value[r]);
  }
  return out;
}

Expected<std::uint64_t> Graph::evaluate(NodeId id,
                                        const std::vector<std::pair<std::uint64_t, std::uint64_t>>& leaves) const {
  auto r = evaluate_many({id}, leaves);
  if (!r) return r.error();
  return r->front();
}

// ---- lemmas ----

// A narrow subgraph made ready to evaluate on every combination of its support: its nodes in
// topological order with operands as local indices, leaves as support positions.
struct Graph::Pattern {
  std::vector<NodeId> ids;                        // ascending
  std::vector<std::array<std::uint32_t, 4>> ops;  // local operand indices
  std::vector<int> position;                      // a leaf's support position, else -1
  std::string key;                                // the shape, leaves by position, and their tensors
};

Graph::Pattern Graph::pattern_of(NodeId root, const std::vector<std::uint64_t>& support) const {
  Pattern p;
  p.ids = below({root});
  p.ops.resize(p.ids.size());
  p.position.assign(p.ids.size(), -1);
  const auto local = [&](NodeId id) {
    return static_cast<std::uint32_t>(std::lower_bound(p.ids.begin(), p.ids.end(), id) - p.ids.begin());
  };
  std::string& key = p.key;
  const auto put = [&](std::uint64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  for (std::size_t i = 0; i < p.ids.size(); ++i) {
    const Node& n = nodes_[p.ids[i]];
    for (int j = 0; j < n.nops; ++j) p.ops[i][j] = local(n.ops[j]);
    Node shape = n;
    if (n.kind == NodeKind::kLeaf) {
      p.position[i] = static_cast<int>(std::lower_bound(support.begin(), support.end(), n.aux64) - support.begin());
      shape.aux64 = static_cast<std::uint64_t>(p.position[i]);
      put(leaf_ref(n.aux64).tensor);
    }
    for (int j = 0; j < 4; ++j) shape.ops[j] = j < n.nops ? p.ops[i][j] : kNoNode;
    key.append(reinterpret_cast<const char*>(&shape.kind), 1);
    key.append(reinterpret_cast<const char*>(&shape.width), 1);
    key.append(reinterpret_cast<const char*>(&shape.nops), 1);
    put(shape.aux64);
    if (n.kind == NodeKind::kInst) {
      const InstKey& k = n.key;
      const std::uint8_t f[] = {static_cast<std::uint8_t>(k.op),
                                static_cast<std::uint8_t>(k.type.kind),
                                k.type.bits,
                                k.type.x2,
                                k.type.bf,
                                static_cast<std::uint8_t>(k.src_type.kind),
                                k.src_type.bits,
                                k.src_type.x2,
                                k.src_type.bf,
                                static_cast<std::uint8_t>(k.rnd),
                                static_cast<std::uint8_t>(k.cmp),
                                static_cast<std::uint8_t>(k.bool_op),
                                static_cast<std::uint8_t>(k.part),
                                k.ftz,
                                k.sat,
                                k.neg_src,
                                static_cast<std::uint8_t>(k.space),
                                k.mode,
                                k.vec,
                                k.ndst,
                                k.nsrc};
      key.append(reinterpret_cast<const char*>(f), sizeof f);
    }
    for (int j = 0; j < n.nops; ++j) put(p.ops[i][j]);
  }
  return p;
}

// The shape as text, leaves as #0, #1, ...: "mul.rn.f16(mul.rn.f16(#0, 0x7400), #1)" (shared
// subterms printed again; long texts cut).
std::string Graph::pattern_text(NodeId root, const std::vector<std::uint64_t>& support) const {
  std::string out;
  const std::function<void(NodeId, int)> go = [&](NodeId id, int depth) {
    if (out.size() > 600) return;
    const Node& n = nodes_[id];
    if (n.kind == NodeKind::kLeaf) {
      out += fmt::format("#{}", std::lower_bound(support.begin(), support.end(), n.aux64) - support.begin());
      return;
    }
    if (n.kind == NodeKind::kConst) {
      out += fmt::format("0x{:x}", n.aux64);
      return;
    }
    if (depth > 40) {
      out += "…";
      return;
    }
    out += node_head(n);
    out += "(";
    for (int i = 0; i < n.nops; ++i) {
      if (i > 0) out += ", ";
      go(n.ops[i], depth + 1);
    }
    out += ")";
  };
  go(root, 0);
  if (out.size() > 600) out = out.substr(0, 600) + "…";
  return out;
}

// The lemma of a maximal narrow node: from the pattern cache, or its table computed on every
// combination of the support's admitted values (first leaf slowest) and shared with any lemma
// of equal digest (the digest covers the domains, the result width and the table).
Expected<std::uint32_t> Graph::lemma_for(NodeId root, const std::vector<std::uint64_t>& support) {
  Pattern p = pattern_of(root, support);
  if (const auto it = pattern_cache_.find(p.key); it != pattern_cache_.end()) return it->second;
  std::vector<const LeafTensor*> ts;
  std::vector<std::uint32_t> tensor_ids;
  std::uint64_t entries = 1;
  for (const std::uint64_t leaf : support) {
    tensor_ids.push_back(leaf_ref(leaf).tensor);
    ts.push_back(&tensors_[tensor_ids.back()]);
    entries *= domain_size(*ts.back());
  }
  const std::uint8_t width = nodes_[root].width;
  std::vector<std::uint64_t> table(entries);
  std::vector<std::uint64_t> val(p.ids.size()), leaf_val(support.size());
  std::vector<std::uint32_t> poisoned(p.ids.size());  // lazy_step's rule (a selp's untaken side)
  std::vector<Poison> causes;
  std::string why;
  for (std::uint64_t e = 0; e < entries; ++e) {
    for (std::uint64_t i = support.size(), rest = e; i-- > 0;) {
      const std::uint64_t size = domain_size(*ts[i]);
      leaf_val[i] = domain_value(*ts[i], rest % size);
      rest /= size;
    }
    causes.clear();
    const auto undefined = [&](const std::string& reason) {
      std::string at;
      for (std::size_t j = 0; j < support.size(); ++j) at += fmt::format("{}{}=0x{:x}", j ? ", " : "", j, leaf_val[j]);
      return Error{fmt::format("lemma {}: undefined at #{}: {}", pattern_text(root, support), at, reason)};
    };
    for (std::size_t i = 0; i < p.ids.size(); ++i) {
      const Node& n = nodes_[p.ids[i]];
      std::uint64_t v[4] = {};
      std::uint32_t pv[4] = {};
      for (int j = 0; j < n.nops; ++j) v[j] = val[p.ops[i][j]], pv[j] = poisoned[p.ops[i][j]];
      if (!lazy_step(p.ids[i], n, v, pv, p.position[i] >= 0 ? leaf_val[static_cast<std::size_t>(p.position[i])] : 0,
                     &val[i], &poisoned[i], causes, &why))
        return undefined(why);
    }
    if (poisoned.back() != 0) return undefined(causes[poisoned.back() - 1].why);
    table[e] = val.back();
  }
  Sha256 h;
  std::vector<std::uint8_t> buf;
  const std::string tag = "bitproof-lemma-v1";
  h.update(tag.data(), tag.size());
  put_le(buf, width, 1);
  put_le(buf, support.size(), 4);
  for (const LeafTensor* t : ts) {
    put_le(buf, domain_size(*t), 8);
    put_le(buf, t->element_bits, 1);
    for (const std::uint64_t d : t->domain) put_le(buf, d, 8);
  }
  const int bytes = (width + 7) / 8;
  for (const std::uint64_t v : table) {
    put_le(buf, v, bytes);
    if (buf.size() >= (1u << 16)) h.update(buf.data(), buf.size()), buf.clear();
  }
  h.update(buf.data(), buf.size());
  const std::string digest = to_hex(h.finish());
  const std::string text = pattern_text(root, support);
  std::uint32_t index = 0;
  if (const auto it = digest_index_.find(digest); it != digest_index_.end()) {
    index = it->second;
    Lemma& lm = lemmas_[index];
    if (std::find(lm.patterns.begin(), lm.patterns.end(), text) == lm.patterns.end()) lm.patterns.push_back(text);
  } else {
    index = static_cast<std::uint32_t>(lemmas_.size());
    Lemma lm;
    lm.pattern = text;
    lm.patterns = {text};
    lm.tensors = tensor_ids;
    lm.digest = digest;
    lm.entries = entries;
    lm.width = width;
    lemmas_.push_back(std::move(lm));
    lemma_tables_.push_back(std::move(table));
    digest_index_.emplace(digest, index);
  }
  pattern_cache_.emplace(std::move(p.key), index);
  return index;
}

// Re-interns a node over new operands (canonical forms and simplifications applied again).
NodeId Graph::rebuild(NodeId id, const NodeId* ops) {
  const Node n = nodes_[id];
  switch (n.kind) {
    case NodeKind::kExtract: return extract(ops[0], static_cast<std::uint8_t>(n.aux64), n.width);
    case NodeKind::kConcat: return concat(ops[0], ops[1]);
    case NodeKind::kLoad: return load(static_cast<std::uint32_t>(n.aux64), ops[0], n.width);
    case NodeKind::kTuple: {  // re-interned as it is, over the new operands
      Node t = n;
      std::copy(ops, ops + n.nops, t.ops.begin());
      return intern(t);
    }
    case NodeKind::kInst: {
      if (n.key.op == Op::kMma) {
        Node t = n;
        t.ops[0] = ops[0];
        return intern(t);
      }
      NodeId out[4] = {kNoNode, kNoNode, kNoNode, kNoNode};
      build(n.key, ops, out);
      return out[n.aux64];
    }
    default: return id;
  }
}

// A node the lemma pass made in place of another keeps the PTX lines that made the old one, so
// a difference found after the pass still names its line.
void Graph::keep_origins(NodeId from, NodeId to) {
  for (const int arm : {0, 1}) {
    if (const std::uint32_t line = origin(from, arm); line != 0) note_origin(to, arm, line);
  }
}

Expected<std::vector<NodeId>> Graph::apply_lemmas(const std::vector<NodeId>& roots, std::uint64_t max_entries) {
  const std::vector<NodeId> ids = below(roots, true);
  const std::size_t count = ids.size();
  std::vector<std::uint32_t> local_of(nodes_.size(), 0);
  for (std::size_t i = 0; i < count; ++i) local_of[ids[i]] = static_cast<std::uint32_t>(i);
  const auto local = [&](NodeId id) { return static_cast<std::size_t>(local_of[id]); };
  // Support sets: at most 4 leaves (a table node's operands), domain product <= max_entries;
  // kWide otherwise. Set 0 is the empty set.
  constexpr std::uint32_t kWide = 0xFFFFFFFFu;
  std::vector<std::vector<std::uint64_t>> sets(1);
  std::vector<std::uint64_t> product(1, 1);
  std::vector<std::uint32_t> set_of(count, 0);
  std::vector<std::uint8_t> used_wide(count, 0);
  for (std::size_t i = 0; i < count; ++i) {
    const Node& n = nodes_[ids[i]];
    if (n.kind == NodeKind::kLeaf) {
      const std::uint64_t size = domain_size(tensors_[leaf_ref(n.aux64).tensor]);
      if (size > max_entries) {
        set_of[i] = kWide;
      } else {
        sets.push_back({n.aux64});
        product.push_back(size);
        set_of[i] = static_cast<std::uint32_t>(sets.size() - 1);
      }
      continue;
    }
    // An opaque node (approx, mma) is never inside a lemma (its table could not be evaluated): it counts
    // as not narrow, so the lemma pass stops at it, and its narrow operands may become tables.
    // A tuple likewise (its value 0 stands for nothing: a table of it would merge every tuple).
    std::uint32_t s = (n.kind == NodeKind::kInst && is_opaque(n.key)) || n.kind == NodeKind::kTuple ? kWide : 0;
    for (int j = 0; j < n.nops && s != kWide; ++j) {
      const std::uint32_t o = set_of[local(n.ops[j])];
      if (o == kWide) {
        s = kWide;
      } else if (o != s && o != 0) {
        if (s == 0) {
          s = o;
          continue;
        }
        std::vector<std::uint64_t> u;
        std::set_union(sets[s].begin(), sets[s].end(), sets[o].begin(), sets[o].end(), std::back_inserter(u));
        if (u == sets[s]) continue;
        if (u == sets[o]) {
          s = o;
          continue;
        }
        std::uint64_t prod = 1;
        for (const std::uint64_t leaf : u) {
          const std::uint64_t size = domain_size(tensors_[leaf_ref(leaf).tensor]);
          prod = prod > max_entries / size ? max_entries + 1 : prod * size;
        }
        if (u.size() > 4 || prod > max_entries) {
          s = kWide;
        } else {
          sets.push_back(std::move(u));
          product.push_back(prod);
          s = static_cast<std::uint32_t>(sets.size() - 1);
        }
      }
    }
    set_of[i] = s;
    if (s == kWide) {
      for (int j = 0; j < n.nops; ++j) used_wide[local(n.ops[j])] = 1;
    }
  }
  for (const NodeId r : roots) used_wide[local(r)] = 1;
  std::vector<NodeId> now(count);
  for (std::size_t i = 0; i < count; ++i) {
    const NodeId id = ids[i];
    const Node n = nodes_[id];
    const std::uint32_t s = set_of[i];
    if (s != kWide) {
      now[i] = id;
      const bool replace = used_wide[i] != 0 && s != 0 && n.kind != NodeKind::kLeaf && n.kind != NodeKind::kConst &&
                           n.kind != NodeKind::kTable;
      if (!replace) continue;
      auto lm = lemma_for(id, sets[s]);
      if (!lm) return lm.error();
      Node t;
      t.kind = NodeKind::kTable;
      t.width = n.width;
      t.nops = static_cast<std::uint8_t>(sets[s].size());
      for (std::size_t j = 0; j < sets[s].size(); ++j) {
        const LeafRef ref = leaf_ref(sets[s][j]);
        t.ops[j] = leaf(ref.tensor, ref.element);
      }
      t.aux64 = *lm;
      ++lemmas_[*lm].uses;
      now[i] = intern(t);
      keep_origins(id, now[i]);
      continue;
    }
    NodeId ops[4] = {kNoNode, kNoNode, kNoNode, kNoNode};
    bool changed = false;
    for (int j = 0; j < n.nops; ++j) {
      ops[j] = now[local(n.ops[j])];
      changed = changed || ops[j] != n.ops[j];
    }
    now[i] = changed ? rebuild(id, ops) : id;
    if (changed) keep_origins(id, now[i]);
  }
  std::vector<NodeId> out;
  out.reserve(roots.size());
  for (const NodeId r : roots) out.push_back(now[local(r)]);
  return out;
}

// ---- differences and text ----

Difference Graph::first_difference(NodeId a, NodeId b) const {
  Difference d;
  for (;;) {
    if (a == b) return d;  // none: a and b stay kNoNode
    const Node& na = nodes_[a];
    const Node& nb = nodes_[b];
    Node ha = na, hb = nb;
    ha.ops = hb.ops = {};
    if (!(ha == hb) || na.nops == 0) break;
    int i = 0;
    while (i < na.nops && na.ops[i] == nb.ops[i]) ++i;
    NodeId next_a = na.ops[i], next_b = nb.ops[i];
    // Operands a canonical form sorted apart (a: {p, c}, b: {c, q}): the unmatched ones pair.
    if (na.kind == NodeKind::kInst) {
      for (const CanonRule& r : canon_rules()) {
        if (!r.applies(na.key)) continue;
        const NodeId a0 = na.ops[r.first], a1 = na.ops[r.second], b0 = nb.ops[r.first], b1 = nb.ops[r.second];
        if (a1 == b0 && a0 != b1) next_a = a0, next_b = b1;
        if (a0 == b1 && a1 != b0) next_a = a1, next_b = b0;
      }
    }
    a = next_a, b = next_b;
    ++d.depth;
  }
  d.a = a, d.b = b;
  const Node& na = nodes_[a];
  const Node& nb = nodes_[b];
  if (na.kind == NodeKind::kTable && nb.kind == NodeKind::kTable && na.ops == nb.ops && na.nops == nb.nops) {
    const auto& ta = lemma_tables_[na.aux64];
    const auto& tb = lemma_tables_[nb.aux64];
    for (std::size_t e = 0; e < ta.size() && e < tb.size(); ++e) {
      if (ta[e] == tb[e]) continue;
      std::vector<std::uint64_t> values(na.nops);
      for (std::uint64_t i = na.nops, rest = e; i-- > 0;) {
        const LeafTensor& t = tensors_[leaf_ref(nodes_[na.ops[i]].aux64).tensor];
        values[i] = domain_value(t, rest % domain_size(t));
        rest /= domain_size(t);
      }
      d.counterexample = std::move(values);
      d.result_a = ta[e], d.result_b = tb[e];
      break;
    }
  }
  return d;
}

std::string Graph::describe(NodeId id, int depth) const {
  const Node& n = nodes_[id];
  switch (n.kind) {
    case NodeKind::kConst: return fmt::format("0x{:x}", n.aux64);
    case NodeKind::kLeaf: {
      const LeafRef r = leaf_ref(n.aux64);
      return fmt::format("{}[{}]", tensors_[r.tensor].name, r.element);
    }
    default: break;
  }
  std::string head = node_head(n);
  if (depth <= 0) return head + "(…)";
  head += "(";
  for (int i = 0; i < n.nops; ++i) head += (i > 0 ? ", " : "") + describe(n.ops[i], depth - 1);
  return head + ")";
}

}  // namespace bitproof::ptx::sym
