// The PR's failure in miniature: a kernel that pays a cold state on its module's
// first launch (as a lazily built lookup table, a JIT or an autotuner does) and is
// fast on every launch after it. With both arms sharing one loaded module and A
// timed first (bitproof time --protocol naive), A pays and B looks far faster; the
// gate prepares and warms each arm's own module first, and the arms time the same.
__device__ unsigned lut_ready;  // 0 until a launch of this module has built the "table"

extern "C" __global__ void lut_first_use(const float* x, float* y, unsigned n, unsigned build_work) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  if (lut_ready == 0) {  // the slow first use: a long dependent chain per element
    float acc = 0.0f;
    for (unsigned j = 0; j < build_work; ++j) acc = fmaf(acc, 0.999f, v);
    v = acc;
  }
  y[i] = v * 2.0f;
  if (i == 0) lut_ready = 1;
}
