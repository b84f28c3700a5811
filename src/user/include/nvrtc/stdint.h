// <stdint.h> for user sources compiled by NVRTC: see <cstdint> beside it.
#pragma once
#include <cstdint>
