// A/B specs: two arms of an operator (or a chain of them), the inputs they read,
// and how many changing-input cases to compare. Parsing is strict like proof specs:
// unknown keys, wrong types, unknown operators or recipes, shapes that do not fit,
// names used twice: one line "<file>: <field>: <what>", exit 2.
//
// {
//   "bitproof_ab": 1,
//   "name": "dsv4-fused-aux-gemv",            identifier
//   "title": "...", "source": "...",          optional prose
//   "seed": 1, "cases": 64,                   cases >= 1 (default 64); each case's activations
//                                             come from the case seed (ab_case_seed)
//   "checkpoint": "ckpt/",                    optional: a safetensors checkpoint, relative to the spec
//   "inputs": [
//     {"name": "x", "role": "activation", "dtype": "f16", "shape": [1, 4096],
//      "values": {"uniform": [-1, 1]}},                      or "values": "finite" (every finite code)
//     {"name": "w", "role": "weight", "dtype": "f16", "shape": [2048, 4096], "values": {...}},
//     {"name": "e0.w1", "role": "weight", "dtype": "mxfp4", "shape": [512, 4096],
//      "scales": {"range": [113, 128]}},                     synthetic: codes uniform, scales in range
//     {"name": "e0.w2", "role": "weight", "dtype": "mxfp4", "shape": [4096, 512],
//      "tensor": "layers.0.ffn.experts.0.w2"}                from the checkpoint: <tensor>.weight (I8
//   ],                                                       [N, K/2]) and <tensor>.scale (F8_E8M0 [N, K/32]);
//                                                            an f16 input: the F16 tensor itself
//   "arms": [                                               exactly two
//     {"name": "separate", "stages": [
//        {"op": "fp16_gemv", "x": "x", "weights": ["w"], "outputs": ["y"],
//         "block_k": 1024, "order": "forward"},
//        {"op": "mxfp4_gemm", "a": "x", "weights": ["e0.w1"], "outputs": ["gate"],
//         "dequant": "turbomind.mxfp4_fp16.ordinary", "split_k": 4, "order": "forward"},
//        {"op": "swiglu", "gate": "gate", "up": "up", "outputs": ["act"]}]},
//     {"name": "fused", "stages": [...]}
//   ],
//   "outputs": ["y"],                          compared bit for bit; both arms must produce them
//   "element_proofs": [                        optional: what justifies substituting one dequant
//     {"spec": "../proofs/dsv4-mxfp4-fp16-fold.json", "claim": 0,   recipe for another in the
//      "scales": [113, 128]}],                                      trace proof (--prove)
//   "expect": "equal"                          or "differ": a negative control, guarded in CI
// }
//
// Several weights in one stage are joined row-wise into one buffer (the fused
// launch); its outputs are the joined output's row blocks, one per weight.
//
// Kernel arms (issue 47, kernel_spec.hpp, docs/operators.md "Kernel arms"): "kernels":
// {"files": [...CUDA], "ptx": [...], "include_dirs": [...], "fmad": true}; a stage
// {"kernel": name, "grid": [x, y, z], "block": [x, y, z], "shared_bytes": n, "args": [
//   {"tensor": n[, "part": "codes"|"scales"]}, {"joined": [...][, "part": ...]}, {"output": n},
//   {"u32"|"i32"|"u64"|"f32": v}]}; "outputs" entries may be declarations
// {"name", "dtype": "f16"|"bf16", "shape": [rows, cols]} (what kernel stages write). An arm's
// stages are all kernel launches or all built-in operators.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "error.hpp"
#include "operator/kernel_spec.hpp"
#include "operator/operators.hpp"
#include "format/domain.hpp"
#include "recipes/registry.hpp"

namespace bitproof::op {

inline constexpr int kAbSpecVersion = 1;
inline constexpr std::size_t kMaxJoined = 4;         // weights one stage may join
inline constexpr std::uint64_t kMaxTensorElements = std::uint64_t{1} << 31;

enum class DType : std::uint8_t { kF16, kMxfp4 };
enum class InputRole : std::uint8_t { kActivation, kWeight };
enum class OpKind : std::uint8_t { kGemv, kMxfp4Gemm, kSwiglu };

// How a synthetic FP16 tensor is filled: uniform reals in [lo, hi] rounded to FP16,
// or uniform over every finite FP16 code.
struct ValueSpec {
  bool finite_codes = false;
  double lo = -1.0;
  double hi = 1.0;
};

struct InputSpec {
  std::string name;
  InputRole role = InputRole::kWeight;
  DType dtype = DType::kF16;
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
  ValueSpec values;                  // synthetic f16
  CodeRange scales{127, 127};        // synthetic mxfp4: scale bytes uniform in this range
  std::string tensor;                // non-empty: read from the checkpoint
};

struct Stage {
  OpKind op = OpKind::kGemv;
  std::string a;                     // gemv: x; gemm: a; swiglu: gate
  std::string b;                     // swiglu: up
  std::vector<std::string> weights;  // gemv, gemm: joined when more than one
  std::vector<std::string> outputs;  // gemv, gemm: one per weight; swiglu: one
  std::uint64_t block_k = 1024;      // gemv
  std::uint64_t split_k = 1;         // gemm
  FoldOrder order = FoldOrder::kForward;
  const RecipeEntry* dequant = nullptr;  // gemm
  // Set: a kernel stage (the user's kernel launched with these arguments; the fields
  // above unused). Unset: a built-in operator stage.
  std::optional<KernelLaunch> launch;
};

struct Arm {
  std::string name;
  std::vector<Stage> stages;
};

struct ElementProofRef {
  std::string spec;   // as written
  std::string path;   // resolved against the A/B spec's directory
  std::size_t claim = 0;
  CodeRange scales{0, 0};
};

// Shape of a tensor an arm reads or writes: rows × cols of `dtype`.
struct TensorShape {
  DType dtype = DType::kF16;
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
};

struct AbSpec {
  std::string path;
  std::string name;
  std::string title;
  std::string source;
  std::uint64_t seed = 1;
  std::uint64_t cases = 64;
  std::string checkpoint;            // as written ("" none)
  std::string checkpoint_path;       // resolved against the spec's directory
  std::vector<InputSpec> inputs;
  std::array<Arm, 2> arms;
  std::vector<std::string> outputs;  // compared bit for bit (declared or built-in, in spec order)
  std::optional<KernelSources> kernels;  // set when any stage launches a user kernel
  std::vector<OutputDecl> output_decls;  // outputs declared with dtype and shape (kernel stages write them)
  std::vector<ElementProofRef> element_proofs;
  bool expect_differ = false;

  [[nodiscard]] const InputSpec* input(const std::string& name) const;
  [[nodiscard]] const OutputDecl* output_decl(const std::string& name) const;
  // Some stage launches a user kernel (then `kernels` is set).
  [[nodiscard]] bool has_kernel_stages() const;
  // Every tensor arm `arm` reads or writes, inputs included, by name.
  [[nodiscard]] std::vector<std::pair<std::string, TensorShape>> tensors_of(std::size_t arm) const;
  [[nodiscard]] bool uses_checkpoint() const;
  // Bytes of host memory a run holds at once: every weight (f16: 2 bytes an
  // element; mxfp4: half a byte an element and a scale byte a block), the
  // joined weights of each stage that joins several, one case's activations and
  // every tensor both arms write. load_weights refuses a spec above
  // memory_limit() (memory.hpp) before it allocates. Kernel arms: every tensor a launch
  // reads counted again (the executor's buffers are copies; an mxfp4 part counts the whole).
  [[nodiscard]] std::uint64_t host_bytes() const;
};

[[nodiscard]] Expected<AbSpec> parse_ab_spec(const std::string& text, const std::string& path);
[[nodiscard]] Expected<AbSpec> load_ab_spec(const std::string& path);
// The canonical JSON of the spec (what reports record and verify re-reads).
[[nodiscard]] nlohmann::ordered_json ab_spec_to_json(const AbSpec& spec);

[[nodiscard]] std::string_view op_name(OpKind op);
[[nodiscard]] std::string_view dtype_name(DType dtype);
[[nodiscard]] std::string_view order_name(FoldOrder order);
// The catalogue recipes a gemm stage may dequantise with: e2m1 × ue8m0 → fp16.
[[nodiscard]] bool is_mxfp4_dequant(const RecipeEntry& recipe);

// The seed of case `case_index`'s activations: word case_index + 1 of the splitmix64 stream from the spec's seed.
[[nodiscard]] std::uint64_t ab_case_seed(std::uint64_t spec_seed, std::uint64_t case_index);

}  // namespace bitproof::op
