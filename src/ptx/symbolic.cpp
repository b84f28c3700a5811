// The symbolic value policy (src/ptx/symbolic.hpp): values, shadow memory, table lookups.
#include "ptx/symbolic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>

namespace bitproof::ptx {
namespace {

using sym::kNoNode;
using sym::NodeId;

std::uint64_t mask_of(unsigned bits) { return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1; }
unsigned type_bits(const Type& t) { return t.bits == 0 ? 64 : t.bits; }

// The bits of source i that ConcretePolicy::alu reads: a constant operand is masked to them, so
// equal computations on equal constants meet in one node (never fewer bits than alu reads: a
// constant masked below them would change the node's value).
unsigned operand_bits(const Inst& in, int i) {
  const unsigned w = type_bits(in.type);
  switch (in.op) {
    case Op::kSetp:
    case Op::kSelp: return i < 2 ? w : 1;  // the predicate operand: bit 0
    case Op::kCvt: return type_bits(in.src_type);
    case Op::kCvtPack: return 32;
    case Op::kCvta: return 64;
    case Op::kShl:
    case Op::kShr: return i == 0 ? w : 32;  // the shift amount: 32 bits
    case Op::kMad: return i < 2 || in.part != MulPart::kWide ? w : std::min(2 * w, 64u);
    case Op::kPack: return w / in.vec;
    case Op::kPrmt:
    case Op::kShf: return 32;
    case Op::kBfe: return i == 0 ? w : 32;
    case Op::kBfi: return i < 2 ? w : 32;
    case Op::kLop3: return i < 3 ? w : 32;
    default: return w;
  }
}

Inst make_inst(Op op, Type type, Type src_type, std::uint8_t nsrc) {
  Inst in;
  in.op = op, in.type = type, in.src_type = src_type, in.nsrc = nsrc, in.ndst = 1;
  for (std::uint8_t i = 0; i < nsrc; ++i) in.src[i] = i;
  in.dst[0] = nsrc;
  return in;
}

// The value of `size` bytes whose sources are src[0..size) (low byte first): the bits when all
// are concrete (read from p), the node when they are bytes 0..size-1 of one node that wide, else
// a concat of extracts and constants.
SymValue assemble(sym::Graph& g, const ShadowByte* src, const std::uint8_t* p, unsigned size) {
  bool concrete = true, whole = true;
  for (unsigned j = 0; j < size; ++j) {
    concrete = concrete && src[j].node == kNoNode;
    whole = whole && src[j].node == src[0].node && src[j].byte == j;
  }
  if (concrete) return {ConcretePolicy::load(p, size, false), kNoNode};
  if (whole && g.node(src[0].node).width == 8 * size) return {0, src[0].node};
  NodeId acc = kNoNode;
  for (unsigned j = 0; j < size;) {
    unsigned k = j + 1;
    NodeId piece = kNoNode;
    if (src[j].node == kNoNode) {
      while (k < size && src[k].node == kNoNode) ++k;
      std::uint64_t bits = 0;
      for (unsigned b = j; b < k; ++b) bits |= std::uint64_t{p[b]} << (8 * (b - j));
      piece = g.constant(bits, static_cast<std::uint8_t>(8 * (k - j)));
    } else {
      while (k < size && src[k].node == src[j].node && src[k].byte == src[k - 1].byte + 1) ++k;
      const NodeId n = src[j].node;
      const auto lo = static_cast<std::uint8_t>(8 * src[j].byte), w = static_cast<std::uint8_t>(8 * (k - j));
      piece = lo == 0 && g.node(n).width == w ? n : g.extract(n, lo, w);
    }
    acc = acc == kNoNode ? piece : g.concat(acc, piece);
    j = k;
  }
  return {0, acc};
}

// The sources of `size` bytes at `offset` of a buffer: its tags (nullptr: never written), where
// an input's original byte is its leaf's.
void sources(sym::Graph& g, const SymMemory::Buffer* input, const std::vector<ShadowByte>* tags, std::size_t at,
             unsigned size, ShadowByte* src) {
  for (unsigned j = 0; j < size; ++j) {
    src[j] = tags != nullptr ? (*tags)[at + j] : ShadowByte{input != nullptr ? kOriginal : kNoNode, 0};
    if (src[j].node == kOriginal) {
      const auto [tensor, e] = input->element_at(at + j);
      src[j] = {g.leaf(tensor, e), static_cast<std::uint8_t>((at + j) % input->element_bytes)};
    }
  }
}

}  // namespace

// ---- SymMemory

std::pair<std::uint32_t, std::uint64_t> SymMemory::Buffer::element_at(std::uint64_t offset) const {
  std::size_t i = 0;
  if (segments.size() > 1) {
    const auto it = std::upper_bound(segments.begin(), segments.end(), offset,
                                     [](std::uint64_t o, const Segment& s) { return o < s.begin; });
    i = static_cast<std::size_t>(it - segments.begin()) - 1;
  }
  return {segments[i].tensor, (offset - segments[i].begin) / element_bytes};
}

Expected<std::size_t> SymMemory::add_input(const sym::Graph& graph, std::uint32_t tensor) {
  return add_joined(graph, {tensor});
}

Expected<std::size_t> SymMemory::add_joined(const sym::Graph& graph, const std::vector<std::uint32_t>& tensors) {
  if (tensors.empty()) return Error{"an input buffer of no tensor"};
  Buffer b;
  b.input = true;
  std::uint64_t bytes = 0;
  for (const std::uint32_t tensor : tensors) {
    if (tensor >= graph.tensors().size()) return Error{fmt::format("no leaf tensor {}", tensor)};
    const sym::LeafTensor& t = graph.tensors()[tensor];
    if (t.element_bits == 0 || t.element_bits % 8 != 0)
      return Error{fmt::format("tensor {}: elements of {} bits are not whole bytes", t.name, t.element_bits)};
    if (tensor != tensors[0] && t.element_bits / 8 != b.element_bytes)
      return Error{fmt::format("tensor {}: elements of {} bits, joined to elements of {}", t.name, t.element_bits,
                               8 * b.element_bytes)};
    b.element_bytes = static_cast<std::uint8_t>(t.element_bits / 8);
    if (t.elements > 0) b.segments.push_back({bytes, tensor});
    bytes += t.elements * b.element_bytes;
  }
  if (b.segments.empty()) b.segments.push_back({0, tensors[0]});
  buffers_.push_back(std::move(b));
  return memory_.add(std::vector<std::uint8_t>(bytes, 0));
}

std::size_t SymMemory::add_plain(std::vector<std::uint8_t> bytes) {
  buffers_.emplace_back();
  return memory_.add(std::move(bytes));
}

Expected<NodeId> SymMemory::element(sym::Graph& graph, std::size_t buffer, std::uint64_t offset, unsigned size) {
  if (buffer >= buffers_.size()) return Error{fmt::format("no buffer {}", buffer)};
  const auto& bytes = memory_.bytes(buffer);
  if (size == 0 || size > 8 || offset > bytes.size() || size > bytes.size() - offset)
    return Error{fmt::format("{} bytes at {}: outside buffer {} ({} bytes)", size, offset, buffer, bytes.size())};
  const Buffer& b = buffers_[buffer];
  ShadowByte src[8];
  sources(graph, b.input ? &b : nullptr, b.tags.empty() ? nullptr : &b.tags, offset, size, src);
  const SymValue v = assemble(graph, src, bytes.data() + offset, size);
  return v.node != kNoNode ? v.node : graph.constant(v.bits, static_cast<std::uint8_t>(8 * size));
}

// ---- SymbolicPolicy

SymbolicPolicy::SymbolicPolicy(sym::Graph& graph, SymMemory& memory, const Module& module, int arm)
    : graph_(graph), memory_(memory), module_(module), arm_(arm) {
  vars_.resize(module.globals.size());
  var_tables_.resize(module.globals.size());
  buffer_tables_.resize(memory.size());
}

NodeId SymbolicPolicy::node_of(const Value& v, std::uint8_t width) {
  return v.node != kNoNode ? v.node : graph_.constant(v.bits & mask_of(width), width);
}

const char* SymbolicPolicy::alu(const Inst& in, const Value* s, Value* d) {
  // An approximate instruction is never folded (the executor cannot compute its bits): even on
  // concrete sources it is a node over constants, an opaque kInst node (module.hpp's card).
  bool concrete = in.op != Op::kApprox;
  for (int i = 0; i < in.nsrc; ++i) concrete = concrete && s[i].node == kNoNode;
  if (concrete) {  // constant folding: the concrete policy's result
    std::uint64_t a[5] = {}, r[4] = {};
    for (int i = 0; i < in.nsrc; ++i) a[i] = s[i].bits;
    if (const char* why = ConcretePolicy::alu(in, a, r)) return why;
    for (int i = 0; i < in.ndst; ++i) d[i] = {r[i], kNoNode};
    return nullptr;
  }
  const unsigned w = type_bits(in.type);
  switch (in.op) {  // moves of a node that keep all its bits: the node itself
    case Op::kMov:
      if (graph_.node(s[0].node).width <= w) return d[0] = s[0], nullptr;
      break;
    case Op::kSelp:
      if (s[2].node == kNoNode) {
        const Value& c = (s[2].bits & 1) != 0 ? s[0] : s[1];
        if (c.node == kNoNode) return d[0] = {c.bits & mask_of(w), kNoNode}, nullptr;
        if (graph_.node(c.node).width <= w) return d[0] = c, nullptr;
      }
      break;
    case Op::kCvta:  // the global window is 0: cvta and cvta.to are the identity there
      if (in.space != Space::kShared && in.space != Space::kLocal && in.space != Space::kParam)
        return d[0] = s[0], nullptr;
      break;
    default: break;
  }
  NodeId ops[5] = {kNoNode, kNoNode, kNoNode, kNoNode, kNoNode};
  NodeId out[4] = {kNoNode, kNoNode, kNoNode, kNoNode};
  for (int i = 0; i < in.nsrc; ++i) ops[i] = node_of(s[i], static_cast<std::uint8_t>(operand_bits(in, i)));
  inst(in, ops, out);
  for (int i = 0; i < in.ndst; ++i) {
    d[i] = {0, out[i]};
    if (out[i] != kNoNode) graph_.note_origin(out[i], arm_, in.line);
  }
  return nullptr;
}

std::optional<std::string> SymbolicPolicy::mma(const Inst& in, const Value* srcs, Value* dsts) {
  std::vector<NodeId> ops(std::size_t{kWarpLanes} * in.nsrc), out(std::size_t{kWarpLanes} * in.ndst);
  for (std::size_t i = 0; i < ops.size(); ++i) ops[i] = graph_.fit(node_of(srcs[i], 32), 32);  // the register's bits
  std::vector<NodeId> tuples;
  graph_.opaque_group(in, ops, out, &tuples);
  for (std::size_t i = 0; i < out.size(); ++i) dsts[i] = {0, out[i]};
  for (const std::vector<NodeId>* made : {&out, &tuples}) {
    for (const NodeId n : *made) graph_.note_origin(n, arm_, in.line);
  }
  return std::nullopt;
}

SymValue SymbolicPolicy::select_value(const Value& guard, bool negate, const Value& if_true, const Value& if_false,
                                      unsigned width, std::uint32_t line) {
  if (guard.node == kNoNode) return ((guard.bits & 1) != 0) != negate ? if_true : if_false;
  if (if_true.node == if_false.node && (if_true.node != kNoNode || if_true.bits == if_false.bits)) return if_true;
  const Value& a = negate ? if_false : if_true;  // selp d, a, b, g: a where g's bit 0 is set
  const Value& b = negate ? if_true : if_false;
  unsigned w = std::clamp(width, 1u, 64u);
  for (const Value* v : {&a, &b}) {
    if (v->node != kNoNode)
      w = std::max<unsigned>(w, graph_.node(v->node).width);
    else if (w < 64 && (v->bits >> w) != 0)
      w = 64;
  }
  const Type t = w == 1 ? Type{Kind::kPred, 1} : Type{Kind::kBits, static_cast<std::uint8_t>(w)};
  const Inst in = make_inst(Op::kSelp, t, Type{}, 3);
  const auto wb = static_cast<std::uint8_t>(w);
  const NodeId ops[3] = {node_of(a, wb), node_of(b, wb), guard.node};
  NodeId out = kNoNode;
  graph_.inst(in, ops, &out);  // not the memo: it is keyed by the Inst's address
  graph_.note_origin(out, arm_, line);
  return {0, out};
}

namespace {
const char* symbolic_loop(SymbolicPolicy& policy, const Inst& in, SymValue* R, std::uint32_t exec, int* bad) {
  SymValue s[5], d[4];
  for (std::uint32_t m = exec; m != 0; m &= m - 1) {
    const int l = std::countr_zero(m);
    for (int i = 0; i < in.nsrc; ++i) s[i] = R[std::size_t{in.src[i]} * kWarpLanes + static_cast<unsigned>(l)];
    if (const char* why = policy.alu(in, s, d)) return *bad = l, why;
    for (int i = 0; i < in.ndst; ++i) {
      if (in.dst[i] != kNoSlot) R[std::size_t{in.dst[i]} * kWarpLanes + static_cast<unsigned>(l)] = d[i];
    }
  }
  return nullptr;
}
}  // namespace

SymbolicPolicy::LaneLoop SymbolicPolicy::select(const Inst& in) {
  return executor_runs(in.op) ? nullptr : &symbolic_loop;
}

void SymbolicPolicy::inst(const Inst& in, const NodeId* ops, NodeId* out) {
  if (in.nsrc > 4 || in.ndst > 2) return graph_.inst(in, ops, out);
  std::uint64_t h = reinterpret_cast<std::uintptr_t>(&in);
  for (int i = 0; i < in.nsrc; ++i) h = (h ^ ops[i]) * 0x9E3779B97F4A7C15ull;
  InstMemo& e = inst_memo_[(h >> 40) & (kMemo - 1)];
  bool hit = e.in == &in;
  for (int i = 0; i < in.nsrc && hit; ++i) hit = e.ops[static_cast<std::size_t>(i)] == ops[i];
  if (hit) {
    for (int i = 0; i < in.ndst; ++i) out[i] = e.out[static_cast<std::size_t>(i)];
    return;
  }
  graph_.inst(in, ops, out);
  e.in = &in;
  for (int i = 0; i < in.nsrc; ++i) e.ops[static_cast<std::size_t>(i)] = ops[i];
  for (int i = 0; i < in.ndst; ++i) e.out[static_cast<std::size_t>(i)] = out[i];
}

NodeId SymbolicPolicy::leaf(std::uint32_t tensor, std::uint64_t element) {
  LeafMemo& e = leaf_memo_[(element ^ (std::uint64_t{tensor} << 20)) & (kMemo - 1)];
  if (e.element == element && e.tensor == tensor) return e.node;
  e = {element, tensor, graph_.leaf(tensor, element)};
  return e.node;
}

void SymbolicPolicy::block_start(std::size_t shared_bytes, std::size_t local_bytes_per_thread) {
  if (shared_dirty_ || shared_.size() != shared_bytes) shared_.assign(shared_bytes, ShadowByte{});
  if (local_dirty_ || local_bytes_ != local_bytes_per_thread) std::fill(local_.begin(), local_.end(), ShadowByte{});
  local_bytes_ = local_bytes_per_thread;
  shared_dirty_ = local_dirty_ = false;
}

// The tags of `at`'s area (nullptr: nothing written there, so every byte is original); with
// `create`, made (all original) for a store.
std::vector<ShadowByte>* SymbolicPolicy::tags_for(const Where& at, bool create) {
  switch (at.area) {
    case Area::kBuffer: {
      SymMemory::Buffer& b = memory_.buffer(at.index);
      if (b.tags.empty() && create)
        b.tags.assign(memory_.memory().bytes(at.index).size(), ShadowByte{b.input ? kOriginal : kNoNode, 0});
      return b.tags.empty() ? nullptr : &b.tags;
    }
    case Area::kGlobalVar: {
      auto& t = vars_[at.index];
      if (t.empty() && create) t.assign(module_.globals[at.index].bytes.size(), ShadowByte{});
      return t.empty() ? nullptr : &t;
    }
    case Area::kShared: shared_dirty_ = shared_dirty_ || create; return shared_dirty_ ? &shared_ : nullptr;
    case Area::kLocal:
      if (create) {
        local_dirty_ = true;
        const std::size_t need = (std::size_t{at.index} + 1) * local_bytes_;
        if (local_.size() < need) local_.resize(need);
      }
      return local_dirty_ && local_.size() >= (std::size_t{at.index} + 1) * local_bytes_ ? &local_ : nullptr;
    case Area::kParam: break;  // parameters are concrete, and read-only
  }
  return nullptr;
}

SymValue SymbolicPolicy::finish_load(NodeId n, unsigned size, bool sign_extend) {
  if (!sign_extend || size >= 8) return {0, n};
  // ld.sN: the register holds the value sign-extended to 64 bits (ConcretePolicy::load).
  const Inst cvt =
      make_inst(Op::kCvt, Type{Kind::kSigned, 64}, Type{Kind::kSigned, static_cast<std::uint8_t>(8 * size)}, 1);
  NodeId out = kNoNode;
  graph_.inst(cvt, &n, &out);
  return {0, out};
}

SymValue SymbolicPolicy::load_pieces(const Where* at, const std::uint8_t* const* p, unsigned pieces, unsigned size) {
  ShadowByte src[8];
  std::uint8_t bytes[8] = {};
  const unsigned total = pieces * size;
  if (total > 8) return {0, kNoNode};  // never: ldmatrix asks for 2 x 2 bytes
  for (unsigned j = 0; j < pieces; ++j) {
    sources(graph_, input_at(at[j]), tags_for(at[j], false), shadow_at(at[j]), size, src + j * size);
    std::memcpy(bytes + j * size, p[j], size);
  }
  return assemble(graph_, src, bytes, total);
}

const SymMemory::Buffer* SymbolicPolicy::input_at(const Where& at) {
  return at.area == Area::kBuffer && memory_.buffer(at.index).input ? &memory_.buffer(at.index) : nullptr;
}

std::size_t SymbolicPolicy::shadow_at(const Where& at) const {
  return (at.area == Area::kLocal ? std::size_t{at.index} * local_bytes_ : 0) + at.offset;
}

SymValue SymbolicPolicy::load(const Where& at, const std::uint8_t* p, unsigned size, bool sign_extend) {
  const SymMemory::Buffer* input = input_at(at);
  const std::vector<ShadowByte>* tags = tags_for(at, false);
  if (tags == nullptr && input == nullptr) return {ConcretePolicy::load(p, size, sign_extend), kNoNode};
  if (tags == nullptr && size == input->element_bytes && at.offset % size == 0) {  // one leaf (the hot path)
    const auto [tensor, e] = input->element_at(at.offset);
    return finish_load(leaf(tensor, e), size, sign_extend);
  }
  ShadowByte src[8];
  sources(graph_, input, tags, shadow_at(at), size, src);
  const SymValue v = assemble(graph_, src, p, size);
  if (v.node == kNoNode) return {ConcretePolicy::load(p, size, sign_extend), kNoNode};
  return finish_load(v.node, size, sign_extend);
}

void SymbolicPolicy::store(const Where& at, std::uint8_t* p, unsigned size, const Value& v) {
  const Table* table = at.area == Area::kBuffer      ? &buffer_tables_[at.index]
                       : at.area == Area::kGlobalVar ? &var_tables_[at.index]
                                                     : nullptr;
  if (table != nullptr && table->snapshot && !error_) {
    error_ = fmt::format(
        "{}:{}: a load at an address computed from tensor data read {} {} as a table, and the "
        "launch writes it afterwards (not provable by tracing)",
        module_.name, table->line, at.area == Area::kBuffer ? "buffer" : "variable",
        at.area == Area::kBuffer ? std::to_string(at.index) : module_.globals[at.index].name);
  }
  const std::size_t base = shadow_at(at);
  if (v.node == kNoNode) {
    ConcretePolicy::store(p, size, v.bits);
    if (std::vector<ShadowByte>* tags = tags_for(at, input_at(at) != nullptr)) {
      std::fill_n(tags->begin() + static_cast<std::ptrdiff_t>(base), size, ShadowByte{});
    }
    return;
  }
  // The register's bits: the node zero-extended to whole bytes and at least the access's size.
  NodeId n = v.node;
  const unsigned w = graph_.node(n).width, whole = std::max((w + 7) / 8 * 8, 8 * size);
  if (whole != w) n = graph_.concat(n, graph_.constant(0, static_cast<std::uint8_t>(whole - w)));
  std::vector<ShadowByte>* tags = tags_for(at, true);
  if (tags == nullptr) {  // parameters: the executor refuses stores there before this
    if (!error_)
      error_ = fmt::format("{}: a store of a value computed from tensor data to the parameters", module_.name);
    return;
  }
  for (unsigned j = 0; j < size; ++j) (*tags)[base + j] = {n, static_cast<std::uint8_t>(j)};
  std::fill_n(p, size, std::uint8_t{0});  // the concrete bytes under a node are not read
}

std::optional<std::uint64_t> SymbolicPolicy::window(const Value& address) const {
  if (address.node == kNoNode) return address.bits >> kWindowShift;
  std::optional<std::uint64_t> found;
  bool conflict = false;
  // A symbol's or buffer's address is the only constant of an address above 2^40: look for it
  // through the address's 64-bit integer adds and the concats the graph makes of adds of
  // disjoint bits (`shift`: where the node's bit 0 lies in the address). Only a guess of the
  // buffer: the kLoad node reads its snapshot, and its value is undefined outside it.
  const auto walk = [&](auto&& self, NodeId n, unsigned shift, int depth) -> void {
    const sym::Node& node = graph_.node(n);
    if (depth > 32 || shift >= 64) return;
    switch (node.kind) {
      case sym::NodeKind::kConst: {
        const std::uint64_t win = (node.aux64 << shift) >> kWindowShift;
        if (win == 0) return;
        conflict = conflict || (found && *found != win);
        found = win;
        return;
      }
      case sym::NodeKind::kConcat:
        self(self, node.ops[0], shift, depth + 1);
        self(self, node.ops[1], shift + graph_.node(node.ops[0]).width, depth + 1);
        return;
      case sym::NodeKind::kInst:
        if (node.key.op != Op::kAdd || node.key.type.kind == Kind::kFloat || node.key.type.bits != 64) return;
        for (int i = 0; i < node.nops; ++i) self(self, node.ops[static_cast<std::size_t>(i)], shift, depth + 1);
        return;
      default: return;
    }
  };
  walk(walk, address.node, 0, 0);
  if (conflict) return std::nullopt;
  return found;
}

Expected<SymValue> SymbolicPolicy::lookup(const Where& at, const std::vector<std::uint8_t>& bytes,
                                          std::uint64_t base_address, const Value& address, std::uint64_t offset,
                                          unsigned size, bool sign_extend, std::uint32_t line) {
  const auto written = [](const std::vector<ShadowByte>& tags) {
    return std::any_of(tags.begin(), tags.end(), [](const ShadowByte& b) { return b.node != kNoNode; });
  };
  Table* table = nullptr;
  if (at.area == Area::kBuffer) {
    const SymMemory::Buffer& b = memory_.buffer(at.index);
    if (b.input) return Error{fmt::format("buffer {} is an input tensor, not a fixed table", at.index)};
    if (written(b.tags)) return Error{fmt::format("buffer {} holds values computed from tensor data", at.index)};
    table = &buffer_tables_[at.index];
  } else {
    if (written(vars_[at.index]))
      return Error{fmt::format("{} holds values computed from tensor data", module_.globals[at.index].name)};
    table = &var_tables_[at.index];
  }
  if (!table->snapshot) table->snapshot = graph_.snapshot(bytes, base_address), table->line = line;
  NodeId addr = address.node;
  if (offset != 0) {
    const Inst add = make_inst(Op::kAdd, Type{Kind::kUnsigned, 64}, Type{}, 2);
    const NodeId ops[2] = {addr, graph_.constant(offset, 64)};
    graph_.inst(add, ops, &addr);
  }
  const NodeId n = graph_.load(*table->snapshot, addr, static_cast<std::uint8_t>(8 * size));
  graph_.note_origin(n, arm_, line);
  return finish_load(n, size, sign_extend);
}

Expected<LaunchResult> trace_launch(const Module& module, const Kernel& kernel, const LaunchConfig& config,
                                    std::span<const Arg> args, SymMemory& memory, sym::Graph& graph, int arm) {
  SymbolicPolicy policy(graph, memory, module, arm);
  auto r = launch_symbolic(module, kernel, config, args, memory.memory(), policy);
  if (!r) return r;
  if (policy.error()) return Error{*policy.error()};
  return r;
}

}  // namespace bitproof::ptx
