#include "backend/model_blocks.hpp"

#include <algorithm>
#include <array>

#include "format/format.hpp"
#include "proof/engine.hpp"

namespace bitproof {

bool edge_code(FormatId format, std::uint32_t code) {
  const FormatSpec& f = spec_of(format);
  const std::uint32_t magnitude = code & ~f.sign_mask();
  const std::uint32_t top = f.max_finite_code();
  const std::uint32_t all_ones = (f.exp_field_max() << f.man_bits) | f.man_mask();
  const std::uint32_t first_quiet = f.man_bits > 0 ? (f.exp_field_max() << f.man_bits) | (1u << (f.man_bits - 1)) : 0;
  const std::array<std::uint32_t, 8> edges{0, 1, top, top + 1, top + 2, first_quiet - 1, first_quiet, all_ones};
  return std::find(edges.begin(), edges.end(), magnitude) != edges.end();
}

ModelBlocks::ModelBlocks(const Spec& spec) {
  const std::uint64_t cases = spec.case_count();
  const std::uint64_t blocks = (cases + kBlockCases - 1) / kBlockCases;
  every_block_ = cases <= kEveryBlockCases;
  stride_ = std::max<std::uint64_t>(64, (blocks + kMostSampledBlocks - 1) / kMostSampledBlocks);
  std::uint64_t place = 1;  // the first input varies fastest
  for (const InputDomain& input : spec.inputs) {
    if (place % kBlockCases == 0) constants_.push_back({place, input});
    place *= input.count();
  }
}

bool ModelBlocks::checked(std::uint64_t block) const {
  if (every_block_ || block % stride_ == 0) return true;
  const std::uint64_t first_case = block * kBlockCases;
  return std::any_of(constants_.begin(), constants_.end(), [&](const Constant& c) {
    const std::uint64_t k = first_case / c.place % c.input.count();
    return edge_code(c.input.format, c.input.code(k));
  });
}

}  // namespace bitproof
