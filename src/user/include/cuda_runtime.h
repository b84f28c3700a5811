// bitproof's host stand-in for <cuda_runtime.h>: see bitproof_cuda_host.h.
#pragma once
#include "bitproof_cuda_host.h"
