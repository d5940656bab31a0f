// compare.h - checking GPU results against a CPU reference, and the final verdict line.
//
// A Verdict collects checks. exact() compares element by element (integers, or floats that must
// be bit-identical); close() allows |got - expected| <= atol + rtol * |expected| for results
// whose rounding legitimately differs (a GPU sums in another order, uses FMA, or filters with
// fixed-point weights). Each check prints one line: how many elements differed and the first few
// (index, expected, got). finish() prints the program's last line - PASSED, or FAILED: with the
// first thing that differed - and returns the exit code (0 or 1).
//
// With CUDA_LAB_CORRUPT=1 in the environment, exact() and close() see one element of `got`
// corrupted, so that a run shows every such check can fail (corrupt.h says why and how).
#pragma once
#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>
#include "build_mode.h"
#include "corrupt.h"

class Verdict {
  public:
    explicit Verdict(int show = 3) : show_(show) {}

    // A plain condition about something the GPU produced, e.g. a count it computed or the value an
    // API returned for GPU work. What the host computed itself, or one API compared with another
    // (the CPU's own input, a size the program chose), is not a check: print it with note().
    bool check(bool ok, const std::string& what);

    // A fact about the run that is printed but does not decide PASSED: it verifies the host's own
    // data or the program's set-up, not a GPU result (tests/unit/test_common.cpp, compare_note).
    void note(bool ok, const std::string& what);

    template <class T>
    bool exact(const std::string& what, const T* expected, const T* got, size_t n) {
        static_assert(std::is_arithmetic<T>::value, "compare arithmetic element types");
        return compare(what, expected, got, n, [](T e, T g) { return e == g; });
    }

    template <class T>
    bool close(const std::string& what, const T* expected, const T* got, size_t n, double atol, double rtol) {
        static_assert(std::is_arithmetic<T>::value, "compare arithmetic element types");
        return compare(what, expected, got, n, [=](T e, T g) {
            double de = static_cast<double>(e), dg = static_cast<double>(g);
            return std::fabs(dg - de) <= atol + rtol * std::fabs(de);  // NaN fails
        });
    }

    bool ok() const { return failures_ == 0; }
    const std::string& first_failure() const { return first_; }

    // Prints PASSED or FAILED: <first mismatch>; returns the exit code.
    int finish() const;

  private:
    // An element as text: floating point with 9 significant digits (%.9g, what an ostream with
    // precision(9) prints), integers in decimal (+ prints char types as numbers).
    template <class T>
    static std::string str(T v) {
        if constexpr (std::is_floating_point<T>::value) return real_text(v);
        else return std::to_string(+v);
    }
    static std::string real_text(double v);
    static std::string real_text(long double v);

    template <class T, class Eq>
    bool compare(const std::string& what, const T* expected, const T* got, size_t n, Eq eq) {
        size_t bad = 0;
        std::string detail;
        auto one = [&](size_t i, T g) {
            if (eq(expected[i], g)) return;
            if (bad < static_cast<size_t>(show_))
                detail += (bad ? ", [" : "[") + std::to_string(i) + "] expected " + str(expected[i]) + " got " + str(g);
            ++bad;
        };
        // CUDA_LAB_CORRUPT: element k is seen corrupted. Unset, k == n and this is the plain loop.
        const size_t k = n > 0 && lab_corrupt_on() ? lab_corrupt_index(n) : n;
        for (size_t i = 0; i < k; ++i) one(i, got[i]);
        if (k < n) {
            lab_corrupt_notice();
            one(k, lab_corrupt_against(expected[k], got[k], eq));
            for (size_t i = k + 1; i < n; ++i) one(i, got[i]);
        }
        if (bad == 0) {
            std::printf("  check %-34s ok (%zu elements)\n", what.c_str(), n);
            return true;
        }
        std::printf("  check %-34s %zu of %zu differ: %s\n", what.c_str(), bad, n, detail.c_str());
        record(what + ": " + std::to_string(bad) + " of " + std::to_string(n) + " differ, first " + detail);
        return false;
    }

    void record(const std::string& msg);

    int show_;
    int failures_ = 0;
    std::string first_;
};

// ---- the bodies: inline here (header-only), or compiled once into the library (build_mode.h) ----
#if LAB_COMMON_BODIES
LAB_INLINE bool Verdict::check(bool ok, const std::string& what) {
    std::printf("  check %-34s %s\n", what.c_str(), ok ? "ok" : "MISMATCH");
    if (!ok) record(what);
    return ok;
}

LAB_INLINE void Verdict::note(bool ok, const std::string& what) {
    std::printf("  note  %-34s %s\n", what.c_str(), ok ? "ok" : "differs (a note: it does not decide PASSED)");
}

LAB_INLINE int Verdict::finish() const {
    if (failures_ == 0) {
        std::printf("PASSED\n");
        return 0;
    }
    std::printf("FAILED: %s\n", first_.c_str());
    return 1;
}

LAB_INLINE std::string Verdict::real_text(double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.9g", v);
    return b;
}

LAB_INLINE std::string Verdict::real_text(long double v) {
    char b[80];
    std::snprintf(b, sizeof b, "%.9Lg", v);
    return b;
}

LAB_INLINE void Verdict::record(const std::string& msg) {
    if (failures_++ == 0) first_ = msg;
}
#endif  // LAB_COMMON_BODIES
