#include "user/build_text.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace bitproof::user {

// ---- the ABI ----

std::string abi_prelude(std::string_view device, int slots) {
  // bind<Slot, Abi, AbiNoexcept>::get(f): the non-template overloads take f
  // converted to exactly the ABI's pointer type (an overload set resolves to
  // the member of that type); anything else deduces F as its own type and
  // instantiates function_has_type<Slot, F>, which is never defined, so every
  // compiler's error spells both the slot's tag and the type F.
  std::string s = fmt::format(
      "namespace bitproof_abi {{\n"
      "template <class Slot, class F> struct function_has_type;  // never defined: its error names F\n"
      "template <class Slot, class Abi, class AbiNoexcept> struct bind {{\n"
      "  static constexpr {0}Abi get(Abi f) {{ return f; }}\n"
      "  static constexpr {0}Abi get(AbiNoexcept f) {{ return f; }}\n"
      "  template <class F> static {0}Abi get(F) {{ return function_has_type<Slot, F>::refused; }}\n"
      "}};\n",
      device);
  s += "using Abi1 = std::uint32_t (*)(std::uint32_t);\n"
       "using Abi1x = std::uint32_t (*)(std::uint32_t) noexcept;\n"
       "using Abi2 = std::uint32_t (*)(std::uint32_t, std::uint32_t);\n"
       "using Abi2x = std::uint32_t (*)(std::uint32_t, std::uint32_t) noexcept;\n"
       "using Abi3 = std::uint32_t (*)(std::uint32_t, std::uint32_t, std::uint32_t);\n"
       "using Abi3x = std::uint32_t (*)(std::uint32_t, std::uint32_t, std::uint32_t) noexcept;\n"
       "}  // namespace bitproof_abi\n";
  for (int slot = 0; slot < slots; ++slot) s += fmt::format("struct bitproof_recipe_{};\n", slot);  // the slots' tags
  return s;
}

std::string abi_call(int slot, int arity, std::string_view function, std::string_view args) {
  return fmt::format(
      "bitproof_abi::bind<bitproof_recipe_{0}, bitproof_abi::Abi{1}, bitproof_abi::Abi{1}x>::get({2})({3})", slot,
      arity, function, args);
}

namespace {

// The text from `at` up to the '>' that closes the template argument list `at` is inside.
std::optional<std::string> until_close(std::string_view log, std::size_t at) {
  int depth = 0;
  for (std::size_t i = at; i < log.size() && log[i] != '\n'; ++i) {
    if (log[i] == '<') ++depth;
    if (log[i] == '>' && (i == 0 || log[i - 1] != '-')) {
      if (depth == 0) return std::string(log.substr(at, i - at));
      --depth;
    }
  }
  return std::nullopt;
}

// "R (*)(A...)" as "R(A...)": the function's type, not the pointer's.
std::string function_type(const std::string& type) {
  for (const std::string_view pointer : {std::string_view(" (*)("), std::string_view("(*)(")}) {
    if (const auto at = type.find(pointer); at != std::string::npos) {
      return type.substr(0, at) + "(" + type.substr(at + pointer.size());
    }
  }
  return type;
}

}  // namespace

std::optional<AbiRefusal> abi_refusal(std::string_view log, std::string_view source,
                                      const std::vector<std::pair<long, int>>& call_lines) {
  // A function of another type: function_has_type<bitproof_recipe_N, TYPE>.
  static const std::string_view tag = "function_has_type<bitproof_recipe_";
  if (const auto at = log.find(tag); at != std::string_view::npos) {
    std::size_t i = at + tag.size();
    int slot = 0, digits = 0;
    for (; i < log.size() && log[i] >= '0' && log[i] <= '9' && digits < 4; ++i, ++digits)
      slot = slot * 10 + (log[i] - '0');
    if (digits > 0 && i < log.size() && log[i] == ',') {
      while (++i < log.size() && log[i] == ' ') {
      }
      if (auto type = until_close(log, i); type && !type->empty()) return AbiRefusal{slot, function_type(*type)};
    }
  }
  // No overload of that type: the first error at a call's line of the generated source
  // ("FILE:LINE:" from GCC and Clang, "FILE(LINE):" from NVRTC).
  const std::string pattern = "(?m)^" + RE2::QuoteMeta(std::string(source)) +
                              R"((?::(\d+):|\((\d+)\):).*(?:no matching function|no instance of overloaded function))";
  const RE2 located(pattern);
  re2::StringPiece rest(log.data(), log.size());
  std::string gcc_line, nvrtc_line;
  while (RE2::FindAndConsume(&rest, located, &gcc_line, &nvrtc_line)) {
    const long line = std::atol((gcc_line.empty() ? nvrtc_line : gcc_line).c_str());
    for (const auto& [call_line, slot] : call_lines) {
      if (call_line == line) return AbiRefusal{slot, ""};
    }
  }
  return std::nullopt;
}

// ---- the compiler's lists ----

Expected<std::vector<std::string>> parse_make_rule(std::string_view text, std::string_view target) {
  const std::string head = std::string(target) + ":";
  if (target.empty() || text.substr(0, head.size()) != head) {
    return Error{fmt::format("the dependency list does not begin with \"{}\"", head)};
  }
  std::vector<std::string> deps;
  std::string word;
  bool in_word = false;
  const auto end_word = [&] {
    if (in_word) deps.push_back(word);
    word.clear();
    in_word = false;
  };
  for (std::size_t i = head.size(); i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\') {
      std::size_t n = 0;  // a run of backslashes
      while (i + n < text.size() && text[i + n] == '\\') ++n;
      const char next = i + n < text.size() ? text[i + n] : '\0';
      if (n == 1 && (next == '\n' || (next == '\r' && i + 2 < text.size() && text[i + 2] == '\n'))) {
        end_word();  // a line continuation
        i += next == '\n' ? 1 : 2;
        continue;
      }
      if (next == ' ' || next == '\t') {  // 2k+1 backslashes: k of them and a space in the name
        word.append(n / 2, '\\');
        in_word = true;
        i += n - 1;
        if (n % 2 == 1) {
          word += next;
          ++i;
        }
        continue;
      }
      if (n == 1 && next == '#') {
        word += '#';
        in_word = true;
        ++i;
        continue;
      }
      word.append(n, '\\');
      in_word = true;
      i += n - 1;
      continue;
    }
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '$') {
      word += '$';
      in_word = true;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      end_word();
      continue;
    }
    if (c == '\n') {
      end_word();
      // One rule: what follows its end may be blank lines only.
      if (text.find_first_not_of(" \t\r\n", i) != std::string_view::npos) {
        return Error{"the dependency list holds more than one rule"};
      }
      break;
    }
    word += c;
    in_word = true;
  }
  end_word();
  if (deps.empty()) return Error{"the dependency list names no file"};
  return deps;
}

std::vector<std::string> parse_search_dirs(std::string_view verbose) {
  static const std::string_view begin = "#include <...> search starts here:", end = "End of search list.";
  std::vector<std::string> dirs;
  const auto from = verbose.find(begin);
  if (from == std::string_view::npos) return dirs;
  std::size_t at = verbose.find('\n', from);
  while (at != std::string_view::npos && at + 1 < verbose.size()) {
    const std::size_t next = verbose.find('\n', at + 1);
    std::string_view line =
        verbose.substr(at + 1, next == std::string_view::npos ? std::string_view::npos : next - at - 1);
    at = next;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line == end || line.empty() || line.front() != ' ') break;
    const std::size_t first = line.find_first_not_of(' ');
    if (first == std::string_view::npos) continue;  // a line of spaces alone names no directory
    line.remove_prefix(first);
    if (const auto mark = line.find(" (framework directory)"); mark != std::string_view::npos)
      line = line.substr(0, mark);
    if (!line.empty()) dirs.emplace_back(line);
  }
  return dirs;
}

// ---- the manifest ----

namespace {

constexpr std::string_view kManifestMagic = "bitproof-user-manifest-v2";

const char* kind_word(DepKind k) {
  switch (k) {
    case DepKind::kUser: return "user";
    case DepKind::kTool: return "tool";
    case DepKind::kSystem: return "sys";
  }
  return "user";
}

}  // namespace

bool sha256_hex_text(std::string_view s) {
  return s.size() == 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string manifest_text(const Manifest& m) {
  std::string out = fmt::format("{}\ncompiler {}\nkey {}\nworker {}\n", kManifestMagic, m.compiler, m.key, m.worker);
  for (const ManifestDep& d : m.deps) out += fmt::format("{} {} {}\n", kind_word(d.kind), d.check, d.path);
  return out;
}

Expected<Manifest> parse_manifest(std::string_view text) {
  // Exactly as manifest_text writes it: the magic, compiler, key and worker
  // lines in that order, then one line a dependency, every line ended.
  Manifest m;
  std::size_t at = 0;
  long number = 0;
  while (at < text.size()) {
    const std::size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) return Error{fmt::format("line {}: not ended", number + 1)};
    const std::string_view line = text.substr(at, nl - at);
    at = nl + 1;
    ++number;
    const auto bad = [&](std::string_view what) { return Error{fmt::format("line {}: {}", number, what)}; };
    if (number == 1) {
      if (line != kManifestMagic) return bad(fmt::format("expected {}", kManifestMagic));
      continue;
    }
    const std::size_t space = line.find(' ');
    const std::string_view word = line.substr(0, space);
    const std::string_view value = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
    if (number <= 4) {
      static constexpr std::string_view kHead[] = {"compiler", "key", "worker"};
      if (word != kHead[number - 2] || space == std::string_view::npos)
        return bad(fmt::format("expected {}", kHead[number - 2]));
      if (number == 2 && value.empty()) return bad("an empty compiler");
      if (number > 2 && !sha256_hex_text(value)) return bad(fmt::format("{}: expected 64 hex digits", word));
      (number == 2 ? m.compiler : number == 3 ? m.key : m.worker) = std::string(value);
      continue;
    }
    ManifestDep d;
    if (word == "user") {
      d.kind = DepKind::kUser;
    } else if (word == "tool") {
      d.kind = DepKind::kTool;
    } else if (word == "sys") {
      d.kind = DepKind::kSystem;
    } else {
      return bad("unknown line");
    }
    if (value.size() < 66 || !sha256_hex_text(value.substr(0, 64)) || value[64] != ' ' || value[65] != '/') {
      return bad("expected 64 hex digits and an absolute path");
    }
    d.check = std::string(value.substr(0, 64));
    d.path = std::string(value.substr(65));
    m.deps.push_back(std::move(d));
  }
  if (number < 4) return Error{"compiler, key or worker missing"};
  return m;
}

std::string fields_text(const std::vector<std::string_view>& fields) {
  std::string out;
  for (const std::string_view field : fields) {
    const std::uint64_t n = field.size();
    for (int k = 0; k < 8; ++k) out.push_back(static_cast<char>((n >> (8 * k)) & 0xFF));
    out.append(field);
  }
  return out;
}

std::optional<std::vector<std::string_view>> parse_fields(std::string_view text) {
  std::vector<std::string_view> fields;
  while (!text.empty()) {
    if (text.size() < 8) return std::nullopt;
    std::uint64_t n = 0;
    for (int k = 0; k < 8; ++k) n |= std::uint64_t{static_cast<unsigned char>(text[k])} << (8 * k);
    text.remove_prefix(8);
    if (n > text.size()) return std::nullopt;
    fields.push_back(text.substr(0, n));
    text.remove_prefix(n);
  }
  return fields;
}

}  // namespace bitproof::user
