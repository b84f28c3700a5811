// One host+device qualifier for code that runs in both worlds: recipes, soft
// arithmetic, format decoding. Under nvcc it expands to __host__ __device__;
// in a plain C++ build it is empty.
#pragma once

#if defined(__CUDACC__)
#define BP_HD __host__ __device__
#else
#define BP_HD
#endif
