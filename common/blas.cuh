// blas.cuh - for the programs that compare their matrix products with cuBLAS (03_shared's
// matmul_tiled and sgemm_steps): the cuBLAS status check and the CPU ground truth.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cublas_v2.h>

// Like CHECK: a failing cuBLAS call prints where and why on stderr, "FAILED: ..." as the last line
// of stdout, and exits 1.
#define CHECK_CUBLAS(call)                                                                              \
    do {                                                                                                \
        cublasStatus_t s_ = (call);                                                                     \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                              \
            std::fprintf(stderr, "cuBLAS error at %s:%d\n  call:  %s\n  error: %s\n", __FILE__, __LINE__, \
                         #call, cublasGetStatusString(s_));                                             \
            std::printf("FAILED: cuBLAS error %s at %s:%d\n", cublasGetStatusString(s_), __FILE__, __LINE__); \
            std::exit(1);                                                                               \
        }                                                                                               \
    } while (0)

// CPU reference in double for the listed rows of C = A * B (row-major, A k wide, B and C n wide; all
// columns of each listed row): the ground truth for the check. Row r of the result goes to c[r * n].
inline void gemm_rows_cpu(const std::vector<float>& a, const std::vector<float>& b, std::vector<double>& c,
                          const std::vector<int>& rows, int n, int k) {
    std::vector<double> acc(n);
    for (size_t r = 0; r < rows.size(); ++r) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int e = 0; e < k; ++e) {
            double x = a[(size_t)rows[r] * k + e];
            const float* brow = &b[(size_t)e * n];
            for (int j = 0; j < n; ++j) acc[j] += x * brow[j];
        }
        std::copy(acc.begin(), acc.end(), c.begin() + r * n);
    }
}
