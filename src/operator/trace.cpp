#include "operator/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>

#include "operator/dispatch.hpp"
#include "operator/operators.hpp"
#include "parallel.hpp"
#include "recipes/registry.hpp"

namespace bitproof::op {
namespace {

using NodeId = std::uint32_t;

enum class TOp : std::uint8_t { kLeaf, kZero, kH2F, kF2H, kFma, kAdd, kMul, kSilu, kRecipe };

constexpr std::uint32_t kClassBit = 0x80000000u;  // a recipe node's aux: a substitution class, not a recipe

// Operands a node has (a leaf's a and b hold its index, not nodes).
constexpr int arity(TOp op) {
  switch (op) {
    case TOp::kLeaf:
    case TOp::kZero: return 0;
    case TOp::kH2F:
    case TOp::kF2H:
    case TOp::kSilu: return 1;
    case TOp::kAdd:
    case TOp::kMul:
    case TOp::kRecipe: return 2;
    case TOp::kFma: return 3;
  }
  return 0;
}

struct Node {
  TOp op;
  std::uint32_t aux;  // leaf: tensor id; recipe: registry index or kClassBit | substitution
  NodeId a, b, c;     // operands (leaf: the element index, low and high 32 bits)
  bool operator==(const Node&) const = default;
};

// A leaf tensor: a spec input (an mxfp4 weight gives two: codes and scales) or an
// intermediate both arms compute and that was proven equal element by element.
struct LeafTensor {
  std::string name;
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
  int scale_of_input = -1;  // an mxfp4 weight's scales: the index into Context::scale_admitted
};

// The recorder's view of an operand: up to kMaxJoined row blocks, each a leaf tensor.
struct TTensor {
  struct Block {
    std::uint64_t first_row = 0;
    std::uint64_t rows = 0;
    std::uint32_t id = 0;
  };
  std::array<Block, kMaxJoined> blocks{};
  std::size_t count = 0;
  std::uint64_t cols = 0;
};

struct Context {
  std::vector<LeafTensor> leaves;
  const std::vector<Substitution>* substitutions = nullptr;
  // [leaf scale tensor][substitution]: its bytes lie within the substitution's scales.
  std::vector<std::vector<bool>> scale_admitted;
  std::vector<std::string> scale_origin;       // per scale leaf: where its set came from
  std::vector<std::vector<int>> outside_byte;  // [scale leaf][substitution]: a byte outside its scales, or -1
};

int registry_index_of(std::string_view name) {
  return static_cast<int>(recipe_by_name(name) - all_recipes().data());
}

// The value policy that records (operators.hpp runs with it unchanged).
class Recorder {
 public:
  using F16 = NodeId;
  using F32 = NodeId;
  using Code = NodeId;
  using Tensor = TTensor;

  explicit Recorder(const Context& ctx) : ctx_(ctx), used_(ctx.substitutions->size(), false) {
    slots_.assign(std::size_t{1} << 16, 0);
    memo_leaf_.assign(ctx_.leaves.size(), {});
    memo_wide_.assign(ctx_.leaves.size(), {});
  }

  // Starts a new output column: the table of column nodes empties (it stays small
  // enough for the cache); the persistent nodes (below) stay.
  void next_column() {
    nodes_.clear();
    ++generation_;
  }

  F16 f16(const Tensor& t, std::uint64_t row, std::uint64_t col) { return leaf(t, row, col); }
  F32 widen(const Tensor& t, std::uint64_t row, std::uint64_t col) { return h2f(leaf(t, row, col)); }
  Code e2m1(const Tensor& t, std::uint64_t row, std::uint64_t col) { return leaf(t, row, col); }
  Code u8(const Tensor& t, std::uint64_t row, std::uint64_t col) { return leaf(t, row, col); }
  F32 zero() { return make({TOp::kZero, 0, 0, 0, 0}); }
  F32 h2f(F16 h) {
    if ((h & kPersistent) == 0 || node(h).op != TOp::kLeaf) return make({TOp::kH2F, 0, h, 0, 0});
    const Node& leaf = node(h);
    const std::uint64_t index = (std::uint64_t{leaf.b} << 32) | leaf.a;
    std::vector<NodeId>& memo = memo_wide_[leaf.aux];
    if (memo.empty()) memo.assign(memo_leaf_[leaf.aux].size(), kNoNode);
    if (memo[index] == kNoNode) memo[index] = persist({TOp::kH2F, 0, h, 0, 0});
    return memo[index];
  }
  F16 f2h(F32 f) { return make({TOp::kF2H, 0, f, 0, 0}); }
  F32 fma(F32 a, F32 b, F32 c) { return make({TOp::kFma, 0, a, b, c}); }
  F32 add(F32 a, F32 b) { return make({TOp::kAdd, 0, a, b, 0}); }
  F32 mul(F32 a, F32 b) { return make({TOp::kMul, 0, a, b, 0}); }
  F32 silu(F32 g) { return make({TOp::kSilu, 0, g, 0, 0}); }
  template <class R>
  F16 recipe(Code x, Code s) {
    static const int index = registry_index_of(R::kCard.name);
    return make({TOp::kRecipe, recipe_class(index, s), x, s, 0});
  }

  [[nodiscard]] const Node& node(NodeId id) const {
    return (id & kPersistent) != 0 ? persistent_[id & ~kPersistent] : nodes_[id];
  }
  [[nodiscard]] std::size_t column_size() const { return nodes_.size(); }
  [[nodiscard]] std::size_t persistent_size() const { return persistent_.size(); }
  [[nodiscard]] const std::vector<bool>& used() const { return used_; }
  static constexpr NodeId kPersistent = 0x80000000u;

 private:
  static constexpr NodeId kNoNode = ~NodeId{0};
  static constexpr std::uint64_t kMemoElements = std::uint64_t{1} << 20;

  // The leaf tensor and element an operand's (row, col) is (a joined row maps to its weight's own row).
  static std::pair<std::uint32_t, std::uint64_t> locate(const Tensor& t, std::uint64_t row, std::uint64_t col) {
    std::size_t b = 0;
    while (b + 1 < t.count && row >= t.blocks[b].first_row + t.blocks[b].rows) ++b;
    return {t.blocks[b].id, (row - t.blocks[b].first_row) * t.cols + col};
  }

  // Leaves of tensors up to kMemoElements, and their widenings, are persistent:
  // one node each for the whole table's life, found by index (every output column
  // reads the same activation); they never enter the per-column hash table, and a
  // structure has one id either way, so node identity stays structural identity.
  NodeId leaf(const Tensor& t, std::uint64_t row, std::uint64_t col) {
    const auto [id, index] = locate(t, row, col);
    const Node n{TOp::kLeaf, id, static_cast<NodeId>(index), static_cast<NodeId>(index >> 32), 0};
    const LeafTensor& tensor = ctx_.leaves[id];
    if (tensor.rows * tensor.cols > kMemoElements) return make(n);
    std::vector<NodeId>& memo = memo_leaf_[id];
    if (memo.empty()) memo.assign(tensor.rows * tensor.cols, kNoNode);
    if (memo[index] == kNoNode) memo[index] = persist(n);
    return memo[index];
  }

  NodeId persist(const Node& n) {
    persistent_.push_back(n);
    return static_cast<NodeId>(persistent_.size() - 1) | kPersistent;
  }

  // A recipe's node key: its substitution class when an element proof covers it and
  // its scale operand is a scale leaf admitted for that proof; else the recipe itself.
  std::uint32_t recipe_class(int index, NodeId scale) {
    const Node& s = node(scale);
    if (s.op != TOp::kLeaf) return static_cast<std::uint32_t>(index);
    const int leaf_scale = ctx_.leaves[s.aux].scale_of_input;
    if (leaf_scale < 0) return static_cast<std::uint32_t>(index);
    const auto& subs = *ctx_.substitutions;
    for (std::size_t k = 0; k < subs.size(); ++k) {
      const bool member = std::any_of(subs[k].recipes.begin(), subs[k].recipes.end(),
                                      [&](const RecipeEntry* r) { return r - all_recipes().data() == index; });
      if (member && subs[k].holds && ctx_.scale_admitted[leaf_scale][k]) {
        used_[k] = true;
        return kClassBit | static_cast<std::uint32_t>(k);
      }
    }
    return static_cast<std::uint32_t>(index);
  }

  static std::uint64_t hash(const Node& n) {
    std::uint64_t h = (std::uint64_t{static_cast<std::uint8_t>(n.op)} << 32) ^ n.aux;
    for (std::uint64_t v : {std::uint64_t{n.a}, std::uint64_t{n.b}, std::uint64_t{n.c}}) {
      h = (h ^ v) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 29;
    }
    return h;
  }

  NodeId make(const Node& n) {
    if (nodes_.size() * 2 >= slots_.size()) grow();
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash(n) & mask;; i = (i + 1) & mask) {
      const std::uint64_t slot = slots_[i];
      if ((slot >> 32) != generation_) {
        nodes_.push_back(n);
        slots_[i] = (generation_ << 32) | nodes_.size();
        return static_cast<NodeId>(nodes_.size() - 1);
      }
      const NodeId id = static_cast<NodeId>((slot & 0xFFFFFFFFu) - 1);
      if (nodes_[id] == n) return id;
    }
  }

  void grow() {
    slots_.assign(slots_.size() * 2, 0);
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t id = 0; id < nodes_.size(); ++id) {
      std::size_t i = hash(nodes_[id]) & mask;
      while ((slots_[i] >> 32) == generation_) i = (i + 1) & mask;
      slots_[i] = (generation_ << 32) | (id + 1);
    }
  }

  const Context& ctx_;
  std::vector<Node> nodes_;
  std::vector<std::uint64_t> slots_;
  std::uint64_t generation_ = 0;
  std::vector<bool> used_;
  std::vector<Node> persistent_;                // leaves of small tensors and their widenings
  std::vector<std::vector<NodeId>> memo_leaf_;  // per leaf tensor: each element's persistent leaf, or kNoNode
  std::vector<std::vector<NodeId>> memo_wide_;  // per leaf tensor: each element's persistent h2f, or kNoNode
};

// ---- where each tensor of an arm comes from ----

struct Producer {
  std::size_t stage = 0;
  std::size_t output = 0;  // which output block of the stage
};

struct ArmMap {
  const Arm* arm = nullptr;
  std::map<std::string, Producer> produced;
  std::map<std::string, TensorShape> shapes;
};

ArmMap map_arm(const AbSpec& spec, std::size_t arm) {
  ArmMap m;
  m.arm = &spec.arms[arm];
  for (const auto& [name, shape] : spec.tensors_of(arm)) m.shapes[name] = shape;
  for (std::size_t s = 0; s < m.arm->stages.size(); ++s) {
    for (std::size_t o = 0; o < m.arm->stages[s].outputs.size(); ++o) m.produced[m.arm->stages[s].outputs[o]] = {s, o};
  }
  return m;
}

class Prover {
 public:
  Prover(const AbSpec& spec, const std::map<std::string, ScaleSet>& scales, const std::vector<Substitution>& subs,
         const TraceOptions& options)
      : spec_(spec), options_(options), arms_{map_arm(spec, 0), map_arm(spec, 1)} {
    ctx_.substitutions = &subs;
    for (const InputSpec& in : spec.inputs) add_input_leaves(in, scales, subs);
  }

  Expected<TraceResult> run() {
    TraceResult result;
    result.substitution_used.assign(ctx_.substitutions->size(), false);
    std::vector<std::string> pending;  // arm A's stage order
    for (const Stage& st : arms_[0].arm->stages) {
      for (const std::string& name : st.outputs) {
        if (arms_[1].produced.contains(name)) pending.push_back(name);
      }
    }
    while (!pending.empty()) {
      auto next = ready(pending);
      if (!next) return next.error();
      pending.erase(std::find(pending.begin(), pending.end(), *next));
      compare_tensor(*next, result);
      result.compared.push_back(*next);
      if (result.difference) return result;
      shared_[*next] = add_leaf(*next, arms_[0].shapes.at(*next).rows, arms_[0].shapes.at(*next).cols, -1);
    }
    result.identical = true;
    return result;
  }

 private:
  void add_input_leaves(const InputSpec& in, const std::map<std::string, ScaleSet>& scales,
                        const std::vector<Substitution>& subs) {
    if (in.dtype == DType::kF16) {
      inputs_[in.name] = {add_leaf(in.name, in.rows, in.cols, -1), 0};
      return;
    }
    const int scale_index = static_cast<int>(ctx_.scale_admitted.size());
    const ScaleSet& set = scales.at(in.name);
    std::vector<bool> admitted;
    std::vector<int> outside;
    for (const Substitution& s : subs) {
      admitted.push_back(set.within(s.scales));
      outside.push_back(set.first_outside(s.scales));
    }
    ctx_.scale_admitted.push_back(admitted);
    ctx_.outside_byte.push_back(outside);
    ctx_.scale_origin.push_back(set.origin);
    inputs_[in.name] = {add_leaf(in.name + ".codes", in.rows, in.cols, -1),
                        add_leaf(in.name + ".scales", in.rows, in.cols / kMxBlock, scale_index)};
  }

  std::uint32_t add_leaf(const std::string& name, std::uint64_t rows, std::uint64_t cols, int scale_index) {
    ctx_.leaves.push_back({name, rows, cols, scale_index});
    return static_cast<std::uint32_t>(ctx_.leaves.size() - 1);
  }

  // The next shared tensor whose producers (in both arms) read only inputs and
  // tensors already proven equal.
  Expected<std::string> ready(const std::vector<std::string>& pending) const {
    for (const std::string& name : pending) {
      bool ok = true;
      for (const ArmMap& arm : arms_) {
        for (const std::string& read : reads(arm.arm->stages[arm.produced.at(name).stage])) {
          ok = ok && (inputs_.contains(read) || shared_.contains(read));
        }
      }
      if (ok) return name;
    }
    for (const std::string& name : pending) {
      for (const ArmMap& arm : arms_) {
        for (const std::string& read : reads(arm.arm->stages[arm.produced.at(name).stage])) {
          if (!inputs_.contains(read) && !shared_.contains(read) &&
              std::find(pending.begin(), pending.end(), read) == pending.end())
            return Error{fmt::format("{}: arms[{}]: \"{}\" reads \"{}\", which only arm \"{}\" computes: the trace "
                                     "proof compares the tensors both arms compute, by name",
                                     spec_.path, &arm == &arms_[0] ? 0 : 1, name, read, arm.arm->name)};
        }
      }
    }
    return Error{fmt::format("{}: arms: the arms compute their shared tensors in orders that cannot be compared",
                             spec_.path)};
  }

  static std::vector<std::string> reads(const Stage& st) {
    std::vector<std::string> r{st.a};
    if (st.op == OpKind::kSwiglu) r.push_back(st.b);
    r.insert(r.end(), st.weights.begin(), st.weights.end());
    return r;
  }

  TTensor operand(const std::string& name, bool scales = false) const {
    TTensor t;
    t.count = 1;
    if (const auto it = shared_.find(name); it != shared_.end()) {
      t.blocks[0] = {0, ~std::uint64_t{0} >> 1, it->second};
    } else {
      const auto& ids = inputs_.at(name);
      t.blocks[0] = {0, ~std::uint64_t{0} >> 1, scales ? ids.second : ids.first};
    }
    t.cols = ctx_.leaves[t.blocks[0].id].cols;
    return t;
  }

  // The joined weight operand of a matmul stage: one block per weight.
  TTensor joined(const Stage& st, bool scales) const {
    TTensor t;
    std::uint64_t first = 0;
    for (const std::string& w : st.weights) {
      const TTensor one = operand(w, scales);
      const InputSpec* in = spec_.input(w);
      t.blocks[t.count++] = {first, in->rows, one.blocks[0].id};
      t.cols = one.cols;
      first += in->rows;
    }
    return t;
  }

  struct GemmColumn {
    Recorder& rec;
    const TTensor &a, &codes, &scales;
    std::uint64_t n, m_rows;
    GemmShape shape;
    std::vector<NodeId>& roots;
    template <class R>
    void run() {
      NodeId column[kMaxGemmRows];
      mxfp4_column<R>(rec, a, codes, scales, n, m_rows, shape, column);
      roots.assign(column, column + m_rows);
    }
  };

  // The roots of column `j` of output block `o` of arm `arm`'s stage, all rows.
  std::vector<NodeId> trace_column(Recorder& rec, std::size_t arm, const Producer& p, std::uint64_t j) const {
    const Stage& st = arms_[arm].arm->stages[p.stage];
    const TensorShape& a_shape = arms_[arm].shapes.at(st.a);
    std::vector<NodeId> roots;
    const TTensor a = operand(st.a);
    if (st.op == OpKind::kSwiglu) {
      const TTensor u = operand(st.b);
      for (std::uint64_t m = 0; m < a_shape.rows; ++m) roots.push_back(swiglu_element(rec, a, u, m, j));
      return roots;
    }
    std::uint64_t n = j;
    for (std::size_t w = 0; w < p.output; ++w) n += spec_.input(st.weights[w])->rows;
    if (st.op == OpKind::kGemv) {
      roots.push_back(gemv_element(rec, a, joined(st, false), n, {a_shape.cols, st.block_k, st.order}));
      return roots;
    }
    const TTensor codes = joined(st, false), scales = joined(st, true);
    GemmColumn col{rec, a, codes, scales, n, a_shape.rows, {a_shape.cols, st.split_k, st.order}, roots};
    with_dequant(static_cast<int>(st.dequant - all_recipes().data()), col);
    return roots;
  }

  void compare_tensor(const std::string& name, TraceResult& result) {
    const TensorShape& shape = arms_[0].shapes.at(name);
    std::mutex mutex;
    std::atomic<std::uint64_t> nodes{0};
    // The lowest column found to differ: columns above it need no tracing.
    std::atomic<std::uint64_t> lowest{~std::uint64_t{0}};
    std::vector<bool> used(ctx_.substitutions->size(), false);
    std::optional<TraceDifference> first;
    constexpr std::uint64_t kColumnsPerTask = 16;  // one table a task: columns share their activation nodes
    const std::uint64_t tasks = (shape.cols + kColumnsPerTask - 1) / kColumnsPerTask;
    parallel_for(tasks, resolve_threads(options_.threads), [&](std::size_t t) {
      Recorder rec(ctx_);
      for (std::uint64_t j = t * kColumnsPerTask; j < std::min(shape.cols, (t + 1) * kColumnsPerTask); ++j) {
        if (j > lowest.load()) break;
        rec.next_column();
        const auto a = trace_column(rec, 0, arms_[0].produced.at(name), j);
        const auto b = trace_column(rec, 1, arms_[1].produced.at(name), j);
        nodes += rec.column_size();
        const auto m = std::mismatch(a.begin(), a.end(), b.begin()).first - a.begin();
        if (static_cast<std::size_t>(m) == a.size()) continue;
        std::lock_guard lock(mutex);
        if (j < lowest.load()) {
          lowest = j;
          first = describe(rec, name, static_cast<std::uint64_t>(m), j, a[m], b[m]);
        }
        break;
      }
      nodes += rec.persistent_size();
      std::lock_guard lock(mutex);
      for (std::size_t k = 0; k < used.size(); ++k) used[k] = used[k] || rec.used()[k];
    });
    result.elements += shape.rows * shape.cols;
    result.nodes += nodes.load();
    for (std::size_t k = 0; k < used.size(); ++k) result.substitution_used[k] = result.substitution_used[k] || used[k];
    result.difference = first;
  }

  // ---- the first difference, in words ----

  std::string leaf_text(const Node& n) const {
    const LeafTensor& t = ctx_.leaves[n.aux];
    const std::uint64_t index = (std::uint64_t{n.b} << 32) | n.a;
    return fmt::format("{}[{}][{}]", t.name, index / t.cols, index % t.cols);
  }

  // An FMA chain from +0 by the reduction steps it covers: "chain[k 0..1023]".
  std::string chain_text(const Recorder& rec, NodeId id) const {
    const std::string last = step_of(rec, id);
    while (rec.node(rec.node(id).c).op == TOp::kFma) id = rec.node(id).c;
    const std::string from = rec.node(rec.node(id).c).op == TOp::kZero ? "" : " onto another value";
    return fmt::format("chain[{}..{}{}]", step_of(rec, id), last.substr(4), from);
  }

  std::string text(const Recorder& rec, NodeId id, int depth) const {
    const Node& n = rec.node(id);
    if (n.op == TOp::kLeaf) return leaf_text(n);
    if (n.op == TOp::kZero) return "+0";
    if (n.op == TOp::kFma && depth < 2) return chain_text(rec, id);
    if (depth == 0) return n.op == TOp::kAdd ? "add(…)" : "…";
    auto sub = [&](NodeId x) { return text(rec, x, depth - 1); };
    switch (n.op) {
      case TOp::kH2F: return fmt::format("f32({})", sub(n.a));
      case TOp::kF2H: return fmt::format("f16_rn({})", sub(n.a));
      case TOp::kFma: return fmt::format("fma({}, {}, {})", sub(n.a), sub(n.b), text(rec, n.c, 0));
      case TOp::kAdd: return fmt::format("add({}, {})", sub(n.a), sub(n.b));
      case TOp::kMul: return fmt::format("mul({}, {})", sub(n.a), sub(n.b));
      case TOp::kSilu: return fmt::format("silu({})", sub(n.a));
      case TOp::kRecipe: return fmt::format("{}({}, {})", recipe_text(n.aux), sub(n.a), sub(n.b));
      default: return "?";
    }
  }

  std::string recipe_text(std::uint32_t aux) const {
    if ((aux & kClassBit) != 0) {
      const Substitution& s = (*ctx_.substitutions)[aux & ~kClassBit];
      std::string names;
      for (const RecipeEntry* r : s.recipes) names += fmt::format("{}{}", names.empty() ? "" : "≡", r->card->label);
      return fmt::format("dequant[{}]", names);
    }
    return std::string(all_recipes()[aux].card->name);
  }

  // The reduction step of an FMA on the path: the column of its activation leaf.
  std::string step_of(const Recorder& rec, NodeId fma) const {
    const Node& n = rec.node(fma);
    const Node& x = rec.node(n.a);
    if (x.op == TOp::kH2F && rec.node(x.a).op == TOp::kLeaf) {
      const Node& leaf = rec.node(x.a);
      const std::uint64_t index = (std::uint64_t{leaf.b} << 32) | leaf.a;
      return fmt::format("k = {}", index % ctx_.leaves[leaf.aux].cols);
    }
    return "k = ?";
  }

  std::string why(const Recorder& rec, const Node& a, const Node& b) const {
    if (a.op != TOp::kRecipe || b.op != TOp::kRecipe) return "";
    const Node& scale = rec.node(a.b);
    const int leaf_scale = scale.op == TOp::kLeaf ? ctx_.leaves[scale.aux].scale_of_input : -1;
    for (std::size_t k = 0; k < ctx_.substitutions->size(); ++k) {
      const Substitution& s = (*ctx_.substitutions)[k];
      auto has = [&](std::uint32_t aux) {
        return (aux & kClassBit) == 0 &&
               std::any_of(s.recipes.begin(), s.recipes.end(), [&](const RecipeEntry* r) { return r - all_recipes().data() == aux; });
      };
      if (!has(a.aux) && !has(b.aux)) continue;
      if (!s.holds) return fmt::format("{} does not hold on scale bytes {}..{}: it justifies nothing", s.proof, s.scales.lo, s.scales.hi);
      if (leaf_scale < 0) return fmt::format("{} covers these recipes, but the scale operand is not a weight's scale", s.proof);
      return fmt::format("{} covers these recipes on scale bytes {}..{}, but {} holds byte {} ({})", s.proof,
                         s.scales.lo, s.scales.hi, ctx_.leaves[scale.aux].name, ctx_.outside_byte[leaf_scale][k],
                         ctx_.scale_origin[leaf_scale]);
    }
    return "no element proof in the spec relates these two recipes";
  }

  // The first operation each arm computes that the other does not: with one
  // table for both arms, a node reachable from only one root is an operation of
  // that arm alone, and node ids follow creation order (operands first), so the
  // lowest such id is where that arm departs from the other.
  TraceDifference describe(const Recorder& rec, const std::string& tensor, std::uint64_t m, std::uint64_t j, NodeId a,
                           NodeId b) const {
    std::vector<std::uint8_t> reach(rec.column_size(), 0), reach_persistent(rec.persistent_size(), 0);
    auto mark = [&](NodeId id) -> std::uint8_t& {
      return (id & Recorder::kPersistent) != 0 ? reach_persistent[id & ~Recorder::kPersistent] : reach[id];
    };
    for (auto [root, bit] : {std::pair{a, std::uint8_t{1}}, std::pair{b, std::uint8_t{2}}}) {
      std::vector<NodeId> stack{root};
      while (!stack.empty()) {
        const NodeId id = stack.back();
        stack.pop_back();
        if ((mark(id) & bit) != 0) continue;
        mark(id) |= bit;
        const Node& n = rec.node(id);
        const NodeId operands[3] = {n.a, n.b, n.c};
        for (int i = 0; i < arity(n.op); ++i) stack.push_back(operands[i]);
      }
    }
    // Persistent nodes (leaves, widened) come before the column's in the order of computation.
    const auto first_only = [&](std::uint8_t bit) {
      for (NodeId id = 0; id < reach_persistent.size(); ++id) {
        if (reach_persistent[id] == bit) return id | Recorder::kPersistent;
      }
      for (NodeId id = 0; id < reach.size(); ++id) {
        if (reach[id] == bit) return id;
      }
      return bit == 1 ? a : b;
    };
    const NodeId own_a = first_only(1), own_b = first_only(2);
    TraceDifference d;
    d.tensor = tensor;
    d.row = m;
    d.col = j;
    d.operation_a = text(rec, own_a, 2);
    d.operation_b = text(rec, own_b, 2);
    auto where = [&](NodeId id) {
      const Node& n = rec.node(id);
      return n.op == TOp::kFma ? "reduction step " + step_of(rec, id) : std::string(op_word(n.op));
    };
    d.position = fmt::format("first own operation of arm A: {}; of arm B: {}", where(own_a), where(own_b));
    d.why = why(rec, rec.node(own_a), rec.node(own_b));
    return d;
  }

  static std::string_view op_word(TOp op) {
    switch (op) {
      case TOp::kAdd: return "the fold of partial sums (add)";
      case TOp::kRecipe: return "a dequant";
      case TOp::kF2H: return "the FP16 rounding";
      case TOp::kMul: return "a multiply";
      case TOp::kSilu: return "silu";
      default: return "an operation";
    }
  }

  const AbSpec& spec_;
  TraceOptions options_;
  std::array<ArmMap, 2> arms_;
  Context ctx_;
  std::map<std::string, std::pair<std::uint32_t, std::uint32_t>> inputs_;  // name -> leaf ids (f16 | codes, scales)
  std::map<std::string, std::uint32_t> shared_;                            // proven-equal intermediates
};

}  // namespace

Expected<TraceResult> prove_by_trace(const AbSpec& spec, const std::map<std::string, ScaleSet>& scales,
                                     const std::vector<Substitution>& substitutions, const TraceOptions& options) {
  for (const InputSpec& in : spec.inputs) {
    if (in.dtype == DType::kMxfp4 && !scales.contains(in.name))
      return Error{fmt::format("{}: inputs: no scale set for \"{}\"", spec.path, in.name)};
  }
  Prover prover(spec, scales, substitutions, options);
  return prover.run();
}

}  // namespace bitproof::op
