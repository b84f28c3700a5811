// The texts a user-recipe build reads back (src/user/build_text.hpp): the
// compiler's refusal of the ABI binding, its dependency rule and search list,
// the cache manifest. Each refusal is paired with the accepted input nearest
// to it (a negative control), and the ABI binding is compiled for real with
// the host compiler: a function of another type must be refused, naming it.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>

#include "user/build_text.hpp"
#include "user/process.hpp"
#include "user/user_recipes.hpp"

namespace bitproof::user {
namespace {

TEST_SUITE("build_text") {
  TEST_CASE("a make rule: continuations joined, escapes undone, one rule for the target only") {
    auto d = parse_make_rule("t: /a/b.h \\\n /x\\ y/c.h /d\\#e.h /f$$g.h\n", "t");
    REQUIRE(d.ok());
    CHECK(*d == std::vector<std::string>{"/a/b.h", "/x y/c.h", "/d#e.h", "/f$g.h"});
    auto back = parse_make_rule("t: /a\\\\\\ b.h /c.h\n", "t");  // \\\ + space: one backslash and a space
    REQUIRE(back.ok());
    CHECK(*back == std::vector<std::string>{"/a\\ b.h", "/c.h"});
    CHECK_FALSE(parse_make_rule("other: /a.h\n", "t").ok());
    CHECK_FALSE(parse_make_rule("t:\n", "t").ok());
    CHECK_FALSE(parse_make_rule("t: /a.h\nu: /b.h\n", "t").ok());
    CHECK(parse_make_rule("t: /a.h\n\n", "t").ok());
  }

  TEST_CASE("fields on a pipe: written and read back; a short or overlong text refused") {
    const std::string bytes("a\0b", 3);
    const std::string text = fields_text({"bitproof-nvrtc-v1", "", bytes});
    const auto fields = parse_fields(text);
    REQUIRE(fields.has_value());
    REQUIRE(fields->size() == 3);
    CHECK((*fields)[0] == "bitproof-nvrtc-v1");
    CHECK((*fields)[1].empty());
    CHECK((*fields)[2] == bytes);
    CHECK(parse_fields("")->empty());
    CHECK_FALSE(parse_fields(text.substr(0, text.size() - 1)).has_value());  // the last field cut short
    CHECK_FALSE(parse_fields(text + "x").has_value());                       // bytes left over
    CHECK_FALSE(parse_fields(std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8)).has_value());  // a length past the end
  }

  TEST_CASE("the search list: the <...> directories, in order") {
    const std::string gcc =
        "ignoring nonexistent directory \"/x\"\n#include \"...\" search starts here:\n #include <...> search starts "
        "here:\n /tmp/inc\n /usr/include/c++/12\n /usr/include\nEnd of search list.\n /not/this\n";
    CHECK(parse_search_dirs(gcc) == std::vector<std::string>{"/tmp/inc", "/usr/include/c++/12", "/usr/include"});
    CHECK(parse_search_dirs(" /usr/include\n").empty());
    CHECK(parse_search_dirs("#include <...> search starts here:\n /a (framework directory)\nEnd of search list.\n") ==
          std::vector<std::string>{"/a"});
    // A line of spaces alone (found by fuzz_build_text: an offset past the line's end before).
    CHECK(parse_search_dirs("#include <...> search starts here:\n \n /b\nEnd of search list.\n") ==
          std::vector<std::string>{"/b"});
    CHECK(parse_search_dirs("#include <...> search starts here: \n ").empty());
  }

  TEST_CASE("the manifest: written and read back; anything else refused") {
    Manifest m{"g++ (Debian 12.2.0-14) 12.2.0",
               std::string(64, 'a'),
               std::string(64, 'b'),
               {{DepKind::kUser, std::string(64, 'c'), "/x/dequant.cuh"},
                {DepKind::kSystem, std::string(64, 'd'), "/usr/include/stdio.h"},
                {DepKind::kTool, std::string(64, 'e'), "/opt/bp/include/cuda_fp16.h"}}};
    const std::string text = manifest_text(m);
    auto back = parse_manifest(text);
    REQUIRE(back.ok());
    CHECK(*back == m);
    CHECK_FALSE(parse_manifest(text.substr(0, text.size() - 1)).ok());  // an unended line
    CHECK_FALSE(parse_manifest("bitproof-user-manifest-v1\n" + text.substr(text.find('\n') + 1)).ok());
    std::string no_worker = text;
    no_worker.erase(no_worker.find("worker "), 72);
    CHECK_FALSE(parse_manifest(no_worker).ok());
    CHECK_FALSE(parse_manifest(text + "worker " + std::string(64, 'b') + "\n").ok());  // twice
    CHECK_FALSE(parse_manifest(text + "user " + std::string(64, 'c') + " relative.h\n").ok());
    CHECK_FALSE(parse_manifest(text + "user " + std::string(64, 'C') + " /upper.h\n").ok());
    CHECK(parse_manifest(text + "user " + std::string(64, 'c') + " /ok.h\n").ok());
  }

  TEST_CASE("the ABI's refusal read from each compiler's words") {
    const std::vector<std::pair<long, int>> lines = {{12, 0}, {13, 2}};
    const std::string gcc =
        "/c/w.cpp: In instantiation of ...\n/c/b.h:7:81: error: incomplete type "
        "'bitproof_abi::function_has_type<bitproof_recipe_2, __half (*)(unsigned int, unsigned int)>' used in nested "
        "name specifier\n";
    auto r = abi_refusal(gcc, "/c/w.cpp", lines);
    REQUIRE(r);
    CHECK(r->slot == 2);
    CHECK(r->type == "__half(unsigned int, unsigned int)");
    const std::string nvrtc =
        "bitproof-user.cu(8): error: incomplete type \"bitproof_abi::function_has_type<bitproof_recipe_0, "
        "std::array<int, 2> (*)(uint32_t)>\" (aka ...) is not allowed\n";
    r = abi_refusal(nvrtc, "bitproof-user.cu", lines);
    REQUIRE(r);
    CHECK(r->slot == 0);
    CHECK(r->type == "std::array<int, 2>(uint32_t)");
    const std::string overloads = "/c/w.cpp:13:8: error: no matching function for call to 'get'\n";
    r = abi_refusal(overloads, "/c/w.cpp", lines);
    REQUIRE(r);
    CHECK(r->slot == 2);
    CHECK(r->type.empty());
    CHECK_FALSE(abi_refusal("/c/w.cpp:14:8: error: no matching function for call to 'get'\n", "/c/w.cpp", lines));
    CHECK_FALSE(abi_refusal("/c/w.cpp:12:8: error: 'bp_nothing' was not declared in this scope\n", "/c/w.cpp", lines));
  }

  // The GPU path's cached images (user/user_recipes.hpp store_cached, read_cached): read
  // back as stored; a byte changed, a file without bitproof's header, or one
  // other users can write is refused naming it; an absent one is no entry.
  TEST_CASE("a cached image is read only as stored") {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "bitproof-cached-test";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "k.cubin").string();
    CHECK(read_cached(path).ok());
    CHECK_FALSE(read_cached(path)->has_value());
    const std::string bytes("\x7f" "ELF image bytes\0\n", 19);
    REQUIRE(store_cached(path, bytes));
    auto back = read_cached(path);
    REQUIRE(back.ok());
    REQUIRE(back->has_value());
    CHECK(**back == bytes);
    std::string text;
    {
      std::ifstream in(path, std::ios::binary);
      text.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::string flipped = text;
    flipped.back() ^= 1;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << flipped;
    CHECK_FALSE(read_cached(path).ok());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;  // no header
    CHECK_FALSE(read_cached(path).ok());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    CHECK(read_cached(path).ok());
    ::chmod(path.c_str(), 0664);
    auto shared = read_cached(path);
    REQUIRE_FALSE(shared.ok());
    CHECK(shared.error().message.find("can be written by other users") != std::string::npos);
    std::filesystem::remove_all(dir);
  }

  // The binding compiled by the host compiler: exact functions (noexcept and
  // an overload set with one exact member included) compile; a function that
  // returns a class converting to uint32_t, or takes an int, is refused with its type.
  TEST_CASE("the ABI binding, compiled") {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "bitproof-abi-test";
    std::filesystem::create_directories(dir);
    const auto compile = [&](const std::string& functions, const std::string& calls) {
      const std::string source = "#include <cstdint>\n" + functions + abi_prelude("", 4) +
                                 "std::uint32_t run(std::uint32_t a, std::uint32_t b) {\n  std::uint32_t s = 0;\n" +
                                 calls + "  return s;\n}\n";
      std::ofstream(dir / "abi.cpp") << source;
      auto done = run_process({"c++", "-std=c++17", "-fsyntax-only", (dir / "abi.cpp").string()}, {}, {"LC_ALL=C"});
      REQUIRE(done.ok());
      return *done;
    };
    const std::string functions =
        "struct H { unsigned short x; operator unsigned int() const { return x; } };\n"
        "H f_half(std::uint32_t a, std::uint32_t b) { return H{(unsigned short)(a + b)}; }\n"
        "std::uint32_t f_int(int a, std::uint32_t b) { return a + b; }\n"
        "std::uint32_t f_ok(std::uint32_t a, std::uint32_t b) { return a + b; }\n"
        "std::uint32_t f_nx(std::uint32_t a, std::uint32_t b) noexcept { return a + b; }\n"
        "std::uint32_t f_ov(std::uint32_t a, std::uint32_t b) { return a + b; }\n"
        "std::uint32_t f_ov(int a, int b) { return a - b; }\n";
    const auto call = [](int slot, const char* f) { return "  s += " + abi_call(slot, 2, f, "a, b") + ";\n"; };
    const auto good = compile(functions, call(0, "f_ok") + call(1, "f_nx") + call(2, "f_ov"));
    CHECK_MESSAGE(good.status == 0, good.err);
    for (const char* bad : {"f_half", "f_int"}) {
      const auto refused = compile(functions, call(3, bad));
      CHECK(refused.status != 0);
      auto r = abi_refusal(refused.err, (dir / "abi.cpp").string(), {});
      REQUIRE_MESSAGE(r, refused.err);
      CHECK(r->slot == 3);
      CHECK(r->type ==
            (std::string(bad) == "f_half" ? "H(unsigned int, unsigned int)" : "unsigned int(int, unsigned int)"));
    }
    std::filesystem::remove_all(dir);
  }
}

}  // namespace
}  // namespace bitproof::user
