// random.h - seeded random input data.
//
// Inputs are random (never zeros or a ramp, which hide indexing bugs: a kernel that reads the
// wrong element of an all-zero array still "passes") and seeded, so every run checks the same
// numbers and a failure can be reproduced.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>
#include "build_mode.h"

// The generator behind fill_random: one std::mt19937(seed) and one distribution over it,
// uniform_real_distribution<double>(lo, hi) or uniform_int_distribution<long long>(lo, hi), whose
// next n values next() writes. A class of its own so that <random> is parsed where its bodies are
// compiled (build_mode.h), not in every program.
class RandomStream {
  public:
    RandomStream(uint32_t seed, double lo, double hi);
    RandomStream(uint32_t seed, long long lo, long long hi);
    ~RandomStream();
    RandomStream(const RandomStream&) = delete;
    RandomStream& operator=(const RandomStream&) = delete;
    void next(double* out, size_t n);
    void next(long long* out, size_t n);

  private:
    struct State;
    State* state_;
};

// Fills v with values uniform in [lo, hi]; integers inclusive, floats half-open.
template <class T>
void fill_random(std::vector<T>& v, T lo, T hi, uint32_t seed = 2024) {
    using Draw = typename std::conditional<std::is_floating_point<T>::value, double, long long>::type;
    RandomStream gen(seed, static_cast<Draw>(lo), static_cast<Draw>(hi));
    Draw buf[1024];
    for (size_t i = 0; i < v.size(); i += 1024) {
        size_t k = v.size() - i < 1024 ? v.size() - i : 1024;
        gen.next(buf, k);
        for (size_t j = 0; j < k; ++j) v[i + j] = static_cast<T>(buf[j]);
    }
}

template <class T>
std::vector<T> random_vector(size_t n, T lo, T hi, uint32_t seed = 2024) {
    std::vector<T> v(n);
    fill_random(v, lo, hi, seed);
    return v;
}

// ---- the bodies: inline here (header-only), or compiled once into the library (build_mode.h) ----
#if LAB_COMMON_BODIES
#include <random>

struct RandomStream::State {
    std::mt19937 gen;
    std::uniform_real_distribution<double> real;
    std::uniform_int_distribution<long long> integer;
};

LAB_INLINE RandomStream::RandomStream(uint32_t seed, double lo, double hi)
    : state_(new State{std::mt19937(seed), std::uniform_real_distribution<double>(lo, hi), {}}) {}

LAB_INLINE RandomStream::RandomStream(uint32_t seed, long long lo, long long hi)
    : state_(new State{std::mt19937(seed), {}, std::uniform_int_distribution<long long>(lo, hi)}) {}

LAB_INLINE RandomStream::~RandomStream() { delete state_; }

LAB_INLINE void RandomStream::next(double* out, size_t n) {
    for (size_t i = 0; i < n; ++i) out[i] = state_->real(state_->gen);
}

LAB_INLINE void RandomStream::next(long long* out, size_t n) {
    for (size_t i = 0; i < n; ++i) out[i] = state_->integer(state_->gen);
}
#endif  // LAB_COMMON_BODIES
