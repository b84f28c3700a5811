#include "backend/model_blocks.hpp"

#include <fmt/format.h>

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

Expected<Ok> count_model_words(const Spec& spec, const CaseEvaluator& evaluator,
                               const std::vector<abi::ModelWords>& words, std::uint64_t first_chunk, std::size_t keep,
                               SweepPart& part) {
  const std::size_t slots = evaluator.recipes().size();
  const std::uint64_t cases = spec.case_count();
  std::vector<std::uint32_t> codes(spec.inputs.size()), soft(slots);
  for (std::uint64_t k = 0; k < words.size(); ++k) {
    const abi::ModelWords& m = words[k];
    const std::uint64_t begin = (first_chunk + k) * kChunkCases;
    const std::uint64_t length = begin < cases ? std::min(kChunkCases, cases - begin) : 0;
    std::uint64_t n = 0;
    bool fits = true;
    for (std::size_t s = 0; s < static_cast<std::size_t>(abi::kMaxSlots); ++s) {
      const bool checked = s < slots && !evaluator.recipes()[s]->is_user();
      fits = fits && m.differing[s] <= (checked ? length : 0);
      n += m.differing[s];
    }
    const bool recorded = m.first != abi::kNoModelRecord;
    const auto slot = static_cast<std::size_t>(abi::model_record_slot(m.first));
    const std::uint64_t offset = abi::model_record_offset(m.first);
    if (!fits || recorded != (n != 0) || (recorded && (slot >= slots || m.differing[slot] == 0 || offset >= length))) {
      return Error{
          fmt::format("the model check of cases {}..{} returned words that do not add up", begin, begin + kChunkCases)};
    }
    part.model_disagreement_count += n;
    if (!recorded || part.model_disagreements.size() >= keep) continue;
    evaluator.codes_of(begin + offset, codes.data());
    evaluator.soft_outputs(codes.data(), soft.data());
    if (soft[slot] == abi::model_record_hardware(m.first)) {
      return Error{
          fmt::format("the model check reports case {} ({}) as differing from the soft model, but the "
                      "CPU's soft model gives the device's bits",
                      begin + offset, evaluator.recipes()[slot]->card->name)};
    }
    part.model_disagreements.push_back({begin + offset, codes, evaluator.recipes()[slot], soft[slot], soft[slot],
                                        abi::model_record_hardware(m.first)});
  }
  return Ok{};
}

}  // namespace bitproof
