// The operator kernels: the templates of src/operator/operators.hpp with the
// device value policy (Bits<DeviceArith>: the CUDA instructions), one thread per
// output column. No operator code lives here: what the CPU model and the trace
// run is what runs on the GPU. Launch parameters: src/backend/operator_abi.hpp.
#include <cstdint>

#include "arith/device_arith.cuh"
#include "backend/operator_abi.hpp"
#include "operator/dispatch.hpp"
#include "operator/operators.hpp"
#include "operator/values.hpp"

namespace bitproof::kernels {
namespace {

using V = op::Bits<DeviceArith>;

__device__ void put(const abi::OperatorParams& p, std::uint64_t m, std::uint64_t n, std::uint16_t bits) {
  std::uint32_t b = 0;
  while (b + 1 < p.blocks && n >= p.first_row[b] + p.rows[b]) ++b;
  static_cast<std::uint16_t*>(p.out[b])[m * p.rows[b] + (n - p.first_row[b])] = bits;
}

struct GemmColumn {
  const abi::OperatorParams& p;
  std::uint64_t n;
  template <class R>
  __device__ void run() const {
    V v;
    const op::Strided a{p.a, p.k}, codes{p.weight, p.k}, scales{p.scales, p.k / op::kMxBlock};
    const op::GemmShape shape{p.k, p.splits, static_cast<op::FoldOrder>(p.order)};
    std::uint16_t column[op::kMaxGemmRows];
    op::mxfp4_column<R>(v, a, codes, scales, n, p.m, shape, column);
    for (std::uint64_t m = 0; m < p.m; ++m) put(p, m, n, column[m]);
  }
};

__device__ std::uint64_t thread_index() { return std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; }

}  // namespace
}  // namespace bitproof::kernels

using bitproof::kernels::thread_index;

extern "C" __global__ void bp_op_gemv(bitproof::abi::OperatorParams p) {
  const std::uint64_t n = thread_index();
  if (n >= p.n) return;
  bitproof::kernels::V v;
  const bitproof::op::GemvShape shape{p.k, p.block_k, static_cast<bitproof::op::FoldOrder>(p.order)};
  bitproof::kernels::put(p, 0, n, bitproof::op::gemv_element(v, {p.a, p.k}, {p.weight, p.k}, n, shape));
}

extern "C" __global__ void bp_op_mxfp4(bitproof::abi::OperatorParams p) {
  const std::uint64_t n = thread_index();
  if (n >= p.n) return;
  bitproof::kernels::GemmColumn column{p, n};
  if (!bitproof::op::with_dequant(p.recipe, column)) {
    for (std::uint64_t m = 0; m < p.m; ++m) bitproof::kernels::put(p, m, n, 0x7E01);  // unknown recipe: a marked NaN
  }
}

extern "C" __global__ void bp_op_swiglu(bitproof::abi::OperatorParams p) {
  const std::uint64_t t = thread_index();
  if (t >= p.m * p.k) return;
  bitproof::kernels::V v;
  const std::uint64_t m = t / p.k, i = t % p.k;
  static_cast<std::uint16_t*>(p.out[0])[t] = bitproof::op::swiglu_element(v, {p.a, p.k}, {p.b, p.k}, m, i);
}
