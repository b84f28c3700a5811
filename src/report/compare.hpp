// Comparing reports: the first line where two results differ (verify) and
// every difference between two reports' results (diff). Re-running what a
// report records is its kind's (report/kind_*.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "error.hpp"
#include "proof/audited_scales.hpp"
#include "report/report.hpp"

namespace bitproof {

// The first line where two JSON values differ when printed (dump(2)), or "" if they print alike.
[[nodiscard]] std::string first_difference(const Json& a, const Json& b);

// Lists of (code, count) pairs kept apart from a document (an audit's
// histograms): each stands in it as an empty array, found by its address,
// and prints as the array [[code, count], ...] would.
using CodePairs = std::span<const std::pair<std::uint32_t, std::uint64_t>>;
using PairsApart = std::unordered_map<const Json*, CodePairs>;
// first_difference of the documents with their arrays kept apart put back.
[[nodiscard]] std::string first_difference(const Json& a, const Json& b, const PairsApart& a_apart,
                                           const PairsApart& b_apart);

// Every difference between the results of two reports, one line each: spec,
// claims, counts, recorded counterexamples case by case, case digest. Empty
// when the results are identical.
[[nodiscard]] std::vector<std::string> diff_results(const Json& a, const Json& b);

}  // namespace bitproof
