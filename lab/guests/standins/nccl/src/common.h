/* Lab stand-in of nccl-tests' src/common.h (gpuops lab): the includes that make a build need NCCL's development
 * files and the CUDA toolkit. */
#ifndef NCCL_TESTS_COMMON_H_
#define NCCL_TESTS_COMMON_H_
#include "nccl.h"
#include "cuda_runtime_api.h"
#endif
