// A kernel whose work is a knob: each thread runs a dependent chain of k FMAs on
// its element. The timing gate's controls (proofs/time/*.json): the same k in
// both arms must be "same", twice the k "slower".
extern "C" __global__ void k_loop(const float* x, float* y, unsigned n, unsigned k) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = x[i];
  float acc = 0.0f;
  for (unsigned j = 0; j < k; ++j) acc = fmaf(acc, 0.999f, v);
  y[i] = acc;
}
