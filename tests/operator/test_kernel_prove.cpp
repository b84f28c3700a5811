// The source line of a PTX line from the module's .file/.loc directives (op::ptx_source_line, the
// line `ab --prove` prints beside a difference on kernel arms; docs/ptx-proof.md).
#include <doctest/doctest.h>

#include <string>

#include "operator/kernel_prove.hpp"

using bitproof::op::ptx_source_line;

namespace {

// nvcc -lineinfo's layout: .loc lines inside the functions, the .file table after them.
const std::string kModule =
    ".version 8.0\n"                        // 1
    ".target sm_90\n"                       // 2
    ".visible .entry a(\n"                  // 3
    ")\n"                                   // 4
    "{\n"                                   // 5
    "\tmov.u32 %r1, 0;\n"                   // 6: no .loc yet
    "\t.loc\t1 17 3\n"                      // 7
    "\tfma.rn.f32 %f1, %f2, %f3, %f1;\n"    // 8
    "\t.loc\t2 40 1, function_name $L__info_string0, inlined_at 1 17 3\n"  // 9
    "\tadd.f32 %f1, %f1, %f2;\n"            // 10
    "\t.loc\t1 0 0\n"                       // 11: line 0, no source line
    "\tret;\n"                              // 12
    "}\n"                                   // 13
    ".visible .entry b(\n"                  // 14
    ")\n"                                   // 15
    "{\n"                                   // 16
    "\tret;\n"                              // 17: a new function, no .loc of its own
    "}\n"                                   // 18
    "\t.file\t1 \"/home/me/src/gemv.cu\"\n"  // 19
    "\t.file\t2 \"cuda/include/cuda_fp16.hpp\"\n";  // 20

}  // namespace

TEST_SUITE("operator") {
  TEST_CASE("ptx_source_line: .loc in force, .file read from anywhere in the module (basename)") {
    CHECK(ptx_source_line(kModule, 6) == "");
    CHECK(ptx_source_line(kModule, 8) == "gemv.cu:17");
    CHECK(ptx_source_line(kModule, 10) == "cuda_fp16.hpp:40");  // the inlined function's own line
    CHECK(ptx_source_line(kModule, 12) == "");                  // .loc line 0: none
    CHECK(ptx_source_line(kModule, 17) == "");                  // another function's lines do not carry over
    CHECK(ptx_source_line(kModule, 1000) == "");                // past the end: the last .loc of the last function
    CHECK(ptx_source_line("", 1).empty());
    CHECK(ptx_source_line("\t.loc\t7 5 1\nx;\n", 2) == "file 7:5");  // a .loc without its .file
  }
}
