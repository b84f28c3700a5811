// parse_module: tokens, then statements, decoded straight into each kernel's flat instruction
// stream (src/ptx/module.hpp). Every message is "NAME:LINE: ...".
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>

#include "arith/soft_float.hpp"
#include "ptx/ptx.hpp"

namespace bitproof::ptx {
namespace {

struct Tok {
  enum K : std::uint8_t { kIdent, kNum, kPunct, kString, kEnd } k = kEnd;
  std::string_view text;
  std::uint32_t line = 0;
};

bool ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%' || c == '.';
}
bool ident_char(char c) { return ident_start(c) || std::isdigit(static_cast<unsigned char>(c)); }

// The text split into tokens; comments dropped. nullopt + line on a character PTX has no use for.
Expected<std::vector<Tok>> tokenize(std::string_view s, const std::string& name) {
  std::vector<Tok> out;
  std::uint32_t line = 1;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    if (s.compare(i, 2, "/*") == 0) {
      const std::size_t end = s.find("*/", i + 2);
      if (end == std::string_view::npos) return Error{fmt::format("{}:{}: unterminated comment", name, line)};
      for (std::size_t j = i; j < end; ++j) line += s[j] == '\n';
      i = end + 2;
      continue;
    }
    const std::size_t start = i;
    Tok t;
    t.line = line;
    if (c == '"') {
      ++i;
      while (i < s.size() && s[i] != '"' && s[i] != '\n') ++i;
      if (i >= s.size() || s[i] != '"') return Error{fmt::format("{}:{}: unterminated string", name, line)};
      ++i;
      t.k = Tok::kString;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
      t.k = Tok::kNum;
    } else if (ident_start(c)) {
      while (i < s.size() && (ident_char(s[i]) || (s[i] == ':' && i + 1 < s.size() && s[i + 1] == ':'))) {
        i += s[i] == ':' ? 2 : 1;
      }
      t.k = Tok::kIdent;
    } else if (std::strchr(",;:{}[]()@!+-<>|=", c) != nullptr) {
      ++i;
      t.k = Tok::kPunct;
    } else {
      return Error{fmt::format("{}:{}: unexpected character 0x{:02x}", name, line, static_cast<unsigned char>(c))};
    }
    t.text = s.substr(start, i - start);
    out.push_back(t);
  }
  out.push_back(Tok{Tok::kEnd, {}, line});
  return out;
}

// A number token's value: decimal, 0x hex, 0b binary, leading-0 octal, 0f/0d float bits; a
// trailing U is allowed. is_f32/is_f64: the 0f / 0d forms.
struct Number {
  std::uint64_t bits = 0;
  bool is_f32 = false, is_f64 = false;
};
std::optional<Number> parse_number(std::string_view t) {
  Number n;
  int base = 10;
  if (t.size() > 1 && t.back() == 'U') t.remove_suffix(1);
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'f' || t[1] == 'F' || t[1] == 'd' || t[1] == 'D')) {
    n.is_f32 = t[1] == 'f' || t[1] == 'F';
    n.is_f64 = !n.is_f32;
    if (t.size() != (n.is_f32 ? 10u : 18u)) return std::nullopt;
    t.remove_prefix(2);
    base = 16;
  } else if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    t.remove_prefix(2), base = 16;
  } else if (t.size() > 2 && t[0] == '0' && (t[1] == 'b' || t[1] == 'B')) {
    t.remove_prefix(2), base = 2;
  } else if (t.size() > 1 && t[0] == '0') {
    t.remove_prefix(1), base = 8;
  }
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n.bits, base);
  if (ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return n;
}

std::optional<Type> parse_type(std::string_view m) {
  static const std::unordered_map<std::string_view, Type> types = {
      {"b8", {Kind::kBits, 8}},
      {"b16", {Kind::kBits, 16}},
      {"b32", {Kind::kBits, 32}},
      {"b64", {Kind::kBits, 64}},
      {"u8", {Kind::kUnsigned, 8}},
      {"u16", {Kind::kUnsigned, 16}},
      {"u32", {Kind::kUnsigned, 32}},
      {"u64", {Kind::kUnsigned, 64}},
      {"s8", {Kind::kSigned, 8}},
      {"s16", {Kind::kSigned, 16}},
      {"s32", {Kind::kSigned, 32}},
      {"s64", {Kind::kSigned, 64}},
      {"f16", {Kind::kFloat, 16}},
      {"f32", {Kind::kFloat, 32}},
      {"f64", {Kind::kFloat, 64}},
      {"f16x2", {Kind::kFloat, 32, true}},
      {"bf16", {Kind::kFloat, 16, false, true}},
      {"bf16x2", {Kind::kFloat, 32, true, true}},
      {"pred", {Kind::kPred, 1}},
  };
  const auto it = types.find(m);
  if (it == types.end()) return std::nullopt;
  return it->second;
}

std::uint64_t width_mask(int bits) { return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1; }

// A raw operand as written.
struct RawOp {
  enum K : std::uint8_t { kSlot, kImm, kVec, kAddr } k = kSlot;
  std::uint32_t slot = kNoSlot, slot2 = kNoSlot;  // slot2: the "|%p" second destination
  bool negated = false;                           // !%p
  Number imm;
  bool imm_neg = false;
  std::vector<std::uint32_t> vec;  // kNoSlot for "_"
  std::int64_t offset = 0;         // kAddr: [slot + offset], slot kNoSlot: [offset]
};

enum class SymKind : std::uint8_t { kShared, kDynShared, kGlobal, kParam, kLocal };
struct Symbol {
  SymKind kind;
  std::uint64_t value;  // the address in its own space (global: generic address)
};

class Parser {
 public:
  Parser(std::vector<Tok> toks, std::string name) : t_(std::move(toks)) { mod_.name = std::move(name); }
  Expected<Module> run();

 private:
  std::vector<Tok> t_;
  std::size_t p_ = 0;
  Module mod_;
  std::uint32_t module_shared_ = 0;  // bytes of module-level .shared variables so far
  std::unordered_map<std::string, Symbol> module_syms_;
  // The kernel being decoded.
  Kernel* k_ = nullptr;
  std::vector<std::unordered_map<std::string, std::uint32_t>> scopes_;
  std::unordered_map<std::string, Symbol> kernel_syms_;
  std::unordered_map<std::string, std::uint32_t> labels_;
  std::vector<std::pair<std::size_t, std::string>> fixups_;  // (instruction, label)
  std::map<std::pair<int, std::uint64_t>, std::uint32_t> consts_;
  std::vector<std::uint32_t> dyn_slots_;  // slots holding the dynamic shared base

  const Tok& peek(std::size_t ahead = 0) const { return t_[std::min(p_ + ahead, t_.size() - 1)]; }
  const Tok& next() {
    const Tok& t = t_[p_];
    if (p_ + 1 < t_.size()) ++p_;
    return t;
  }
  bool is(std::string_view s) const { return peek().k != Tok::kEnd && peek().text == s; }
  Error err(std::uint32_t line, const std::string& msg) const {
    return Error{fmt::format("{}:{}: {}", mod_.name, line, msg)};
  }
  Expected<Ok> expect(std::string_view s) {
    if (!is(s)) return err(peek().line, fmt::format("expected '{}', found '{}'", s, peek().text));
    next();
    return Ok{};
  }
  void skip_line() {
    const std::uint32_t line = peek().line;
    while (peek().k != Tok::kEnd && peek().line == line) next();
  }
  Expected<std::uint64_t> number(std::string_view what);
  Expected<Ok> module_statement();
  Expected<Ok> section();
  Expected<Ok> variable(bool in_kernel);
  Expected<Ok> entry();
  Expected<Ok> body();
  Expected<Ok> reg_decl();
  Expected<Ok> instruction();
  Expected<RawOp> operand();
  std::uint32_t const_slot(std::uint64_t v, SlotInit init = SlotInit::kConst, std::uint8_t dim = 0);
  std::uint32_t new_slot() {
    k_->slots.push_back({});
    return static_cast<std::uint32_t>(k_->slots.size() - 1);
  }
  const Symbol* symbol(std::string_view n) const {
    const std::string s(n);
    if (auto it = kernel_syms_.find(s); it != kernel_syms_.end()) return &it->second;
    if (auto it = module_syms_.find(s); it != module_syms_.end()) return &it->second;
    return nullptr;
  }
  std::optional<std::uint32_t> reg(std::string_view n) const {
    const std::string s(n);
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (auto f = it->find(s); f != it->end()) return f->second;
    }
    return std::nullopt;
  }
  Expected<std::uint32_t> src_slot(const RawOp& op, const Type& type, std::uint32_t line);
  Expected<Ok> refused(std::string_view opcode, std::uint32_t line) const;
  Expected<Ok> decode(std::string_view opcode, std::uint32_t line, std::uint32_t guard, bool neg_guard,
                      std::vector<RawOp>& ops);
};

Expected<std::uint64_t> Parser::number(std::string_view what) {
  const Tok& t = next();
  const auto n = t.k == Tok::kNum ? parse_number(t.text) : std::nullopt;
  if (!n || n->is_f32 || n->is_f64) return err(t.line, fmt::format("{}: expected a number, found '{}'", what, t.text));
  return n->bits;
}

std::uint32_t Parser::const_slot(std::uint64_t v, SlotInit init, std::uint8_t dim) {
  const auto key = std::make_pair(static_cast<int>(init) * 4 + dim, v);
  if (auto it = consts_.find(key); it != consts_.end()) return it->second;
  const std::uint32_t s = new_slot();
  k_->slots[s] = SlotSource{init, dim, v};
  consts_[key] = s;
  return s;
}

Expected<Module> Parser::run() {
  while (peek().k != Tok::kEnd) {
    if (auto r = module_statement(); !r) return r.error();
  }
  return std::move(mod_);
}

// `.section .debug_info { ... }`: the DWARF data nvcc -lineinfo and Triton append for debuggers
// (.b8/.b32 lists, labels): no code, skipped to its closing brace; a section without a body ends
// with its line.
Expected<Ok> Parser::section() {
  const std::uint32_t line = peek().line;
  while (peek().k != Tok::kEnd && peek().line == line && !is("{")) next();
  if (!is("{")) return Ok{};
  next();
  while (!is("}")) {
    if (peek().k == Tok::kEnd) return err(line, ".section: no closing '}'");
    if (is("{")) return err(peek().line, ".section: a '{' inside a section");
    next();
  }
  next();
  return Ok{};
}

Expected<Ok> Parser::module_statement() {
  const Tok& t = peek();
  if (t.text == ".version" || t.text == ".target" || t.text == ".file" || t.text == ".loc") {
    skip_line();
    return Ok{};
  }
  if (t.text == ".section") return section();
  if (t.text == ".address_size") {
    next();
    auto n = number(".address_size");
    if (!n) return n.error();
    if (*n != 64) return err(t.line, ".address_size: only 64 is supported");
    return Ok{};
  }
  if (t.text == ".visible" || t.text == ".weak" || t.text == ".extern") {
    if (t.text == ".extern" && (peek(1).text == ".shared" || peek(1).text == ".global" || peek(1).text == ".const")) {
      return variable(false);
    }
    next();
    return module_statement();
  }
  if (t.text == ".entry") return entry();
  if (t.text == ".func") return err(t.line, ".func: device functions (call) are not implemented");
  if (t.text == ".shared" || t.text == ".global" || t.text == ".const") return variable(false);
  return err(t.line, fmt::format("unexpected '{}' at module level", t.text));
}

// [.extern] .shared|.global|.const|.local [.align N] .type name[N]... [= {...}];
Expected<Ok> Parser::variable(bool in_kernel) {
  const std::uint32_t line = peek().line;
  const bool is_extern = is(".extern");
  if (is_extern) next();
  const std::string_view space = next().text;
  std::uint64_t align = 1;
  if (is(".align")) {
    next();
    auto a = number(".align");
    if (!a) return a.error();
    if (*a == 0 || (*a & (*a - 1)) != 0 || *a > 4096) return err(line, ".align: not a power of two up to 4096");
    align = *a;
  }
  if (is(".v2") || is(".v4")) return err(line, "vector variables are not implemented");
  const auto type = parse_type(peek().text.empty() ? "" : peek().text.substr(1));
  if (!type || type->kind == Kind::kPred)
    return err(line, fmt::format("variable type '{}' not understood", peek().text));
  next();
  if (peek().k != Tok::kIdent) return err(line, "variable name expected");
  const std::string vname(next().text);
  std::uint64_t count = 1;
  bool unsized = false;
  while (is("[")) {
    next();
    if (is("]")) {
      unsized = true;
    } else {
      auto n = number("array size");
      if (!n) return n.error();
      if (*n > (std::uint64_t{1} << 30) / std::max<std::uint64_t>(count, 1)) return err(line, "array too large");
      count *= *n;
    }
    if (auto e = expect("]"); !e) return e.error();
  }
  const std::uint64_t elem = std::max<std::uint64_t>(type->bits / 8, 1);
  const std::uint64_t bytes = unsized ? 0 : count * elem;
  if (bytes > (std::uint64_t{1} << 30)) return err(line, "variable too large");
  std::vector<std::uint8_t> init;
  if (is("=")) {
    next();
    const bool braced = is("{");
    if (braced) next();
    while (true) {
      const bool neg = is("-");
      if (neg) next();
      auto v = number("initialiser");
      if (!v) return v.error();
      const std::uint64_t bits = neg ? (~*v + 1) : *v;
      for (std::uint64_t b = 0; b < elem; ++b) init.push_back(static_cast<std::uint8_t>(bits >> (8 * b)));
      if (!braced || !is(",")) break;
      next();
    }
    if (braced) {
      if (auto e = expect("}"); !e) return e.error();
    }
    if (init.size() > bytes) return err(line, "initialiser longer than the variable");
  }
  if (auto e = expect(";"); !e) return e.error();
  auto& syms = in_kernel ? kernel_syms_ : module_syms_;
  if (syms.count(vname) != 0) return err(line, fmt::format("'{}' declared twice", vname));
  if (space == ".shared") {
    if (!init.empty()) return err(line, ".shared variables cannot be initialised");
    if (unsized) {
      if (!is_extern) return err(line, "an unsized .shared array must be .extern");
      syms[vname] = {SymKind::kDynShared, 0};
      return Ok{};
    }
    std::uint32_t& top = in_kernel ? k_->static_shared : module_shared_;
    const std::uint64_t off = (top + align - 1) / align * align;
    if (off + bytes > (std::uint64_t{1} << 30)) return err(line, ".shared too large");
    syms[vname] = {SymKind::kShared, off};
    top = static_cast<std::uint32_t>(off + bytes);
    return Ok{};
  }
  if (space == ".local") {
    if (!in_kernel) return err(line, ".local at module level is not implemented");
    const std::uint64_t off = (k_->local_bytes + align - 1) / align * align;
    syms[vname] = {SymKind::kLocal, off};
    k_->local_bytes = static_cast<std::uint32_t>(off + bytes);
    return Ok{};
  }
  if (space == ".global" || space == ".const") {
    if (in_kernel) return err(line, ".global inside a kernel is not implemented");
    if (unsized || is_extern) return err(line, "an .extern or unsized .global is not implemented");
    if (mod_.globals.size() >= 12) return err(line, "more than 12 .global/.const variables");
    init.resize(bytes);
    syms[vname] = {SymKind::kGlobal, (kGlobalVarWindow + mod_.globals.size()) << kWindowShift};
    mod_.globals.push_back({vname, std::move(init)});
    return Ok{};
  }
  return err(line, fmt::format("state space '{}' not implemented for variables", space));
}

Expected<Ok> Parser::entry() {
  const std::uint32_t line = next().line;  // .entry
  if (peek().k != Tok::kIdent) return err(line, ".entry: name expected");
  mod_.kernels.push_back({});
  k_ = &mod_.kernels.back();
  k_->name = std::string(next().text);
  for (const auto& other : mod_.kernels) {
    if (&other != k_ && other.name == k_->name) return err(line, fmt::format("kernel '{}' declared twice", k_->name));
  }
  k_->static_shared = module_shared_;
  scopes_.assign(1, {});
  kernel_syms_.clear(), labels_.clear(), fixups_.clear(), consts_.clear(), dyn_slots_.clear();
  if (auto e = expect("("); !e) return e.error();
  while (!is(")")) {
    const std::uint32_t pl = peek().line;
    if (!is(".param")) return err(pl, fmt::format("expected .param, found '{}'", peek().text));
    next();
    std::uint64_t align = 0;
    if (is(".align")) {
      next();
      auto a = number(".align");
      if (!a) return a.error();
      if (*a == 0 || (*a & (*a - 1)) != 0 || *a > 256) return err(pl, ".align: not a power of two up to 256");
      align = *a;
    }
    const auto type = parse_type(peek().text.empty() ? "" : peek().text.substr(1));
    if (!type || type->kind == Kind::kPred)
      return err(pl, fmt::format("parameter type '{}' not understood", peek().text));
    next();
    // Triton's pointer attributes: .ptr [.global|.shared|.const|.local] [.align N] (no effect here).
    if (is(".ptr")) {
      next();
      if (is(".global") || is(".shared") || is(".const") || is(".local")) next();
      if (is(".align")) {
        next();
        if (auto a = number(".align"); !a) return a.error();
      }
    }
    if (peek().k != Tok::kIdent) return err(pl, "parameter name expected");
    Param prm;
    prm.name = std::string(next().text);
    std::uint64_t count = 1;
    if (is("[")) {
      next();
      auto n = number("parameter array size");
      if (!n) return n.error();
      if (*n == 0 || *n > 4096) return err(pl, "parameter array size out of range");
      count = *n;
      if (auto e = expect("]"); !e) return e.error();
    }
    const std::uint64_t elem = type->bits / 8;
    if (align == 0) align = elem;
    const std::uint64_t off = (k_->param_bytes + align - 1) / align * align;
    if (off + elem * count > 32764) return err(pl, "parameters longer than 32764 bytes");
    prm.offset = static_cast<std::uint32_t>(off);
    prm.size = static_cast<std::uint32_t>(elem * count);
    prm.pointer_sized = count == 1 && elem == 8 && type->kind != Kind::kFloat;
    prm.is_float = count == 1 && type->kind == Kind::kFloat;
    k_->param_bytes = static_cast<std::uint32_t>(off + elem * count);
    if (kernel_syms_.count(prm.name) != 0) return err(pl, fmt::format("parameter '{}' declared twice", prm.name));
    kernel_syms_[prm.name] = {SymKind::kParam, off};
    k_->params.push_back(std::move(prm));
    if (is(","))
      next();
    else if (!is(")"))
      return err(peek().line, fmt::format("expected ',' or ')', found '{}'", peek().text));
  }
  next();  // )
  // Performance directives (.maxntid 128, 1, 1 / .reqntid / .minnctapersm ...): no effect here.
  while (peek().k == Tok::kIdent && peek().text != "{" && peek().text.starts_with(".")) {
    next();
    while (peek().k == Tok::kNum || is(",")) next();
  }
  if (auto e = expect("{"); !e) return e.error();
  if (auto b = body(); !b) return b.error();
  for (const auto& [at, label] : fixups_) {
    const auto it = labels_.find(label);
    if (it == labels_.end()) return err(k_->code[at].line, fmt::format("label '{}' is not defined", label));
    k_->code[at].target = it->second;
  }
  const std::uint32_t dyn = (k_->static_shared + 15) / 16 * 16;
  for (std::uint32_t s : dyn_slots_) k_->slots[s].value += dyn;
  // A thread that runs off the end exits.
  Inst ret;
  ret.op = Op::kExit;
  ret.line = t_[p_ - 1].line;
  k_->code.push_back(ret);
  k_ = nullptr;
  return Ok{};
}

Expected<Ok> Parser::body() {
  while (true) {
    const Tok& t = peek();
    if (t.k == Tok::kEnd) return err(t.line, "unexpected end of text inside a kernel");
    if (t.text == "}") {
      next();
      if (scopes_.size() == 1) return Ok{};
      scopes_.pop_back();
      continue;
    }
    if (t.text == "{") {
      next();
      if (scopes_.size() > 64) return err(t.line, "blocks nested too deep");
      scopes_.emplace_back();
      continue;
    }
    if (t.text == ".loc" || t.text == ".pragma" || t.text == ".file") {
      skip_line();
      continue;
    }
    if (t.text == ".reg") {
      if (auto r = reg_decl(); !r) return r.error();
      continue;
    }
    if (t.text == ".shared" || t.text == ".local" || t.text == ".global" || t.text == ".const" || t.text == ".extern") {
      if (auto r = variable(true); !r) return r.error();
      continue;
    }
    if (t.k == Tok::kIdent && peek(1).text == ":" && peek(1).k == Tok::kPunct) {
      const std::string label(t.text);
      next(), next();
      if (labels_.count(label) != 0) return err(t.line, fmt::format("label '{}' defined twice", label));
      labels_[label] = static_cast<std::uint32_t>(k_->code.size());
      continue;
    }
    if (auto r = instruction(); !r) return r.error();
  }
}

// .reg .type %r<N>;  .reg .type a, b;
Expected<Ok> Parser::reg_decl() {
  const std::uint32_t line = next().line;
  if (is(".v2") || is(".v4")) return err(line, "vector registers are not implemented");
  const auto type = parse_type(peek().text.empty() ? "" : peek().text.substr(1));
  if (!type) return err(line, fmt::format("register type '{}' not understood", peek().text));
  next();
  while (true) {
    if (peek().k != Tok::kIdent) return err(line, "register name expected");
    const std::string base(next().text);
    std::uint64_t n = 0;
    bool range = false;
    if (is("<")) {
      next();
      auto c = number("register count");
      if (!c) return c.error();
      if (*c > 100000) return err(line, "register count too large");
      n = *c, range = true;
      if (auto e = expect(">"); !e) return e.error();
    }
    if (k_->slots.size() + n > 1000000) return err(line, "too many registers");
    if (range) {
      for (std::uint64_t i = 0; i < n; ++i) scopes_.back()[base + std::to_string(i)] = new_slot();
    } else {
      scopes_.back()[base] = new_slot();
    }
    if (!is(",")) break;
    next();
  }
  return expect(";");
}

Expected<RawOp> Parser::operand() {
  RawOp op;
  const Tok& t = peek();
  const auto named = [&](std::string_view n, std::uint32_t line) -> Expected<std::uint32_t> {
    if (auto r = reg(n)) return *r;
    static const std::pair<std::string_view, SlotInit> specials[] = {{"%tid", SlotInit::kTid},
                                                                     {"%ntid", SlotInit::kNtid},
                                                                     {"%ctaid", SlotInit::kCtaid},
                                                                     {"%nctaid", SlotInit::kNctaid}};
    for (const auto& [prefix, init] : specials) {
      if (n.size() == prefix.size() + 2 && n.starts_with(prefix) && n[prefix.size()] == '.') {
        const char d = n.back();
        if (d != 'x' && d != 'y' && d != 'z') break;
        return const_slot(0, init, static_cast<std::uint8_t>(d - 'x'));
      }
    }
    if (n == "%laneid") return const_slot(0, SlotInit::kLaneId);
    if (n == "%warpid") return const_slot(0, SlotInit::kWarpId);
    if (n == "WARP_SZ") return const_slot(32);
    if (const Symbol* s = symbol(n)) {
      if (s->kind == SymKind::kDynShared) {
        const std::uint32_t slot = new_slot();
        k_->slots[slot] = SlotSource{SlotInit::kConst, 0, 0};
        dyn_slots_.push_back(slot);
        return slot;
      }
      return const_slot(s->value);
    }
    if (n.starts_with("%"))
      return err(line,
                 fmt::format("'{}' is not a declared register or a special register this executor implements", n));
    return err(line, fmt::format("'{}' is not declared", n));
  };
  if (t.text == "[") {
    next();
    op.k = RawOp::kAddr;
    if (peek().k == Tok::kIdent) {
      auto s = named(next().text, t.line);
      if (!s) return s.error();
      op.slot = *s;
      if (is("+"))
        next();
      else if (!is("]"))
        return err(t.line, "address: expected '+' or ']'");
    }
    if (!is("]")) {
      const bool neg = is("-");
      if (neg) next();
      auto n = number("address offset");
      if (!n) return n.error();
      if (*n > (std::uint64_t{1} << 40)) return err(t.line, "address offset too large");
      op.offset = neg ? -static_cast<std::int64_t>(*n) : static_cast<std::int64_t>(*n);
    }
    if (auto e = expect("]"); !e) return e.error();
    return op;
  }
  if (t.text == "{") {
    next();
    op.k = RawOp::kVec;
    while (true) {
      if (peek().k != Tok::kIdent) return err(t.line, "vector element expected");
      if (peek().text == "_") {
        next();
        op.vec.push_back(kNoSlot);
      } else {
        auto s = named(next().text, t.line);
        if (!s) return s.error();
        op.vec.push_back(*s);
      }
      if (op.vec.size() > 4) return err(t.line, "vectors have at most 4 elements");
      if (!is(",")) break;
      next();
    }
    if (auto e = expect("}"); !e) return e.error();
    return op;
  }
  if (t.text == "!") {
    next();
    op.negated = true;
  }
  if (t.text == "-" || peek().k == Tok::kNum) {
    op.k = RawOp::kImm;
    if (is("-")) {
      next();
      op.imm_neg = true;
    }
    const Tok& n = next();
    const auto v = n.k == Tok::kNum ? parse_number(n.text) : std::nullopt;
    if (!v) return err(n.line, fmt::format("'{}' is not a number this executor reads", n.text));
    op.imm = *v;
    return op;
  }
  if (peek().k != Tok::kIdent) return err(t.line, fmt::format("operand expected, found '{}'", peek().text));
  auto s = named(next().text, t.line);
  if (!s) return s.error();
  op.slot = *s;
  if (is("|")) {
    next();
    if (peek().k != Tok::kIdent) return err(t.line, "second destination expected after '|'");
    auto s2 = named(next().text, t.line);
    if (!s2) return s2.error();
    op.slot2 = *s2;
  }
  return op;
}

Expected<Ok> Parser::instruction() {
  const std::uint32_t line = peek().line;
  std::uint32_t guard = kNoSlot;
  bool neg_guard = false;
  if (is("@")) {
    next();
    if (is("!")) {
      next();
      neg_guard = true;
    }
    const auto r = peek().k == Tok::kIdent ? reg(peek().text) : std::nullopt;
    if (!r) return err(line, fmt::format("guard '{}' is not a declared predicate", peek().text));
    next();
    guard = *r;
  }
  if (peek().k != Tok::kIdent) return err(line, fmt::format("instruction expected, found '{}'", peek().text));
  const std::string_view opcode = next().text;
  if (auto r = refused(opcode, line); !r) return r.error();  // before operands it cannot read
  std::vector<RawOp> ops;
  if (opcode.starts_with("bra")) {  // the label is not an operand slot
    if (peek().k != Tok::kIdent) return err(line, "bra: label expected");
    fixups_.emplace_back(k_->code.size(), std::string(next().text));
  } else {
    while (!is(";")) {
      if (peek().k == Tok::kEnd) return err(line, "';' expected");
      auto op = operand();
      if (!op) return op.error();
      ops.push_back(std::move(*op));
      if (ops.size() > 8) return err(line, "too many operands");
      if (is(","))
        next();
      else if (!is(";"))
        return err(line, fmt::format("expected ',' or ';', found '{}'", peek().text));
    }
  }
  if (auto e = expect(";"); !e) return e.error();
  return decode(opcode, line, guard, neg_guard, ops);
}

// The slot holding a source operand: a register, or an immediate materialised as a constant
// of `type`'s width (0f bits for f32; 0d converted to f32 round-to-nearest for an f32 operand).
Expected<std::uint32_t> Parser::src_slot(const RawOp& op, const Type& type, std::uint32_t line) {
  if (op.k == RawOp::kSlot) {
    if (op.slot2 != kNoSlot) return err(line, "'|' is only allowed on a destination");
    return op.slot;
  }
  if (op.k != RawOp::kImm) return err(line, "a register or an immediate was expected");
  std::uint64_t bits = op.imm.bits;
  if (op.imm.is_f32 || op.imm.is_f64) {
    if (type.kind != Kind::kFloat && type.kind != Kind::kBits)
      return err(line, "a float immediate for an integer operand");
    if (op.imm.is_f64 && type.bits == 32 && !type.x2) {
      bits = soft::convert<soft::Binary32, soft::Binary64>(bits, soft::Round::kNearestEven);
    } else if ((op.imm.is_f32 && type.bits != 32) || (op.imm.is_f64 && type.bits != 64)) {
      return err(line, "the float immediate's width differs from the operand's");
    }
    if (op.imm_neg) bits ^= std::uint64_t{1} << (type.bits - 1);
  } else {
    if (type.kind == Kind::kFloat) return err(line, "an integer immediate for a float operand");
    if (op.imm_neg) bits = ~bits + 1;
  }
  return const_slot(bits & width_mask(type.kind == Kind::kPred ? 1 : type.bits));
}

}  // namespace

namespace {

// Instructions refused by name, with the reason the issue gives (docs/ptx-executor.md).
const char* refusal(std::string_view base) {
  static const std::pair<std::string_view, const char*> table[] = {
      {"atom", "atomics are not implemented: their order is not defined"},
      {"red", "atomic reductions are not implemented: their order is not defined"},
      {"wgmma", "tensor-core wgmma is not implemented: its accumulation is the hardware's"},
      {"tex", "textures are not implemented"},
      {"tld4", "textures are not implemented"},
      {"suld", "surfaces are not implemented"},
      {"sust", "surfaces are not implemented"},
      {"call", "calls are not implemented"},
      {"activemask", "activemask is not implemented: which threads are active is the scheduler's choice"},
  };
  for (const auto& [name, why] : table) {
    if (base == name) return why;
  }
  return nullptr;
}

std::optional<Cmp> parse_cmp(std::string_view m) {
  static const std::pair<std::string_view, Cmp> table[] = {
      {"eq", Cmp::kEq},   {"ne", Cmp::kNe},   {"lt", Cmp::kLt},   {"le", Cmp::kLe},   {"gt", Cmp::kGt},
      {"ge", Cmp::kGe},   {"lo", Cmp::kLo},   {"ls", Cmp::kLs},   {"hi", Cmp::kHi},   {"hs", Cmp::kHs},
      {"equ", Cmp::kEqu}, {"neu", Cmp::kNeu}, {"ltu", Cmp::kLtu}, {"leu", Cmp::kLeu}, {"gtu", Cmp::kGtu},
      {"geu", Cmp::kGeu}, {"num", Cmp::kNum}, {"nan", Cmp::kNan},
  };
  for (const auto& [name, c] : table) {
    if (m == name) return c;
  }
  return std::nullopt;
}

// The Approx form of an instruction written `base`.approx (or div.full); nullopt for any other
// (refused at parse time, as every approximate instruction was before they became opaque nodes).
std::optional<Approx> approx_form(std::string_view base, bool full) {
  if (full) return base == "div" ? std::optional{Approx::kDivFull} : std::nullopt;
  static const std::pair<std::string_view, Approx> table[] = {
      {"ex2", Approx::kEx2},     {"lg2", Approx::kLg2},   {"rcp", Approx::kRcp},
      {"rsqrt", Approx::kRsqrt}, {"sqrt", Approx::kSqrt}, {"sin", Approx::kSin},
      {"cos", Approx::kCos},     {"tanh", Approx::kTanh}, {"div", Approx::kDiv},
  };
  for (const auto& [name, a] : table) {
    if (base == name) return a;
  }
  return std::nullopt;
}

// Whether PTX defines `a` on type `t` with (ftz) or without .ftz (PTX ISA 9.7.3, 9.7.4): every
// form on f32, .ftz optional except for tanh (which has no .ftz); ex2.approx on f16/f16x2
// without .ftz and on bf16/bf16x2 with it; tanh.approx on f16, f16x2, bf16, bf16x2.
bool approx_type_ok(Approx a, const Type& t, bool ftz) {
  if (t.kind != Kind::kFloat) return false;
  if (t.bits == 32 && !t.x2) return !(a == Approx::kTanh && ftz);
  const bool half = (t.bits == 16 && !t.x2) || (t.bits == 32 && t.x2);
  if (!half) return false;
  if (a == Approx::kEx2) return ftz == t.bf;
  if (a == Approx::kTanh) return !ftz;
  return false;
}

// Cache and ordering hints that do not change a single-threaded value.
bool ignorable(std::string_view base, std::string_view m) {
  if (base == "ld" || base == "st") {
    static constexpr std::string_view hints[] = {"ca", "cg", "cs", "lu", "cv", "nc", "wb", "wt", "volatile", "weak"};
    for (auto h : hints) {
      if (m == h) return true;
    }
    return (m.starts_with("L1::") || m.starts_with("L2::")) && m != "L2::cache_hint";
  }
  if (m == "sync" && (base == "shfl" || base == "vote" || base == "bar" || base == "barrier")) return true;
  if (m == "aligned" && (base == "bar" || base == "barrier")) return true;
  return false;
}

}  // namespace

// The instructions refused by name or modifier, with the reason (docs/ptx-executor.md).
Expected<Ok> Parser::refused(std::string_view opcode, std::uint32_t line) const {
  std::size_t start = 0;
  bool first = true;
  std::string_view base;
  while (start <= opcode.size()) {
    const std::size_t dot = std::min(opcode.find('.', start), opcode.size());
    const std::string_view m = opcode.substr(start, dot - start);
    if (first) {
      base = m;
      if (const char* why = refusal(m)) return err(line, fmt::format("{}: {}", opcode, why));
    } else if ((m == "approx" || m == "full") && !approx_form(base, m == "full")) {
      return err(line,
                 fmt::format("{}: approximate instructions are not implemented (they run on the GPU only)", opcode));
    } else if (m == "rm" || m == "rp" || m == "rmi" || m == "rpi") {
      return err(line,
                 fmt::format("{}: rounding .{} is not implemented (the soft arithmetic has .rn and .rz)", opcode, m));
    }
    first = false;
    start = dot + 1;
  }
  return Ok{};
}

Expected<Ok> Parser::decode(std::string_view opcode, std::uint32_t line, std::uint32_t guard, bool neg_guard,
                            std::vector<RawOp>& ops) {
  std::vector<std::string_view> mods;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = opcode.find('.', start);
    mods.push_back(opcode.substr(start, dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  const std::string_view base = mods.front();
  mods.erase(mods.begin());
  Inst in;
  in.line = line, in.guard = guard, in.neg_guard = neg_guard;
  if (guard != kNoSlot && k_->slots[guard].init != SlotInit::kZero) return err(line, "the guard is not a register");
  // Modifiers, consumed as the instruction's shape needs them; anything left is an error.
  std::vector<Type> types;
  std::vector<std::string_view> rest;
  for (auto m : mods) {
    if (auto t = parse_type(m))
      types.push_back(*t);
    else if (m == "rn")
      in.rnd = Rnd::kRn;
    else if (m == "rz")
      in.rnd = Rnd::kRz;
    else if (m == "rni")
      in.rnd = Rnd::kRni;
    else if (m == "rzi")
      in.rnd = Rnd::kRzi;
    else if (m == "ftz")
      in.ftz = true;
    else if (m == "sat")
      in.sat = true;
    else if (m == "v2" || m == "v4")
      in.vec = static_cast<std::uint8_t>(m[1] - '0');
    else if (!ignorable(base, m))
      rest.push_back(m);
  }
  const auto take = [&](std::string_view m) {
    for (auto it = rest.begin(); it != rest.end(); ++it) {
      if (*it == m) {
        rest.erase(it);
        return true;
      }
    }
    return false;
  };
  const auto dst = [&](std::size_t i) -> Expected<std::uint32_t> {
    if (i >= ops.size() || ops[i].k != RawOp::kSlot || ops[i].negated)
      return err(line, fmt::format("{}: operand {} must be a register", opcode, i));
    if (k_->slots[ops[i].slot].init != SlotInit::kZero)
      return err(line, fmt::format("{}: operand {} is not a register it may write", opcode, i));
    return ops[i].slot;
  };
  const auto src = [&](std::size_t i, const Type& t) -> Expected<std::uint32_t> {
    if (i >= ops.size()) return err(line, fmt::format("{}: operand {} missing", opcode, i));
    if (ops[i].negated) return err(line, fmt::format("{}: operand {} cannot be negated", opcode, i));
    auto s = src_slot(ops[i], t, line);
    if (!s) return s.error();
    return *s;
  };
  const auto need = [&](std::size_t n) -> Expected<Ok> {
    if (ops.size() != n) return err(line, fmt::format("{}: {} operands expected, {} given", opcode, n, ops.size()));
    return Ok{};
  };
  const auto one_type = [&]() -> Expected<Type> {
    if (types.size() != 1) return err(line, fmt::format("{}: exactly one type expected", opcode));
    return types[0];
  };
  const auto finish = [&]() -> Expected<Ok> {
    if (!rest.empty()) return err(line, fmt::format("{}: modifier .{} is not implemented", opcode, rest.front()));
    k_->code.push_back(in);
    return Ok{};
  };
#define BP_TRY(var, expr)               \
  auto var##_e = (expr);                \
  if (!var##_e) return var##_e.error(); \
  auto var = *var##_e;

  if (base == "mma") {
    // mma.sync.aligned.<form> {d..}, {a..}, {b..}, {c..}: module.hpp's card and kMmaForms. The form
    // is matched as written, whole; each operand a brace of 32-bit registers.
    const std::string_view prefix = "mma.sync.aligned.";
    std::optional<std::size_t> index;
    for (std::size_t i = 0; i < std::size(kMmaForms) && opcode.starts_with(prefix); ++i) {
      if (opcode.substr(prefix.size()) == kMmaForms[i].name) index = i;
    }
    if (!index) return err(line, fmt::format("{}: this mma form is not implemented (module.hpp, kMmaForms)", opcode));
    const MmaForm& f = kMmaForms[*index];
    in.op = Op::kMma;
    in.mode = static_cast<std::uint8_t>(*index);
    in.type = Type{Kind::kBits, 32};
    if (auto e = need(4); !e) return e.error();
    const std::uint8_t counts[4] = {f.d, f.a, f.b, f.c};
    static constexpr const char* kPart[4] = {"D", "A", "B", "C"};
    in.list = static_cast<std::uint32_t>(k_->lists.size());
    for (int part = 0; part < 4; ++part) {
      const RawOp& o = ops[static_cast<std::size_t>(part)];
      if (o.k != RawOp::kVec || o.vec.size() != counts[part])
        return err(line, fmt::format("{}: {} registers in braces expected for {}", opcode, counts[part], kPart[part]));
      for (const std::uint32_t r : o.vec) {
        if (r == kNoSlot) return err(line, fmt::format("{}: '_' in {}", opcode, kPart[part]));
        if (part == 0 && k_->slots[r].init != SlotInit::kZero)
          return err(line, fmt::format("{}: D holds a register it may not write", opcode));
        k_->lists.push_back(r);
      }
    }
    in.ndst = f.d, in.nsrc = static_cast<std::uint8_t>(f.a + f.b + f.c);
    k_->code.push_back(in);  // its modifiers are the form (matched above), not read one by one
    return Ok{};
  }
  if (const bool full = take("full"); full || take("approx")) {
    // An approximate form (refused() let through only bases approx_form knows): an opaque
    // instruction, Op::kApprox with its form in `mode` (module.hpp's card).
    const auto form = approx_form(base, full);
    if (!form) return err(line, fmt::format("{}: approximate instructions are not implemented", opcode));
    in.op = Op::kApprox;
    in.mode = static_cast<std::uint8_t>(*form);
    BP_TRY(type, one_type());
    in.type = type;
    if (in.rnd != Rnd::kNone || in.sat || in.vec != 1 || !approx_type_ok(*form, type, in.ftz))
      return err(line, fmt::format("{}: not an approximate form PTX defines (or one not decoded: f64)", opcode));
    const bool binary = *form == Approx::kDiv || *form == Approx::kDivFull;
    if (auto e = need(binary ? 3 : 2); !e) return e.error();
    BP_TRY(d, dst(0));
    in.dst[0] = d, in.ndst = 1;
    for (std::size_t i = 1; i < (binary ? 3u : 2u); ++i) {
      BP_TRY(sv, src(i, type));
      in.src[i - 1] = sv;
    }
    in.nsrc = binary ? 2 : 1;
    return finish();
  }
  static const std::unordered_map<std::string_view, Op> arith = {
      {"add", Op::kAdd}, {"sub", Op::kSub}, {"mul", Op::kMul}, {"mad", Op::kMad},   {"fma", Op::kFma},
      {"div", Op::kDiv}, {"rem", Op::kRem}, {"neg", Op::kNeg}, {"abs", Op::kAbs},   {"min", Op::kMin},
      {"max", Op::kMax}, {"shl", Op::kShl}, {"shr", Op::kShr}, {"and", Op::kAnd},   {"or", Op::kOr},
      {"xor", Op::kXor}, {"not", Op::kNot}, {"rcp", Op::kRcp}, {"sqrt", Op::kSqrt},
  };
  if (auto it = arith.find(base); it != arith.end()) {
    in.op = it->second;
    BP_TRY(type, one_type());
    in.type = type;
    if (take("lo"))
      in.part = MulPart::kLo;
    else if (take("hi"))
      in.part = MulPart::kHi;
    else if (take("wide"))
      in.part = MulPart::kWide;
    const bool flt = type.kind == Kind::kFloat;
    const bool unary =
        in.op == Op::kNeg || in.op == Op::kAbs || in.op == Op::kNot || in.op == Op::kRcp || in.op == Op::kSqrt;
    const std::size_t n = unary ? 2 : (in.op == Op::kMad || in.op == Op::kFma) ? 4 : 3;
    if (auto e = need(n); !e) return e.error();
    if (flt) {
      if (type.bits == 64) return err(line, fmt::format("{}: f64 arithmetic is not implemented", opcode));
      if (in.part != MulPart::kNone || in.rnd == Rnd::kRni || in.rnd == Rnd::kRzi)
        return err(line, fmt::format("{}: modifier not valid for a float type", opcode));
      const bool bitwise = in.op == Op::kAnd || in.op == Op::kOr || in.op == Op::kXor || in.op == Op::kNot ||
                           in.op == Op::kShl || in.op == Op::kShr || in.op == Op::kRem;
      if (bitwise) return err(line, fmt::format("{}: not valid for a float type", opcode));
      if (in.op == Op::kMad) in.op = Op::kFma;  // mad.rnd.f32 is fused (PTX ISA 9.7.3.6)
      const bool rounds = in.op == Op::kAdd || in.op == Op::kSub || in.op == Op::kMul || in.op == Op::kFma ||
                          in.op == Op::kDiv || in.op == Op::kRcp || in.op == Op::kSqrt;
      if (!rounds && in.rnd != Rnd::kNone)
        return err(line, fmt::format("{}: a rounding modifier is not valid here", opcode));
      if (in.op == Op::kDiv || in.op == Op::kRcp || in.op == Op::kSqrt) {
        if (in.rnd != Rnd::kRn || type.bits != 32 || type.x2 || in.ftz || in.sat) {
          return err(line, fmt::format("{}: only the .rn.f32 form (without .ftz/.sat) is implemented", opcode));
        }
      }
      if (rounds && in.rnd == Rnd::kNone) {
        if (in.op == Op::kFma) return err(line, fmt::format("{}: a rounding modifier is required", opcode));
        k_->contractible_lines.push_back(line);
      }
      if (rounds && in.rnd == Rnd::kNone) in.rnd = Rnd::kRn;
      if (type.bf && (in.ftz || in.sat))
        return err(line, fmt::format("{}: .ftz/.sat on bf16 are not implemented", opcode));
      if (in.sat && (in.op == Op::kMin || in.op == Op::kMax || in.op == Op::kNeg || in.op == Op::kAbs)) {
        return err(line, fmt::format("{}: .sat is not valid here", opcode));
      }
      if (take("NaN") || take("xorsign"))
        return err(line, fmt::format("{}: the .NaN/.xorsign forms are not implemented", opcode));
    } else {
      if (in.rnd != Rnd::kNone || in.ftz || in.sat || type.kind == Kind::kPred) {
        if (!(type.kind == Kind::kPred &&
              (in.op == Op::kAnd || in.op == Op::kOr || in.op == Op::kXor || in.op == Op::kNot))) {
          return err(line, fmt::format("{}: modifiers or type not implemented for integers", opcode));
        }
      }
      if (in.op == Op::kRcp || in.op == Op::kSqrt || in.op == Op::kFma)
        return err(line, fmt::format("{}: needs a float type", opcode));
      const bool mul = in.op == Op::kMul || in.op == Op::kMad;
      if (mul && in.part == MulPart::kNone) return err(line, fmt::format("{}: .lo, .hi or .wide is required", opcode));
      if (!mul && in.part != MulPart::kNone)
        return err(line, fmt::format("{}: .lo/.hi/.wide only on mul and mad", opcode));
      if (in.part == MulPart::kWide && type.bits > 32)
        return err(line, fmt::format("{}: .wide needs a 16- or 32-bit type", opcode));
      if (type.bits < 16 && type.kind != Kind::kPred)
        return err(line, fmt::format("{}: 8-bit arithmetic is not valid", opcode));
    }
    BP_TRY(d, dst(0));
    in.dst[0] = d, in.ndst = 1;
    Type wide = type;
    if (in.part == MulPart::kWide) wide.bits = static_cast<std::uint8_t>(type.bits * 2);
    for (std::size_t i = 1; i < n; ++i) {
      Type t = type;
      if ((in.op == Op::kShl || in.op == Op::kShr) && i == 2) t = {Kind::kUnsigned, 32};
      if (in.op == Op::kMad && i == 3) t = wide;
      BP_TRY(s, src(i, t));
      in.src[i - 1] = s;
    }
    in.nsrc = static_cast<std::uint8_t>(n - 1);
    return finish();
  }
  if (base == "mov") {
    BP_TRY(type, one_type());
    in.type = type;
    if (auto e = need(2); !e) return e.error();
    if (ops[0].k == RawOp::kVec || ops[1].k == RawOp::kVec) {
      const bool unpack = ops[0].k == RawOp::kVec;
      const auto& vec = unpack ? ops[0].vec : ops[1].vec;
      if ((vec.size() != 2 && vec.size() != 4) || type.bits % vec.size() != 0 || type.bits / vec.size() < 8) {
        return err(line, fmt::format("{}: the vector does not divide the type", opcode));
      }
      in.op = unpack ? Op::kUnpack : Op::kPack;
      in.vec = static_cast<std::uint8_t>(vec.size());
      for (std::size_t i = 0; i < vec.size(); ++i) {
        if (vec[i] == kNoSlot && !unpack) return err(line, fmt::format("{}: '_' is not a source", opcode));
        if (unpack && vec[i] != kNoSlot && k_->slots[vec[i]].init != SlotInit::kZero)
          return err(line, fmt::format("{}: a vector element is not a register", opcode));
        (unpack ? in.dst : in.src)[i] = vec[i];
      }
      if (unpack) {
        BP_TRY(s, src(1, type));
        in.src[0] = s, in.nsrc = 1, in.ndst = in.vec;
      } else {
        BP_TRY(d, dst(0));
        in.dst[0] = d, in.ndst = 1, in.nsrc = in.vec;
      }
      return finish();
    }
    in.op = Op::kMov;
    BP_TRY(d, dst(0));
    BP_TRY(s, src(1, type));
    in.dst[0] = d, in.src[0] = s, in.ndst = 1, in.nsrc = 1;
    return finish();
  }
  if (base == "selp") {
    in.op = Op::kSelp;
    BP_TRY(type, one_type());
    in.type = type;
    if (auto e = need(4); !e) return e.error();
    BP_TRY(d, dst(0));
    BP_TRY(a, src(1, type));
    BP_TRY(b, src(2, type));
    BP_TRY(p, src(3, Type{Kind::kPred, 1}));
    in.dst[0] = d, in.src[0] = a, in.src[1] = b, in.src[2] = p, in.ndst = 1, in.nsrc = 3;
    return finish();
  }
  if (base == "setp") {
    in.op = Op::kSetp;
    if (rest.empty()) return err(line, "setp: comparison expected");
    const auto cmp = parse_cmp(rest.front());
    if (!cmp) return err(line, fmt::format("setp: comparison .{} not understood", rest.front()));
    in.cmp = *cmp;
    rest.erase(rest.begin());
    if (take("and"))
      in.bool_op = BoolOp::kAnd;
    else if (take("or"))
      in.bool_op = BoolOp::kOr;
    else if (take("xor"))
      in.bool_op = BoolOp::kXor;
    BP_TRY(type, one_type());
    in.type = type;
    const bool flt = type.kind == Kind::kFloat;
    if (type.kind == Kind::kPred || type.x2 || (flt && type.bits == 64))
      return err(line, fmt::format("{}: type not implemented", opcode));
    if (in.rnd != Rnd::kNone || in.sat || (in.ftz && !flt))
      return err(line, fmt::format("{}: modifier not valid", opcode));
    const bool float_only = in.cmp >= Cmp::kEqu;
    const bool int_only = in.cmp >= Cmp::kLo && in.cmp <= Cmp::kHs;
    if ((float_only && !flt) || (int_only && flt))
      return err(line, fmt::format("{}: comparison not valid for the type", opcode));
    if (auto e = need(in.bool_op == BoolOp::kNone ? 3 : 4); !e) return e.error();
    BP_TRY(d, dst(0));
    in.dst[0] = d, in.ndst = 1;
    if (ops[0].slot2 != kNoSlot) {
      if (k_->slots[ops[0].slot2].init != SlotInit::kZero)
        return err(line, "setp: the second destination is not a register");
      in.dst[1] = ops[0].slot2, in.ndst = 2;
    }
    BP_TRY(a, src(1, type));
    BP_TRY(b, src(2, type));
    in.src[0] = a, in.src[1] = b, in.nsrc = 2;
    if (in.bool_op != BoolOp::kNone) {
      in.neg_src = ops[3].negated;
      ops[3].negated = false;
      BP_TRY(c, src(3, Type{Kind::kPred, 1}));
      in.src[2] = c, in.nsrc = 3;
    }
    return finish();
  }
  if (base == "cvt" && types.size() == 2 && types[0].x2 && types[1].kind == Kind::kFloat && types[1].bits == 32 &&
      !types[1].x2) {
    // cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32 d, a, b: d = {a converted (upper), b converted (lower)}
    // (PTX ISA, cvt); .rz too for f16x2. .relu/.satfinite are left (finish refuses them).
    in.op = Op::kCvtPack;
    in.type = types[0], in.src_type = types[1];
    if (in.rnd != Rnd::kRn && !(in.rnd == Rnd::kRz && !in.type.bf))
      return err(line, fmt::format("{}: only .rn (and .rz to f16x2) is implemented", opcode));
    if (in.ftz || in.sat) return err(line, fmt::format("{}: .ftz/.sat conversions are not implemented", opcode));
    if (auto e = need(3); !e) return e.error();
    BP_TRY(dd, dst(0));
    BP_TRY(a, src(1, types[1]));
    BP_TRY(b, src(2, types[1]));
    in.dst[0] = dd, in.src[0] = a, in.src[1] = b, in.ndst = 1, in.nsrc = 2;
    return finish();
  }
  if (base == "cvt") {
    in.op = Op::kCvt;
    if (types.size() != 2) return err(line, "cvt: two types expected");
    in.type = types[0], in.src_type = types[1];
    const Type& d = in.type;
    const Type& s = in.src_type;
    if (d.x2 || s.x2 || d.kind == Kind::kPred || s.kind == Kind::kPred || (d.bits == 64 && d.kind == Kind::kFloat) ||
        (s.bits == 64 && s.kind == Kind::kFloat)) {
      return err(line, fmt::format("{}: conversion not implemented", opcode));
    }
    const bool df = d.kind == Kind::kFloat, sf = s.kind == Kind::kFloat;
    if (df && sf) {
      if (d.bits == s.bits)
        return err(line, fmt::format("{}: rounding to an integral value is not implemented", opcode));
      const bool narrows = d.bits < s.bits;
      if (narrows && in.rnd != Rnd::kRn && in.rnd != Rnd::kRz)
        return err(line, fmt::format("{}: .rn or .rz is required", opcode));
      if (!narrows && in.rnd != Rnd::kNone)
        return err(line, fmt::format("{}: an exact conversion takes no rounding", opcode));
      if (d.bf && in.rnd != Rnd::kRn) return err(line, fmt::format("{}: only .rn to bf16 is implemented", opcode));
      if (in.ftz || in.sat) return err(line, fmt::format("{}: .ftz/.sat conversions are not implemented", opcode));
    } else if (df) {
      if (in.rnd != Rnd::kRn && in.rnd != Rnd::kRz) return err(line, fmt::format("{}: .rn or .rz is required", opcode));
      if (d.bf || in.ftz || in.sat) return err(line, fmt::format("{}: conversion not implemented", opcode));
    } else if (sf) {
      if (in.rnd != Rnd::kRni && in.rnd != Rnd::kRzi)
        return err(line, fmt::format("{}: .rni or .rzi is required", opcode));
      // .sat is redundant here: float-to-integer conversions clamp to the destination's range by
      // default (PTX ISA, cvt), which float_to_int does; TurboMind's quantizers write cvt.rni.sat.u8.f32.
      if (s.bf || in.ftz) return err(line, fmt::format("{}: conversion not implemented", opcode));
    } else if (in.rnd != Rnd::kNone || in.ftz || in.sat) {
      return err(line, fmt::format("{}: integer conversions with modifiers are not implemented", opcode));
    }
    if (auto e = need(2); !e) return e.error();
    BP_TRY(dd, dst(0));
    BP_TRY(ss, src(1, s));
    in.dst[0] = dd, in.src[0] = ss, in.ndst = 1, in.nsrc = 1;
    return finish();
  }
  if (base == "cvta") {
    in.op = Op::kCvta;
    in.part = take("to") ? MulPart::kLo : MulPart::kNone;  // kLo: generic -> space
    if (take("shared"))
      in.space = Space::kShared;
    else if (take("global"))
      in.space = Space::kGlobal;
    else if (take("local"))
      in.space = Space::kLocal;
    else if (take("param"))
      in.space = Space::kParam;
    else
      return err(line, "cvta: state space expected");
    BP_TRY(type, one_type());
    if (type.bits != 64) return err(line, "cvta: .u64 expected (.address_size 64)");
    in.type = type;
    if (auto e = need(2); !e) return e.error();
    BP_TRY(d, dst(0));
    BP_TRY(s, src(1, type));
    in.dst[0] = d, in.src[0] = s, in.ndst = 1, in.nsrc = 1;
    return finish();
  }
  if (base == "ld" || base == "st") {
    in.op = base == "ld" ? Op::kLd : Op::kSt;
    static const std::pair<std::string_view, Space> spaces[] = {{"global", Space::kGlobal},
                                                                {"shared", Space::kShared},
                                                                {"local", Space::kLocal},
                                                                {"param", Space::kParam},
                                                                {"const", Space::kConst}};
    for (const auto& [n, sp] : spaces) {
      if (take(n)) in.space = sp;
    }
    if (in.space == Space::kGlobal && take("nc")) {
    }
    BP_TRY(type, one_type());
    in.type = type;
    if (type.kind == Kind::kPred) return err(line, fmt::format("{}: .pred is not a memory type", opcode));
    if (in.rnd != Rnd::kNone || in.ftz || in.sat) return err(line, fmt::format("{}: modifier not valid", opcode));
    if (in.op == Op::kSt && (in.space == Space::kParam || in.space == Space::kConst))
      return err(line, fmt::format("{}: that space is read-only here", opcode));
    if (auto e = need(2); !e) return e.error();
    const std::size_t ai = in.op == Op::kLd ? 1 : 0, vi = 1 - ai;
    if (ops[ai].k != RawOp::kAddr) return err(line, fmt::format("{}: an address [..] expected", opcode));
    in.src[0] = ops[ai].slot, in.offset = ops[ai].offset;
    std::vector<std::uint32_t> vals;
    if (in.vec > 1) {
      if (ops[vi].k != RawOp::kVec || ops[vi].vec.size() != in.vec)
        return err(line, fmt::format("{}: a {}-element vector expected", opcode, in.vec));
      vals = ops[vi].vec;
    } else if (ops[vi].k == RawOp::kVec) {
      // A braced single register (Triton's `st.global.b16 [%rd1 + 0], { %rs1 }`, which ptxas
      // accepts) is that register; more elements need .v2/.v4.
      if (ops[vi].vec.size() != 1 || ops[vi].vec[0] == kNoSlot)
        return err(line, fmt::format("{}: a vector needs .v2 or .v4", opcode));
      const std::uint32_t slot = ops[vi].vec[0];
      ops[vi] = RawOp{};
      ops[vi].slot = slot;
    }
    if (in.op == Op::kLd) {
      if (in.vec > 1) {
        for (std::size_t i = 0; i < vals.size(); ++i) {
          if (vals[i] != kNoSlot && k_->slots[vals[i]].init != SlotInit::kZero)
            return err(line, "ld: a vector element is not a register");
          in.dst[i] = vals[i];
        }
      } else {
        BP_TRY(d, dst(0));
        in.dst[0] = d;
      }
      in.ndst = in.vec;
    } else {
      if (in.vec > 1) {
        for (std::size_t i = 0; i < vals.size(); ++i) {
          if (vals[i] == kNoSlot) return err(line, "st: '_' is not a source");
          in.src[1 + i] = vals[i];
        }
      } else {
        BP_TRY(s, src(1, type));
        in.src[1] = s;
      }
      in.nsrc = static_cast<std::uint8_t>(1 + in.vec);
    }
    return finish();
  }
  // ldmatrix/stmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans].shared{::cta}.b16: the modifiers both
  // take (module.hpp's cards): .shared space, the matrix count in `vec`, .trans in `mode`.
  const auto m8n8 = [&](bool trans_allowed) -> Expected<Ok> {
    in.space = Space::kShared;
    const bool sync = take("sync"), aligned = take("aligned"), shape = take("m8n8");
    if (!sync || !aligned || !shape)
      return err(line, fmt::format("{}: only {}.sync.aligned.m8n8 is implemented", opcode, base));
    in.mode = take("trans") ? 1 : 0;
    if (in.mode == 1 && !trans_allowed) return err(line, fmt::format("{}: .trans is not implemented", opcode));
    if (!take("shared") && !take("shared::cta"))
      return err(line, fmt::format("{}: the .shared space expected", opcode));
    in.vec = take("x1") ? 1 : take("x2") ? 2 : take("x4") ? 4 : 0;
    if (in.vec == 0) return err(line, fmt::format("{}: .x1, .x2 or .x4 expected", opcode));
    if (types.size() != 1 || types[0].bits != 16 || types[0].kind != Kind::kBits)
      return err(line, fmt::format("{}: only .b16 is implemented", opcode));
    in.type = types[0];
    return need(2);
  };
  if (base == "stmatrix") {  // stmatrix... [a], {r0, ..}
    in.op = Op::kStmatrix;
    if (auto e = m8n8(false); !e) return e.error();
    if (ops[0].k != RawOp::kAddr) return err(line, fmt::format("{}: an address [..] expected", opcode));
    in.src[0] = ops[0].slot, in.offset = ops[0].offset;
    if (ops[1].k != RawOp::kVec || ops[1].vec.size() != in.vec)
      return err(line, fmt::format("{}: {} registers in braces expected", opcode, in.vec));
    const std::vector<std::uint32_t>& regs = ops[1].vec;
    for (std::size_t i = 0; i < regs.size(); ++i) {
      if (regs[i] == kNoSlot) return err(line, "stmatrix: '_' is not a source");
      in.src[1 + i] = regs[i];
    }
    in.nsrc = static_cast<std::uint8_t>(1 + in.vec);
    return finish();
  }
  if (base == "ldmatrix") {  // ldmatrix... {r0, ..}, [a]
    in.op = Op::kLdmatrix;
    if (auto e = m8n8(true); !e) return e.error();
    if (ops[0].k != RawOp::kVec || ops[0].vec.size() != in.vec)
      return err(line, fmt::format("{}: {} registers in braces expected", opcode, in.vec));
    for (std::size_t i = 0; i < ops[0].vec.size(); ++i) {
      const std::uint32_t r = ops[0].vec[i];
      if (r == kNoSlot || k_->slots[r].init != SlotInit::kZero)
        return err(line, fmt::format("{}: destination {} is not a register it may write", opcode, i));
      in.dst[i] = r;
    }
    in.ndst = in.vec;
    if (ops[1].k != RawOp::kAddr) return err(line, fmt::format("{}: an address [..] expected", opcode));
    in.src[0] = ops[1].slot, in.offset = ops[1].offset, in.nsrc = 1;
    return finish();
  }
  if (base == "bra") {
    in.op = Op::kBra;
    take("uni");
    if (!ops.empty() || !types.empty()) return err(line, "bra: only a label is expected");
    return finish();
  }
  if (base == "ret" || base == "exit") {
    in.op = Op::kExit;
    if (!ops.empty() || !types.empty()) return err(line, fmt::format("{}: no operands expected", base));
    return finish();
  }
  if (base == "bar" || base == "barrier") {
    if (take("warp")) {
      in.op = Op::kWarpSync;
      if (auto e = need(1); !e) return e.error();
      BP_TRY(m, src(0, Type{Kind::kBits, 32}));
      in.src[0] = m, in.nsrc = 1;
      return finish();
    }
    take("cta");
    in.op = Op::kBar;
    if (!mods.empty() && mods[0] != "sync" && !(mods.size() > 1 && mods[0] == "cta" && mods[1] == "sync")) {
      return err(line, fmt::format("{}: only bar.sync / barrier.sync are implemented", opcode));
    }
    if (ops.size() != 1 || ops[0].k != RawOp::kImm || ops[0].imm.is_f32 || ops[0].imm.is_f64 || ops[0].imm.bits > 15) {
      return err(
          line,
          fmt::format("{}: one immediate barrier number (0..15) expected; a thread count is not implemented", opcode));
    }
    in.offset = static_cast<std::int64_t>(ops[0].imm.bits);
    if (!types.empty()) return err(line, fmt::format("{}: no type expected", opcode));
    return finish();
  }
  if (base == "shfl") {
    in.op = Op::kShfl;
    if (take("up"))
      in.shfl = ShflMode::kUp;
    else if (take("down"))
      in.shfl = ShflMode::kDown;
    else if (take("bfly"))
      in.shfl = ShflMode::kBfly;
    else if (take("idx"))
      in.shfl = ShflMode::kIdx;
    else
      return err(line, "shfl: mode .up, .down, .bfly or .idx expected");
    if (std::find(mods.begin(), mods.end(), std::string_view("sync")) == mods.end())
      return err(line, "shfl: only shfl.sync is implemented");
    BP_TRY(type, one_type());
    if (type.bits != 32 || type.kind == Kind::kFloat) return err(line, "shfl: .b32 expected");
    in.type = type;
    if (auto e = need(5); !e) return e.error();
    BP_TRY(d, dst(0));
    in.dst[0] = d, in.ndst = 1;
    if (ops[0].slot2 != kNoSlot) {
      if (k_->slots[ops[0].slot2].init != SlotInit::kZero)
        return err(line, "shfl: the predicate destination is not a register");
      in.dst[1] = ops[0].slot2, in.ndst = 2;
    }
    for (std::size_t i = 1; i < 5; ++i) {
      BP_TRY(s, src(i, Type{Kind::kBits, 32}));
      in.src[i - 1] = s;
    }
    in.nsrc = 4;
    return finish();
  }
  if (base == "vote") {
    in.op = Op::kVote;
    if (take("all"))
      in.vote = VoteMode::kAll;
    else if (take("any"))
      in.vote = VoteMode::kAny;
    else if (take("uni"))
      in.vote = VoteMode::kUni;
    else if (take("ballot"))
      in.vote = VoteMode::kBallot;
    else
      return err(line, "vote: mode expected");
    if (std::find(mods.begin(), mods.end(), std::string_view("sync")) == mods.end())
      return err(line, "vote: only vote.sync is implemented");
    BP_TRY(type, one_type());
    const bool ballot = in.vote == VoteMode::kBallot;
    if (ballot ? type.bits != 32 || type.kind == Kind::kFloat : type.kind != Kind::kPred)
      return err(line, "vote: type does not fit the mode");
    in.type = type;
    if (auto e = need(3); !e) return e.error();
    BP_TRY(d, dst(0));
    in.neg_src = ops[1].negated;
    ops[1].negated = false;
    BP_TRY(p, src(1, Type{Kind::kPred, 1}));
    BP_TRY(m, src(2, Type{Kind::kBits, 32}));
    in.dst[0] = d, in.src[0] = p, in.src[1] = m, in.ndst = 1, in.nsrc = 2;
    return finish();
  }
  // Bit manipulation: prmt, bfe, bfi, popc, clz, brev, lop3, shf (PTX ISA, integer and logic instructions).
  static const std::unordered_map<std::string_view, Op> bits_ops = {
      {"prmt", Op::kPrmt}, {"bfe", Op::kBfe},   {"bfi", Op::kBfi},   {"popc", Op::kPopc},
      {"clz", Op::kClz},   {"brev", Op::kBrev}, {"lop3", Op::kLop3}, {"shf", Op::kShf},
  };
  if (auto it = bits_ops.find(base); it != bits_ops.end()) {
    in.op = it->second;
    BP_TRY(type, one_type());
    in.type = type;
    if (in.rnd != Rnd::kNone || in.ftz || in.sat) return err(line, fmt::format("{}: modifier not valid", opcode));
    const bool b32 = type.kind == Kind::kBits && type.bits == 32;
    const bool b3264 = type.kind == Kind::kBits && (type.bits == 32 || type.bits == 64);
    const Type u32{Kind::kUnsigned, 32};
    std::vector<Type> srcs;  // the sources' types, in order
    switch (in.op) {
      case Op::kPrmt: {
        static const std::pair<std::string_view, PrmtMode> modes[] = {
            {"f4e", PrmtMode::kF4e}, {"b4e", PrmtMode::kB4e}, {"rc8", PrmtMode::kRc8},
            {"ecl", PrmtMode::kEcl}, {"ecr", PrmtMode::kEcr}, {"rc16", PrmtMode::kRc16}};
        for (const auto& [name, mode] : modes) {
          if (take(name)) in.mode = static_cast<std::uint8_t>(mode);
        }
        if (!b32) return err(line, fmt::format("{}: .b32 expected", opcode));
        srcs = {type, type, type};
        break;
      }
      case Op::kBfe:
        if (type.kind != Kind::kUnsigned && type.kind != Kind::kSigned)
          return err(line, fmt::format("{}: .u32, .s32, .u64 or .s64 expected", opcode));
        if (type.bits != 32 && type.bits != 64)
          return err(line, fmt::format("{}: 32- or 64-bit type expected", opcode));
        srcs = {type, u32, u32};
        break;
      case Op::kBfi:
        if (!b3264) return err(line, fmt::format("{}: .b32 or .b64 expected", opcode));
        srcs = {type, type, u32, u32};
        break;
      case Op::kPopc:
      case Op::kClz:
      case Op::kBrev:
        if (!b3264) return err(line, fmt::format("{}: .b32 or .b64 expected", opcode));
        srcs = {type};
        break;
      case Op::kLop3:
        if (take("and") || take("or"))
          return err(line, fmt::format("{}: lop3 with a predicate output is not implemented", opcode));
        if (!b32) return err(line, fmt::format("{}: .b32 expected", opcode));
        if (ops.size() == 5 && ops[4].k != RawOp::kImm)
          return err(line, fmt::format("{}: the lookup table must be an immediate", opcode));
        srcs = {type, type, type, u32};
        break;
      default: {  // shf.{l,r}.{clamp,wrap}.b32
        const bool l = take("l"), r = !l && take("r");
        const bool clamp = take("clamp"), wrap = !clamp && take("wrap");
        if (!(l || r) || !(clamp || wrap)) return err(line, fmt::format("{}: .l/.r and .clamp/.wrap expected", opcode));
        if (!b32) return err(line, fmt::format("{}: .b32 expected", opcode));
        in.mode = static_cast<std::uint8_t>((r ? 1 : 0) | (clamp ? 2 : 0));
        srcs = {type, type, u32};
        break;
      }
    }
    if (auto e = need(1 + srcs.size()); !e) return e.error();
    if (ops[0].slot2 != kNoSlot)
      return err(line, fmt::format("{}: a predicate destination is not implemented", opcode));
    BP_TRY(d, dst(0));
    in.dst[0] = d, in.ndst = 1;
    for (std::size_t i = 0; i < srcs.size(); ++i) {
      BP_TRY(s, src(i + 1, srcs[i]));
      in.src[i] = s;
    }
    in.nsrc = static_cast<std::uint8_t>(srcs.size());
    return finish();
  }
#undef BP_TRY
  return err(line, fmt::format("{}: instruction not implemented", opcode));
}

Expected<Module> parse_module(std::string_view text, std::string name) {
  auto toks = tokenize(text, name);
  if (!toks) return toks.error();
  Parser parser(std::move(*toks), std::move(name));
  return parser.run();
}

Expected<const Kernel*> find_kernel(const Module& module, std::string_view name) {
  for (const auto& k : module.kernels) {
    if (k.name == name) return &k;
  }
  return Error{fmt::format("{}: no kernel '{}'", module.name, name)};
}

}  // namespace bitproof::ptx
