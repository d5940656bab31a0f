// corrupt.h - CUDA_LAB_CORRUPT=1: every check must be able to fail.
//
// A check that cannot fail is a defect that no passing run reveals: a range of zero elements, a
// comparison never reached, a condition true whatever the GPU computed, a tolerance wider than any
// error. The only way to know that a check can fail is to make it fail: with CUDA_LAB_CORRUPT set
// (to anything but empty or "0") one element of the GPU results the checks compare is changed, so
// every program must end with "FAILED: ..." and exit 1. tests/test_corruption.py runs every program
// of tests/manifest.txt so; a program that still prints PASSED has a check that compares nothing.
// (Whether a check compares the right data - not a copy taken before the kernel finished - is for
// reading the code: such a copy is corrupted like any other.)
//
//   - Verdict::exact() and Verdict::close() (compare.h) see element n / 2 of `got` corrupted: an
//     integer off by one, a float far off (or, where the check's tolerance absorbs that, for an
//     integer the value farthest from the expected one, for a float NaN). The caller's buffer is not
//     modified.
//   - A program that checks GPU data by other means (its own loop, a count, a sum) calls
//     lab_corrupt(host_copy, n) on the data right after copying it back and before checking it:
//     element n / 2 is changed in place (an integer off by one, a float far off, a bool flipped).
//
// Unset, lab_corrupt() returns after one test of a cached flag and the comparison loops are the
// plain ones: the hook costs nothing in a normal run. Host-only code (no CUDA), so that the unit
// test of common/ (tests/unit/test_common.cpp) can include it.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

// Whether CUDA_LAB_CORRUPT asks for corruption: set, not empty, not "0". Read on every call.
inline bool lab_corrupt_env() {
    const char* v = std::getenv("CUDA_LAB_CORRUPT");
    return v && *v && std::strcmp(v, "0") != 0;
}

// The switch, read from the environment once per process. A reference so that the unit test can
// turn it on and off.
inline bool& lab_corrupt_on() {
    static bool on = lab_corrupt_env();
    return on;
}

// The element corrupted in a range of n (n > 0).
inline size_t lab_corrupt_index(size_t n) { return n / 2; }

// Says once per process, on stderr, that the results are corrupted on purpose.
inline void lab_corrupt_notice() {
    static bool said = false;
    if (said) return;
    said = true;
    std::fprintf(stderr, "CUDA_LAB_CORRUPT is set: one element of every checked result is corrupted on purpose; "
                         "this run must end FAILED\n");
}

// A value that differs from v: an integer off by one, a bool flipped, a float far off (0 for inf
// or NaN).
template <class T>
T lab_corrupted(T v) {
    static_assert(std::is_arithmetic<T>::value, "corrupt arithmetic element types");
    if constexpr (std::is_same<T, bool>::value) {
        return !v;
    } else if constexpr (std::is_integral<T>::value) {
        return v == std::numeric_limits<T>::max() ? static_cast<T>(v - 1) : static_cast<T>(v + 1);
    } else {
        if (!std::isfinite(v)) return T(0);
        return static_cast<T>(v + (1 + std::fabs(v)) * 1024);
    }
}

// The value a comparison eq(expected, got) sees at the corrupted element: got itself where it
// already fails, else lab_corrupted(got), or, where a tolerance accepts that (an 8-bit image
// compared within +-1), the representable value farthest from `expected`, or for floats NaN.
template <class T, class Eq>
T lab_corrupt_against(T expected, T got, Eq eq) {
    if (!eq(expected, got)) return got;
    T c = lab_corrupted(got);
    if (!eq(expected, c)) return c;
    if constexpr (std::is_integral<T>::value && !std::is_same<T, bool>::value) {
        const T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
        c = (long double)expected - lo < (long double)hi - expected ? hi : lo;
    } else if constexpr (std::is_floating_point<T>::value) {
        c = std::numeric_limits<T>::quiet_NaN();
    }
    return c;
}

// Corrupts element n / 2 of p[0..n) when CUDA_LAB_CORRUPT is set: call it on the host copy of GPU
// data right before a check that is not Verdict::exact() / close().
template <class T>
void lab_corrupt(T* p, size_t n) {
    if (!lab_corrupt_on() || n == 0) return;
    lab_corrupt_notice();
    T& x = p[lab_corrupt_index(n)];
    x = lab_corrupted(x);
}
