#include "operator/kernel_prove.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>
#include <string_view>

#include "ptx/graph.hpp"
#include "ptx/ptx.hpp"
#include "ptx/symbolic.hpp"

namespace bitproof::op {

namespace sym = ptx::sym;

namespace {

// The module's lines, without leading blanks (1-based: lines[0] is line 1).
std::vector<std::string_view> trimmed_lines(const std::string& text) {
  std::vector<std::string_view> lines;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view l(text.data() + pos, end - pos);
    const std::size_t first = l.find_first_not_of(" \t");
    lines.push_back(first == std::string_view::npos ? std::string_view() : l.substr(first));
    pos = end + 1;
  }
  return lines;
}

// Reads unsigned numbers separated by blanks from `l`, at most `count`.
std::vector<unsigned> numbers(std::string_view l, std::size_t count) {
  std::vector<unsigned> out;
  const char* p = l.data();
  const char* e = l.data() + l.size();
  while (out.size() < count) {
    while (p < e && (*p == ' ' || *p == '\t')) ++p;
    unsigned v = 0;
    const auto r = std::from_chars(p, e, v);
    if (r.ec != std::errc{}) break;
    out.push_back(v);
    p = r.ptr;
  }
  return out;
}

}  // namespace

std::string ptx_source_line(const std::string& ptx, std::uint32_t line) {
  const std::vector<std::string_view> lines = trimmed_lines(ptx);
  // `.file N "path"` directives: nvcc writes them after the functions, so all are read first.
  std::map<unsigned, std::string> files;
  for (std::string_view l : lines) {
    if (!l.starts_with(".file")) continue;
    const std::vector<unsigned> n = numbers(l.substr(5), 1);
    const std::size_t q0 = l.find('"'), q1 = q0 == std::string_view::npos ? q0 : l.find('"', q0 + 1);
    if (n.empty() || q1 == std::string_view::npos) continue;
    std::string name(l.substr(q0 + 1, q1 - q0 - 1));
    if (const std::size_t slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
    files[n[0]] = name;
  }
  // The last `.loc FILE LINE COLUMN` before `line` within its function.
  std::string at;
  for (std::uint32_t i = 0; i + 1 < line && i < lines.size(); ++i) {
    const std::string_view l = lines[i];
    if (l.starts_with(".loc")) {
      const std::vector<unsigned> n = numbers(l.substr(4), 2);
      if (n.size() < 2) continue;
      const auto f = files.find(n[0]);
      at = n[1] == 0 ? "" : fmt::format("{}:{}", f == files.end() ? fmt::format("file {}", n[0]) : f->second, n[1]);
    } else if (l.starts_with(".entry") || l.starts_with(".visible") || l.starts_with(".func")) {
      at.clear();  // a new function: no line in force until its first .loc
    }
  }
  return at;
}

namespace {

using sym::NodeId;

// What one leaf tensor of the graph is, for messages and counterexamples.
struct LeafInfo {
  std::string input;           // the spec input or output
  std::string kind;            // LeafValue::kind
  std::uint64_t per_row = 0;   // leaves a row of the input holds
  std::uint64_t per_leaf = 1;  // the input's elements a leaf holds (codes: 2)
  bool before = false;         // an output's contents before the launches
};

std::string domain_text(const sym::LeafTensor& t) {
  if (t.domain.empty()) return fmt::format("all {}", std::uint64_t{1} << t.element_bits);
  std::string s;
  for (std::size_t i = 0; i < t.domain.size();) {
    std::size_t j = i;
    while (j + 1 < t.domain.size() && t.domain[j + 1] == t.domain[j] + 1) ++j;
    s += (s.empty() ? "" : ", ") +
         (j == i ? fmt::format("{}", t.domain[i]) : fmt::format("{}..{}", t.domain[i], t.domain[j]));
    i = j + 1;
  }
  return s;
}

class KernelProver {
 public:
  KernelProver(const AbSpec& spec, const std::vector<KernelModule>& modules, const KernelSet& set,
               const std::map<std::string, ScaleSet>& scales, const KernelProveOptions& options)
      : spec_(spec), modules_(modules), set_(set), scales_(scales), options_(options) {}

  Expected<TraceResult> run() {
    if (auto ok = register_leaves(); !ok) return ok.error();
    // Room for about 3.5 nodes an input leaf (a GEMV: the leaf, its conversion, its FMA, the sums) up front:
    // the node vector then does not double while 30 M nodes are in it (a transient 2x at full size).
    std::uint64_t leaves = 0;
    for (const sym::LeafTensor& t : graph_.tensors()) leaves += t.elements;
    graph_.reserve(static_cast<std::size_t>(leaves * 7 / 2 + 4096));
    std::array<std::map<std::string, std::vector<NodeId>>, 2> outs;
    for (int arm = 0; arm < 2; ++arm) {
      auto o = trace_arm(arm);
      if (!o) return o.error();
      outs[arm] = std::move(*o);
    }
    if (auto ok = refuse_old_contents(outs); !ok) return ok.error();
    return compare(outs);
  }

 private:
  // ---- leaves ----
  Expected<Ok> register_leaves() {
    for (const InputSpec& in : spec_.inputs) {
      if (in.dtype == DType::kF16) {
        add(in.name, TensorPart::kWhole, sym::LeafTensor{in.name, in.rows * in.cols, 16, {}},
            LeafInfo{in.name, "f16", in.cols, 1, false});
        continue;
      }
      add(in.name, TensorPart::kCodes, sym::LeafTensor{in.name + " (codes)", in.rows * in.cols / 2, 8, {}},
          LeafInfo{in.name, "e2m1x2", in.cols / 2, 2, false});
      const auto s = scales_.find(in.name);
      if (s == scales_.end()) return Error{fmt::format("{}: inputs: no scale set for \"{}\"", spec_.path, in.name)};
      std::vector<std::uint64_t> domain;
      for (unsigned b = 0; b < 256; ++b) {
        if (s->second.present[b]) domain.push_back(b);
      }
      if (domain.empty()) return Error{fmt::format("{}: inputs: \"{}\" admits no scale byte", spec_.path, in.name)};
      add(in.name, TensorPart::kScales,
          sym::LeafTensor{in.name + " (scales)", in.rows * in.cols / kMxBlock, 8, std::move(domain)},
          LeafInfo{in.name, "ue8m0", in.cols / kMxBlock, kMxBlock, false});
    }
    for (const OutputDecl& d : spec_.output_decls) {
      before_[d.name] = static_cast<std::uint32_t>(info_.size());
      graph_.add_tensor(sym::LeafTensor{d.name + " (before the launches)", d.rows * d.cols, 16, {}});
      info_.push_back(LeafInfo{d.name, d.dtype == OutputType::kBf16 ? "bf16" : "f16", d.cols, 1, true});
    }
    return Ok{};
  }

  void add(const std::string& name, TensorPart part, sym::LeafTensor t, LeafInfo info) {
    leaf_of_[{name, part}] = graph_.add_tensor(std::move(t));
    info_.push_back(std::move(info));
  }

  // ---- one arm's stages, symbolically ----
  Expected<std::map<std::string, std::vector<NodeId>>> trace_arm(int arm) {
    ptx::SymMemory memory;
    std::map<std::pair<std::vector<std::string>, TensorPart>, std::size_t> inputs;
    std::map<std::string, std::size_t> outputs;
    auto output = [&](const std::string& name) -> Expected<std::size_t> {
      if (const auto it = outputs.find(name); it != outputs.end()) return it->second;
      auto b = memory.add_input(graph_, before_.at(name));
      if (b) outputs[name] = *b;
      return b;
    };
    auto input = [&](const std::vector<std::string>& tensors, TensorPart part) -> Expected<std::size_t> {
      const auto key = std::make_pair(tensors, part);
      if (const auto it = inputs.find(key); it != inputs.end()) return it->second;
      std::vector<std::uint32_t> ids;
      for (const std::string& t : tensors) ids.push_back(leaf_of_.at({t, part}));
      // A joined buffer's bytes are the joined tensors' leaves: the separate arm's w.kv_a[e] and
      // the fused arm's row of it are the same leaf node.
      auto b = ids.size() == 1 ? memory.add_input(graph_, ids[0]) : memory.add_joined(graph_, ids);
      if (b) inputs[key] = *b;
      return b;
    };
    const auto& stages = spec_.arms[arm].stages;
    for (std::size_t s = 0; s < stages.size(); ++s) {
      const KernelLaunch& l = *stages[s].launch;
      std::vector<ptx::Arg> args;
      for (const LaunchArg& a : l.args) {
        Expected<std::size_t> b = std::size_t{0};
        switch (a.kind) {
          case LaunchArg::Kind::kU32:
          case LaunchArg::Kind::kI32:
          case LaunchArg::Kind::kF32: args.push_back(ptx::Arg{false, 0, a.bits, 4}); continue;
          case LaunchArg::Kind::kU64: args.push_back(ptx::Arg::u64(a.bits)); continue;
          case LaunchArg::Kind::kOutput: b = output(a.tensors[0]); break;
          case LaunchArg::Kind::kTensor:
          case LaunchArg::Kind::kJoined:
            // a tensor no input names: an earlier stage's output
            b = spec_.input(a.tensors[0]) == nullptr ? output(a.tensors[0]) : input(a.tensors, a.part);
            break;
        }
        if (!b) return b.error();
        args.push_back(ptx::Arg::buf(*b));
      }
      const KernelSet::Used& u = *set_.find(l.kernel);
      ptx::LaunchConfig config;
      config.grid = {l.grid[0], l.grid[1], l.grid[2]};
      config.block = {l.block[0], l.block[1], l.block[2]};
      config.dynamic_shared = l.shared_bytes;
      auto ran = ptx::trace_launch(set_.modules[u.module], set_.kernel(u), config, args, memory, graph_, arm);
      if (!ran)
        return Error{fmt::format("{}: --prove: arms[{}].stages[{}] ({}, arm \"{}\"): {}", spec_.path, arm, s, l.kernel,
                                 spec_.arms[arm].name, ran.error().message)};
    }
    for (const auto& [key, b] : inputs) {
      if (auto ok = unwritten_input(memory, b, key.first, arm); !ok) return ok.error();
    }
    std::map<std::string, std::vector<NodeId>> out;
    for (const auto& [name, b] : outputs) {
      const OutputDecl& d = *spec_.output_decl(name);
      auto& nodes = out[name];
      nodes.reserve(d.rows * d.cols);
      for (std::uint64_t e = 0; e < d.rows * d.cols; ++e) {
        auto node = memory.element(graph_, b, 2 * e, 2);
        if (!node) return node.error();
        nodes.push_back(*node);
      }
    }
    return out;
  }

  // An input buffer still holds its leaves: a stage that stores into it is refused (the
  // concrete runner refuses it too: the next case would read other values).
  Expected<Ok> unwritten_input(ptx::SymMemory& memory, std::size_t b, const std::vector<std::string>& tensors,
                               int arm) {
    const auto& tags = memory.buffer(b).tags;
    for (std::size_t i = 0; i < tags.size(); ++i) {
      if (tags[i].node != ptx::kOriginal)
        return Error{fmt::format(
            "{}: --prove: arm \"{}\" writes into its input {} (byte {} of its buffer): a "
            "kernel's inputs must read as given",
            spec_.path, spec_.arms[arm].name, tensors.size() == 1 ? tensors[0] : "(joined) " + tensors[0], i)};
    }
    return Ok{};
  }

  // ---- old contents: an element no stage writes, or one computed from the buffer's contents ----
  Expected<Ok> refuse_old_contents(const std::array<std::map<std::string, std::vector<NodeId>>, 2>& outs) {
    // Node ids follow creation order (operands first): one pass marks every node over a
    // before-the-launch leaf.
    std::vector<std::uint8_t> old(graph_.size(), 0);
    for (NodeId id = 0; id < graph_.size(); ++id) {
      const sym::Node& n = graph_.node(id);
      if (n.kind == sym::NodeKind::kLeaf) {
        old[id] = info_[graph_.leaf_ref(n.aux64).tensor].before ? 1 : 0;
        continue;
      }
      for (int i = 0; i < n.nops; ++i) old[id] |= old[n.ops[i]];
    }
    for (int arm = 0; arm < 2; ++arm) {
      for (const std::string& name : spec_.outputs) {
        const auto& nodes = outs[arm].at(name);
        const OutputDecl& d = *spec_.output_decl(name);
        for (std::uint64_t e = 0; e < nodes.size(); ++e) {
          if (old[nodes[e]] == 0) continue;
          const bool unwritten = graph_.node(nodes[e]).kind == sym::NodeKind::kLeaf;
          return Error{
              fmt::format("{}: --prove: arm \"{}\" {} {}[{}][{}]{}", spec_.path, spec_.arms[arm].name,
                          unwritten ? "never writes" : "computes", name, e / d.cols, e % d.cols,
                          unwritten ? ": no stage stores it" : " from the output buffer's contents before the launch")};
        }
      }
    }
    return Ok{};
  }

  // ---- comparison ----
  struct Element {
    std::string output;
    std::uint64_t index = 0;
  };

  Expected<TraceResult> compare(const std::array<std::map<std::string, std::vector<NodeId>>, 2>& outs) {
    TraceResult r;
    r.ptx = true;
    r.compared = spec_.outputs;
    std::vector<Element> differing;
    std::vector<NodeId> roots;
    for (const std::string& name : spec_.outputs) {
      const auto &a = outs[0].at(name), &b = outs[1].at(name);
      r.elements += a.size();
      for (std::uint64_t e = 0; e < a.size(); ++e) {
        if (a[e] == b[e]) continue;
        differing.push_back({name, e});
        roots.push_back(a[e]);
        roots.push_back(b[e]);
      }
    }
    if (!differing.empty()) {
      auto lemma_roots = graph_.apply_lemmas(roots, options_.lemma_entries);
      if (!lemma_roots)
        return Error{fmt::format("{}: --prove: the lemma pass: {}", spec_.path, lemma_roots.error().message)};
      for (std::size_t i = 0; i < differing.size(); ++i) {
        const NodeId a = (*lemma_roots)[2 * i], b = (*lemma_roots)[2 * i + 1];
        if (a == b) continue;
        // Two output nodes over a few narrow leaves: settled by evaluating both on every value.
        auto settled = exhaust(a, b);
        if (!settled) return Error{fmt::format("{}: --prove: {}", spec_.path, settled.error().message)};
        if (settled->equal) {
          ++r.exhausted;
          continue;
        }
        r.difference = describe(differing[i], a, b, roots[2 * i], roots[2 * i + 1]);
        if (settled->counterexample) {
          r.difference->counterexample = std::move(settled->counterexample);
          r.difference->why =
              "the two output nodes were evaluated on every value of their leaves: they differ there "
              "(refuted by exhaustion)";
          r.refuted_by_exhaustion = true;
        }
        break;
      }
      record_lemmas(r);
    }
    r.identical = !r.difference.has_value();
    if (r.identical) {
      auto lookup = lookup_outside_lemmas(outs);
      if (!lookup) return lookup.error();
      if (*lookup) {
        r.identical = false;
        r.difference = std::move(**lookup);
        r.lemmas.clear();
        record_lemmas(r);
      }
    }
    count_opaque(outs, r);
    r.nodes = graph_.size();
    return r;
  }

  // The opaque nodes (approx, mma) below the outputs of both arms (docs/ptx-proof.md, "Opaque
  // instructions"): equal nodes through them rest on the hardware being deterministic, which the
  // report states with their count and mnemonics. Node ids follow creation order (operands
  // first), so one pass downward from the highest id marks everything below the outputs.
  void count_opaque(const std::array<std::map<std::string, std::vector<NodeId>>, 2>& outs, TraceResult& r) const {
    bool any = false;
    for (NodeId id = 0; id < graph_.size() && !any; ++id) any = is_opaque(id);
    if (!any) return;
    std::vector<std::uint8_t> below(graph_.size(), 0);
    for (const auto& arm : outs) {
      for (const auto& [name, nodes] : arm) {
        for (const NodeId n : nodes) below[n] = 1;
      }
    }
    std::set<std::string> names;
    for (NodeId id = static_cast<NodeId>(graph_.size()); id-- > 0;) {
      if (below[id] == 0) continue;
      const sym::Node& n = graph_.node(id);
      for (int i = 0; i < n.nops; ++i) below[n.ops[i]] = 1;
      if (!is_opaque(id)) continue;
      ++r.approx_nodes;
      names.insert(sym::inst_name(n.key));
    }
    r.approx.assign(names.begin(), names.end());
  }

  bool is_opaque(NodeId id) const {
    const sym::Node& n = graph_.node(id);
    return n.kind == sym::NodeKind::kInst && sym::is_opaque(n.key);
  }

  // A table lookup (a kLoad node) has a value only while its address stays inside its table, and
  // that is shown only where a lemma enumerates the address (every entry evaluated: an address
  // outside is an error). Where the trace holds lookups, the lemma pass runs over every output of
  // both arms; a lookup still outside every lemma below an output leaves the proof "not proven":
  // two arms making the same lookup are one node, but on inputs that send it outside the table
  // both read undefined memory, which the equal nodes would hide.
  Expected<std::optional<TraceDifference>> lookup_outside_lemmas(
      const std::array<std::map<std::string, std::vector<NodeId>>, 2>& outs) {
    bool any = false;
    for (std::size_t i = 0; i < graph_.size() && !any; ++i) any = graph_.node(static_cast<NodeId>(i)).kind == sym::NodeKind::kLoad;
    if (!any) return std::optional<TraceDifference>{};
    std::vector<NodeId> roots;
    std::vector<Element> where;
    for (int arm = 0; arm < 2; ++arm) {
      for (const std::string& name : spec_.outputs) {
        const auto& nodes = outs[arm].at(name);
        for (std::uint64_t e = 0; e < nodes.size(); ++e) roots.push_back(nodes[e]), where.push_back({name, e});
      }
    }
    auto enclosed = graph_.apply_lemmas(roots, options_.lemma_entries);
    if (!enclosed) return Error{fmt::format("{}: --prove: the lemma pass: {}", spec_.path, enclosed.error().message)};
    std::vector<bool> seen(graph_.size(), false);
    for (std::size_t i = 0; i < enclosed->size(); ++i) {
      std::vector<NodeId> stack{(*enclosed)[i]};
      while (!stack.empty()) {
        const NodeId id = stack.back();
        stack.pop_back();
        if (seen[id]) continue;
        seen[id] = true;
        const sym::Node& n = graph_.node(id);
        if (n.kind == sym::NodeKind::kTable) continue;
        if (n.kind == sym::NodeKind::kLoad) return std::optional<TraceDifference>{lookup_difference(where[i], id)};
        for (int j = 0; j < n.nops; ++j) stack.push_back(n.ops[j]);
      }
    }
    return std::optional<TraceDifference>{};
  }

  TraceDifference lookup_difference(const Element& el, NodeId lookup) const {
    const OutputDecl& d = *spec_.output_decl(el.output);
    TraceDifference diff;
    diff.tensor = el.output;
    diff.row = el.index / d.cols;
    diff.col = el.index % d.cols;
    diff.operation_a = diff.operation_b = graph_.describe(lookup);
    diff.line_a = line_text(lookup, 0);
    diff.line_b = line_text(lookup, 1);
    diff.position = fmt::format("the lookup's address depends on {}", leaves_under(graph_.node(lookup).ops[0]));
    diff.lookup = true;
    diff.why = "a table lookup whose address no lemma enumerates (its leaves' values multiply past the lemma "
               "limit): bitproof cannot show it stays inside its table, so equal graphs prove nothing there "
               "(docs/ptx-proof.md, Limits)";
    return diff;
  }

  // Whether two output nodes compute equal bits on every value of their leaves, found by evaluating
  // both on each (Graph::evaluate_many, the executor's semantics): only where they depend on at most
  // kExhaustLeaves leaves whose domains multiply to at most kExhaustEntries and on no opaque approx
  // node (it has no value on the CPU); else neither.
  struct Settled {
    bool equal = false;
    std::optional<LemmaCounterexample> counterexample;  // set: they differ here
  };
  static constexpr std::size_t kExhaustLeaves = 4;
  static constexpr std::uint64_t kExhaustEntries = std::uint64_t{1} << 20;

  Expected<Settled> exhaust(NodeId a, NodeId b) const {
    std::set<NodeId> leaves;
    std::vector<std::uint8_t> seen(graph_.size(), 0);
    std::vector<NodeId> stack{a, b};
    std::size_t visited = 0;
    while (!stack.empty()) {
      const NodeId id = stack.back();
      stack.pop_back();
      if (seen[id] != 0) continue;
      seen[id] = 1;
      if (++visited > 100000) return Settled{};
      const sym::Node& n = graph_.node(id);
      if (is_opaque(id)) return Settled{};  // an opaque node has no value on the CPU: neither
      if (n.kind == sym::NodeKind::kLeaf) {
        leaves.insert(id);
        if (leaves.size() > kExhaustLeaves) return Settled{};
        continue;
      }
      for (int i = 0; i < n.nops; ++i) stack.push_back(n.ops[i]);
    }
    std::vector<NodeId> order(leaves.begin(), leaves.end());
    std::vector<std::vector<std::uint64_t>> values;
    std::uint64_t entries = 1;
    for (const NodeId l : order) {
      const sym::LeafTensor& t = graph_.tensors()[graph_.leaf_ref(graph_.node(l).aux64).tensor];
      std::vector<std::uint64_t> v = t.domain;
      if (v.empty()) {
        if (t.element_bits > 20) return Settled{};
        for (std::uint64_t x = 0; x < (std::uint64_t{1} << t.element_bits); ++x) v.push_back(x);
      }
      entries *= v.size();
      if (entries > kExhaustEntries) return Settled{};
      values.push_back(std::move(v));
    }
    std::vector<std::size_t> at(order.size(), 0);  // mixed-radix counter, first leaf slowest
    std::vector<std::pair<std::uint64_t, std::uint64_t>> assignment(order.size());
    for (std::uint64_t e = 0; e < entries; ++e) {
      for (std::size_t i = 0; i < order.size(); ++i) assignment[i] = {graph_.node(order[i]).aux64, values[i][at[i]]};
      auto r = graph_.evaluate_many({a, b}, assignment);
      if (!r) return r.error();
      if ((*r)[0] != (*r)[1]) {
        LemmaCounterexample c;
        for (std::size_t i = 0; i < order.size(); ++i) {
          const sym::LeafRef ref = graph_.leaf_ref(graph_.node(order[i]).aux64);
          c.leaves.push_back(LeafValue{graph_.tensors()[ref.tensor].name, info_[ref.tensor].kind,
                                       index_text(ref.tensor, ref.element), values[i][at[i]]});
        }
        c.result_a = (*r)[0];
        c.result_b = (*r)[1];
        c.width = graph_.node(a).width;
        return Settled{false, std::move(c)};
      }
      for (std::size_t i = order.size(); i-- > 0;) {
        if (++at[i] < values[i].size()) break;
        at[i] = 0;
      }
    }
    return Settled{true, std::nullopt};
  }

  void record_lemmas(TraceResult& r) const {
    for (const sym::Lemma& l : graph_.lemmas()) {
      if (l.uses == 0) continue;
      LemmaRecord rec;
      rec.pattern = l.pattern;
      for (const std::uint32_t t : l.tensors) {
        rec.leaves.push_back(graph_.tensors()[t].name);
        rec.domains.push_back(domain_text(graph_.tensors()[t]));
      }
      rec.digest = l.digest;
      rec.entries = l.entries;
      rec.uses = l.uses;
      r.lemmas.push_back(std::move(rec));
    }
  }

  std::string index_text(std::uint32_t tensor, std::uint64_t element) const {
    const LeafInfo& info = info_[tensor];
    if (info.per_row == 0) return fmt::format("[{}]", element);
    return fmt::format("[{}][{}]", element / info.per_row, element % info.per_row * info.per_leaf);
  }

  // The first operation each arm computes that the other does not (own_ops), after the lemma pass
  // (a, b) and, for the PTX lines, before it (a0, b0): nodes the lemma pass re-interns carry no
  // origin, and the first own operation before it is the same instruction or the first one inside
  // the subgraph a table replaced.
  TraceDifference describe(const Element& el, NodeId a, NodeId b, NodeId a0, NodeId b0) const {
    const auto [own_a, own_b] = own_ops(a, b);
    const auto [pre_a, pre_b] = own_ops(a0, b0);
    const OutputDecl& d = *spec_.output_decl(el.output);
    TraceDifference diff;
    diff.tensor = el.output;
    diff.row = el.index / d.cols;
    diff.col = el.index % d.cols;
    diff.operation_a = graph_.describe(own_a);
    diff.operation_b = graph_.describe(own_b);
    diff.line_a = line_text(graph_.origin(own_a, 0) != 0 ? own_a : pre_a, 0);
    diff.line_b = line_text(graph_.origin(own_b, 1) != 0 ? own_b : pre_b, 1);
    diff.position = fmt::format("{} adds {}; {} adds {}", spec_.arms[0].name, leaves_under(own_a), spec_.arms[1].name,
                                leaves_under(own_b));
    // Two lemma tables over the same leaves where the arms part: their first differing entry. The
    // own operations are tried first (the structural walk from the roots may step aside where
    // canonical operand order puts the two tables at different positions).
    sym::Difference fd = graph_.first_difference(own_a, own_b);
    if (!fd.counterexample) fd = graph_.first_difference(a, b);
    if (fd.counterexample) diff.counterexample = counterexample(fd);
    diff.why = fd.counterexample ? "two lemma tables over the same leaves differ (a counterexample below)"
                                 : "the arms compute these elements by different operations; the concrete cases "
                                   "decide whether the bits differ";
    return diff;
  }

  // The lowest node id reachable from one root only, per root (node ids follow creation order).
  std::pair<NodeId, NodeId> own_ops(NodeId a, NodeId b) const {
    std::vector<std::uint8_t> reach(graph_.size(), 0);
    for (auto [root, bit] : {std::pair{a, std::uint8_t{1}}, std::pair{b, std::uint8_t{2}}}) {
      std::vector<NodeId> stack{root};
      while (!stack.empty()) {
        const NodeId id = stack.back();
        stack.pop_back();
        if ((reach[id] & bit) != 0) continue;
        reach[id] |= bit;
        const sym::Node& n = graph_.node(id);
        if (n.kind == sym::NodeKind::kLeaf || n.kind == sym::NodeKind::kConst) continue;
        for (int i = 0; i < n.nops; ++i) stack.push_back(n.ops[i]);
      }
    }
    const auto first_only = [&](std::uint8_t bit, NodeId fallback) {
      for (NodeId id = 0; id < reach.size(); ++id) {  // constants are operands, not operations
        if (reach[id] == bit && graph_.node(id).kind != sym::NodeKind::kConst) return id;
      }
      return fallback;
    };
    return {first_only(1, a), first_only(2, b)};
  }

  // The module holding PTX line `line` among the kernels arm `arm` launches (its first stage's
  // module if none does).
  std::size_t module_of_line(std::uint32_t line, int arm) const {
    for (const Stage& st : spec_.arms[arm].stages) {
      const KernelSet::Used& u = *set_.find(st.launch->kernel);
      for (const ptx::Inst& in : set_.kernel(u).code) {
        if (in.line == line) return u.module;
      }
    }
    return set_.find(spec_.arms[arm].stages[0].launch->kernel)->module;
  }

  std::string line_text(NodeId id, int arm) const {
    const std::uint32_t line = graph_.origin(id, arm);
    if (line == 0) return "";
    const KernelModule& m = modules_[module_of_line(line, arm)];
    const std::string src = ptx_source_line(m.ptx, line);
    const std::string file = m.file.ends_with(".ptx") ? m.file : m.file + " (PTX)";
    return src.empty() ? fmt::format("{}:{}", file, line) : fmt::format("{}:{} ({})", file, line, src);
  }

  // The leaves a node depends on, per input: the partial sum it computes (at most 8 named each).
  std::string leaves_under(NodeId root) const {
    std::map<std::uint32_t, std::set<std::uint64_t>> by_tensor;
    std::vector<std::uint8_t> seen(graph_.size(), 0);
    std::vector<NodeId> stack{root};
    while (!stack.empty()) {
      const NodeId id = stack.back();
      stack.pop_back();
      if (seen[id] != 0) continue;
      seen[id] = 1;
      const sym::Node& n = graph_.node(id);
      if (n.kind == sym::NodeKind::kLeaf) {
        const sym::LeafRef ref = graph_.leaf_ref(n.aux64);
        by_tensor[ref.tensor].insert(ref.element);
        continue;
      }
      if (n.kind == sym::NodeKind::kConst) continue;
      for (int i = 0; i < n.nops; ++i) stack.push_back(n.ops[i]);
    }
    if (by_tensor.empty()) return "no leaf";
    std::string s;
    for (const auto& [t, elements] : by_tensor) {
      std::string names;
      std::size_t shown = 0;
      for (const std::uint64_t e : elements) {
        if (++shown > 8) {
          names += ", …";
          break;
        }
        names += (names.empty() ? "" : ", ") + graph_.tensors()[t].name + index_text(t, e);
      }
      s += fmt::format("{}{} ({})", s.empty() ? "" : "; ", names,
                       elements.size() == 1 ? std::string("1 leaf") : fmt::format("{} leaves", elements.size()));
    }
    return s;
  }

  LemmaCounterexample counterexample(const sym::Difference& fd) const {
    LemmaCounterexample c;
    const sym::Node& n = graph_.node(fd.a);
    for (int i = 0; i < n.nops && i < static_cast<int>(fd.counterexample->size()); ++i) {
      const sym::Node& leaf = graph_.node(n.ops[i]);
      const sym::LeafRef ref = graph_.leaf_ref(leaf.aux64);
      c.leaves.push_back(LeafValue{graph_.tensors()[ref.tensor].name, info_[ref.tensor].kind,
                                   index_text(ref.tensor, ref.element), (*fd.counterexample)[i]});
    }
    c.result_a = fd.result_a;
    c.result_b = fd.result_b;
    c.width = n.width;
    return c;
  }

  const AbSpec& spec_;
  const std::vector<KernelModule>& modules_;
  const KernelSet& set_;
  const std::map<std::string, ScaleSet>& scales_;
  KernelProveOptions options_;
  sym::Graph graph_;
  std::vector<LeafInfo> info_;  // per graph tensor
  std::map<std::pair<std::string, TensorPart>, std::uint32_t> leaf_of_;
  std::map<std::string, std::uint32_t> before_;  // output -> its before-the-launch tensor
};

}  // namespace

Expected<Ok> check_kernel_provable(const AbSpec& spec) {
  for (std::size_t i = 0; i < spec.arms.size(); ++i) {
    if (!spec.arms[i].stages[0].launch)
      return Error{
          fmt::format("{}: arms[{}]: --prove: arm \"{}\" runs built-in operators: a PTX proof needs both "
                      "arms to be kernel arms",
                      spec.path, i, spec.arms[i].name)};
  }
  return Ok{};
}

Expected<TraceResult> prove_kernel_arms(const AbSpec& spec, const std::vector<KernelModule>& modules,
                                        const std::map<std::string, ScaleSet>& scales,
                                        const KernelProveOptions& options) {
  if (auto ok = check_kernel_provable(spec); !ok) return ok.error();
  auto set = parse_kernel_modules(spec, modules);
  if (!set) return set.error();
  KernelProver prover(spec, modules, *set, scales, options);
  return prover.run();
}

}  // namespace bitproof::op
