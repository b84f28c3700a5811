// The plan a recipe's batch form keeps for a run of consecutive first inputs
// (b and c fixed). The GPU claim sweep plans each thread's whole run once,
// before its batches (kernels/sweep.cu): a recipe with a batch form declares
//   plan_run<Ar>(a0, n, b, c) -> RunPlan            the run a0 … a0 + n − 1
//   eval_run<Ar, kN>(plan, t0, a0, b, c, out[kN])   its cases t0 … t0 + kN − 1,
//                                                   a0 being case t0's input
// and eval_run gives the codes eval gives one at a time whatever the plan says
// (a plan that is not ok, or RunPlan{}, means: plan these kN cases alone).
// The one such plan today is the exact FMA oracles' straight path.
#pragma once

#include "oracle/fma_exact.hpp"

namespace bitproof::recipes {

using RunPlan = oracle::fast::LinearRun;

}  // namespace bitproof::recipes
