// random.h - seeded random input data.
//
// Inputs are random (never zeros or a ramp, which hide indexing bugs: a kernel that reads the
// wrong element of an all-zero array still "passes") and seeded, so every run checks the same
// numbers and a failure can be reproduced.
#pragma once
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

// Fills v with values uniform in [lo, hi]; integers inclusive, floats half-open.
template <class T>
void fill_random(std::vector<T>& v, T lo, T hi, uint32_t seed = 2024) {
    std::mt19937 gen(seed);
    if constexpr (std::is_floating_point<T>::value) {
        std::uniform_real_distribution<double> d(lo, hi);
        for (auto& x : v) x = static_cast<T>(d(gen));
    } else {
        std::uniform_int_distribution<long long> d(lo, hi);
        for (auto& x : v) x = static_cast<T>(d(gen));
    }
}

template <class T>
std::vector<T> random_vector(size_t n, T lo, T hi, uint32_t seed = 2024) {
    std::vector<T> v(n);
    fill_random(v, lo, hi, seed);
    return v;
}
