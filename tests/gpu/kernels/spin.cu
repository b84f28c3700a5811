// A kernel that never returns (tests/gpu/ab_kernels.py: ended at --user-timeout, exit 2).
// Never returns: waits for a value nobody writes.
extern "C" __global__ void spin(unsigned short* y) {
  volatile unsigned short* v = y;
  while (v[0] != 0x1234u) {
  }
}
