// args.h - command-line options of the form --name=value, validated before any CUDA call.
//
// A program declares each option with its type, default, allowed range and a help line, then
// calls parse_or_exit(). A bad command line (unknown option, non-number, value out of range,
// overflow) prints one line saying what is wrong plus the usage and exits 2; --help prints the
// usage and exits 0. Both happen before the program touches the GPU, so a typo never costs a
// CUDA context. Every program gets --device=N. Integers accept 2^K as well (--n=2^28).
//
//   Args args(argc, argv, "Adds two vectors on the GPU.");
//   long long n = args.integer("n", 1 << 24, 1, 1LL << 30, "number of elements");
//   bool csv    = args.flag("csv", "print CSV rows");
//   args.parse_or_exit();
#pragma once
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "build_mode.h"

class Args {
  public:
    Args(int argc, char** argv, std::string summary);

    long long integer(const char* name, long long def, long long lo, long long hi, const char* help);
    double real(const char* name, double def, double lo, double hi, const char* help);
    // A switch: --name (no value).
    bool flag(const char* name, const char* help);
    std::string text(const char* name, const char* def, const char* help);

    int device() const { return device_; }

    // Checks for unknown options; prints usage and exits on --help (0) or on any error (2).
    void parse_or_exit();

    // For tests: the first error (empty if none), as parse_or_exit would print it.
    std::string first_error();
    bool help_requested() const { return help_; }

    std::string usage() const;

  private:
    struct Token {
        std::string text;
        bool used;
    };

    static std::string fmt(double x);
    // Accepts decimal integers with an optional sign, and 2^K.
    static bool parse_integer(const char* v, long long* out);
    const char* find(const char* name);
    void fail(const char*, const std::string& msg);
    void add_usage(const char* name, const char* type, const std::string& def, const std::string& range,
                   const char* help);

    std::string prog_, summary_, error_;
    std::vector<Token> tokens_;
    std::vector<std::string> usage_lines_;
    bool help_ = false;
    int device_ = 0;
};

// ---- the bodies: inline here (header-only), or compiled once into the library (build_mode.h) ----
#if LAB_COMMON_BODIES

LAB_INLINE Args::Args(int argc, char** argv, std::string summary) : summary_(std::move(summary)) {
    std::string p = argc > 0 ? argv[0] : "program";
    size_t slash = p.find_last_of('/');
    prog_ = slash == std::string::npos ? p : p.substr(slash + 1);
    for (int i = 1; i < argc; ++i) tokens_.push_back({argv[i], false});
    for (auto& t : tokens_)
        if (t.text == "--help" || t.text == "-h") help_ = t.used = true;
    device_ = static_cast<int>(integer("device", 0, 0, 63, "index of the GPU to use"));
}

LAB_INLINE long long Args::integer(const char* name, long long def, long long lo, long long hi, const char* help) {
    add_usage(name, "INT", std::to_string(def), std::to_string(lo) + ".." + std::to_string(hi), help);
    const char* v = find(name);
    if (!v) return def;
    long long x = 0;
    if (!parse_integer(v, &x)) {
        fail(name, std::string("--") + name + " expects an integer, got '" + v + "'");
        return def;
    }
    if (errno == ERANGE || x < lo || x > hi) {
        fail(name, std::string("--") + name + "=" + v + " is out of range [" + std::to_string(lo) +
                       ", " + std::to_string(hi) + "]");
        return def;
    }
    return x;
}

LAB_INLINE double Args::real(const char* name, double def, double lo, double hi, const char* help) {
    add_usage(name, "NUM", fmt(def), fmt(lo) + ".." + fmt(hi), help);
    const char* v = find(name);
    if (!v) return def;
    char* end = nullptr;
    errno = 0;
    double x = std::strtod(v, &end);
    if (*v == '\0' || *end != '\0' || !std::isfinite(x)) {
        fail(name, std::string("--") + name + " expects a number, got '" + v + "'");
        return def;
    }
    if (errno == ERANGE || x < lo || x > hi) {
        fail(name, std::string("--") + name + "=" + v + " is out of range [" + fmt(lo) + ", " + fmt(hi) + "]");
        return def;
    }
    return x;
}

LAB_INLINE bool Args::flag(const char* name, const char* help) {
    add_usage(name, "", "", "", help);
    std::string bare = std::string("--") + name;
    bool on = false;
    for (auto& t : tokens_) {
        if (t.text == bare) on = t.used = true;
        else if (t.text.rfind(bare + "=", 0) == 0) {
            t.used = true;
            fail(name, bare + " is a switch and takes no value");
        }
    }
    return on;
}

LAB_INLINE std::string Args::text(const char* name, const char* def, const char* help) {
    add_usage(name, "STR", def && *def ? std::string("'") + def + "'" : "none", "", help);
    const char* v = find(name);
    return v ? std::string(v) : std::string(def ? def : "");
}

LAB_INLINE void Args::parse_or_exit() {
    if (help_) {
        std::fputs(usage().c_str(), stdout);
        std::exit(0);
    }
    std::string err = first_error();
    if (!err.empty()) {
        std::fprintf(stderr, "%s: error: %s\n%s", prog_.c_str(), err.c_str(), usage().c_str());
        std::exit(2);
    }
}

LAB_INLINE std::string Args::first_error() {
    for (auto& t : tokens_) {
        if (t.used) continue;
        if (t.text.rfind("--", 0) == 0)
            return "unknown option '" + t.text.substr(0, t.text.find('=')) + "'";
        return "unexpected argument '" + t.text + "' (options look like --name=value)";
    }
    return error_;
}

LAB_INLINE std::string Args::usage() const {
    std::string u = "usage: " + prog_ + " [options]\n  " + summary_ + "\noptions:\n";
    for (auto& line : usage_lines_) u += line;
    u += "  --help            print this help and exit\n";
    return u;
}

LAB_INLINE std::string Args::fmt(double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", x);
    return buf;
}

LAB_INLINE bool Args::parse_integer(const char* v, long long* out) {
    errno = 0;
    std::string s(v);
    size_t caret = s.find('^');
    if (caret != std::string::npos) {
        if (s.substr(0, caret) != "2") return false;
        long long k = 0;
        if (!parse_integer(s.c_str() + caret + 1, &k)) return false;
        if (k < 0 || k > 62) {
            errno = ERANGE;
            *out = 0;
            return true;
        }
        *out = 1LL << k;
        errno = 0;
        return true;
    }
    if (s.empty()) return false;
    char* end = nullptr;
    *out = std::strtoll(v, &end, 10);
    return *end == '\0';
}

LAB_INLINE const char* Args::find(const char* name) {
    std::string eq = std::string("--") + name + "=";
    std::string bare = std::string("--") + name;
    const char* val = nullptr;
    for (auto& t : tokens_) {
        if (t.text.rfind(eq, 0) == 0) {
            t.used = true;
            val = t.text.c_str() + eq.size();
        } else if (t.text == bare) {
            t.used = true;
            fail(name, bare + " needs a value (" + bare + "=VALUE)");
        }
    }
    return val;
}

LAB_INLINE void Args::fail(const char*, const std::string& msg) {
    if (error_.empty()) error_ = msg;
}

LAB_INLINE void Args::add_usage(const char* name, const char* type, const std::string& def, const std::string& range,
                                const char* help) {
    std::string left = std::string("  --") + name + (*type ? std::string("=") + type : "");
    if (left.size() < 20) left.resize(20, ' ');
    else left += ' ';
    std::string line = left + help;
    if (!def.empty()) line += " (default " + def + (range.empty() ? "" : ", range " + range) + ")";
    usage_lines_.push_back(line + "\n");
}

#endif  // LAB_COMMON_BODIES
