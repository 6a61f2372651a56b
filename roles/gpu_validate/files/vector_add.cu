// Adds two vectors on GPU 0 and compares the result with the host's sum (gpuops.vgpu.gpu_validate).
// Prints the device name, the largest error and PASS or FAIL; exits 0 only on PASS.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(call)                                                                   \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            std::printf("CUDA error: %s (%s)\n", cudaGetErrorString(err_), #call);   \
            return 2;                                                                 \
        }                                                                             \
    } while (0)

__global__ void vector_add(const float *a, const float *b, float *sum, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        sum[i] = a[i] + b[i];
    }
}

int main()
{
    const int n = 1 << 20;
    const size_t bytes = n * sizeof(float);
    std::vector<float> a(n), b(n), sum(n);
    for (int i = 0; i < n; ++i) {
        a[i] = static_cast<float>(i);
        b[i] = 2.0f * static_cast<float>(i);
    }

    cudaDeviceProp prop;
    CHECK(cudaSetDevice(0));
    CHECK(cudaGetDeviceProperties(&prop, 0));

    float *d_a, *d_b, *d_sum;
    CHECK(cudaMalloc(&d_a, bytes));
    CHECK(cudaMalloc(&d_b, bytes));
    CHECK(cudaMalloc(&d_sum, bytes));
    CHECK(cudaMemcpy(d_a, a.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_b, b.data(), bytes, cudaMemcpyHostToDevice));
    vector_add<<<(n + 255) / 256, 256>>>(d_a, d_b, d_sum, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(sum.data(), d_sum, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_sum));

    double error = 0.0;
    for (int i = 0; i < n; ++i) {
        error = std::fmax(error, std::fabs(static_cast<double>(sum[i]) - 3.0 * i));
    }
    std::printf("device 0: %s\n", prop.name);
    std::printf("vector_add: %d elements, max error %g\n", n, error);
    std::printf("%s\n", error == 0.0 ? "PASS" : "FAIL");
    return error == 0.0 ? 0 : 1;
}
