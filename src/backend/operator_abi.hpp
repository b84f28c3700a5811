// The parameters of the operator kernels (kernels/operators.cu), shared by the
// host (src/backend/cuda_operator.cpp) and the device. One launch computes one
// stage: every element of its joined output, one thread per output column n
// (all M rows), the column's row block b written to out[b] at (m, n - first_row[b]).
#pragma once

#include <cstdint>

namespace bitproof::abi {

inline constexpr int kMaxOutputBlocks = 4;  // op::kMaxJoined
inline constexpr unsigned kOperatorThreads = 128;

struct OperatorParams {
  const void* a = nullptr;       // FP16 [m][k]: x (gemv), A (gemm), gate (swiglu)
  const void* b = nullptr;       // swiglu: up, FP16 [m][k]
  const void* weight = nullptr;  // gemv: FP16 [n][k]; gemm: E2M1 codes [n][k], two a byte
  const void* scales = nullptr;  // gemm: UE8M0 [n][k / 32]
  std::uint64_t m = 1;
  std::uint64_t n = 0;           // joined output columns (swiglu: k)
  std::uint64_t k = 0;
  std::uint64_t block_k = 0;     // gemv
  std::uint64_t splits = 1;      // gemm
  std::uint32_t order = 0;       // op::FoldOrder
  std::int32_t recipe = -1;      // gemm: the dequant recipe's registry index
  std::uint32_t blocks = 1;
  std::uint64_t first_row[kMaxOutputBlocks] = {};
  std::uint64_t rows[kMaxOutputBlocks] = {};
  void* out[kMaxOutputBlocks] = {};
};

}  // namespace bitproof::abi
