// User code: what a spec brings that bitproof compiles and runs on this machine,
// with the rights of whoever runs bitproof (their files, their network, their
// tokens): a user recipe's function (its sources compiled by the host compiler
// into a worker process that runs on the CPU, and by NVRTC into the GPU's sweep
// kernels) and a timing spec's kernels (NVRTC, run on the GPU). That is what a
// team asks for when it proves its own kernel; it is also what a pull request's
// spec asks for. Output tables are data: read and checked, never run.
//
// A process may refuse user code (bitproof --no-user-code, or
// BITPROOF_NO_USER_CODE=1: src/cli/main.cpp). Then a spec with user code is
// refused, exit 2, with one line naming the spec and the recipe, before any of
// its sources is compiled, preprocessed or run. The check sits where a spec's
// user code is first needed: the commands that load a spec check it after
// parsing (prove, domain, spec check, time), and UserRecipes::evaluate and the
// GPU compiles check again, so a spec read from a report (report verify, report
// merge, report render --svg) or named by an A/B spec (element_proofs) is
// refused on the same terms.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "error.hpp"

namespace bitproof::user {

class UserRecipes;

// Refuses user code in this process from now on; `why` names the switch
// ("--no-user-code", "BITPROOF_NO_USER_CODE=1"); empty allows it again. Call
// before any work starts: the setting is read without a lock.
void set_user_code_refusal(std::string why);
// Why user code is refused here; empty while it is allowed.
[[nodiscard]] const std::string& user_code_refusal();

// While user code is refused: the error for a spec whose user recipes include
// a function (tables alone are data, allowed), naming the spec, the first such
// recipe (index and name), its function and source files. nullopt otherwise.
[[nodiscard]] std::optional<Error> refuse_user_code(const UserRecipes& user);
// While user code is refused: "<where>: <what> is user code ...: refused (<why>)".
[[nodiscard]] std::optional<Error> refuse_user_code(std::string_view where, std::string_view what);

}  // namespace bitproof::user
