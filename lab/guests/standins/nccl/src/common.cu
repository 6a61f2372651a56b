/* Lab stand-in of nccl-tests' src/common.cu (gpuops lab). */
#include "common.h"

__global__ void labInitData(float *data, int count) {}
