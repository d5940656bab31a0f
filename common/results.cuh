// results.cuh - the version table of a benchmark program: check every version, time every version
// the same way, print an aligned table or real CSV.
//
// A program lists its versions (name, launch, work per launch) and how to check one; the kernels
// and their launches stay in the program, the table plumbing lives here. Results registers two
// options, so construct it before args.parse_or_exit():
//     --csv=FILE    also write the table as CSV to FILE: a header row, then one row per version, with the GPU, compute capability, driver and CUDA versions and
//                   the program's parameters as columns (plot scripts and `make results` read it)
//     --only=REGEX  check and time only the versions whose name matches (e.g. for ncu -k): a POSIX
//                   extended regular expression (grep -E: ^ $ . [..] * + ? | ( )), found anywhere
//                   in the name, e.g. --only='^uniform' or --only='serial|8 streams'
//
//   Results table(args, "transpose", Results::GBPS);
//   args.parse_or_exit();
//   DeviceInfo dev = select_device(args.device());
//   table.param("rows", rows);                                // a column in the CSV
//   table.baseline_d2d(bytes);                                // the cudaMemcpy D2D row, "% of D2D"
//   table.add("naive", [&] { naive<<<g, b>>>(...); }, 2.0 * bytes, check);
//   table.speedup_over("naive");                              // optional "x naive" column
//   table.column("% of peak", "pct_of_peak", fn, "%.1f%%");   // optional extra column (printed and CSV)
//   table.add("offset 3", ...).param("offset", 3);            // a sweep: a CSV column of this row
//   table.run(verdict, reps);                                 // checks all, then times all, prints
//
// check is a function (Verdict&, const std::string& name) that copies the result back and compares
// it; run() calls prepare() (if given, e.g. a memset to 0xff so that an unwritten result fails),
// launch() once, then check, for every selected version before timing any of them. Timing is
// bench_ms (warm-up, median of `reps` CUDA-event timings) on the default stream; a version whose
// `reset` is set is timed with bench_ms_fresh (reset() before every timed launch, outside the timing);
// one marked host_timed(stream) by the host clock around launch + stream synchronization. A version's
// `setup` (a device state it needs) runs before its check and again before its timing.
// Work counts bytes read + written (GBPS), floating-point (GFLOPS) or integer (GOPS) operations per launch.
#pragma once
#include <algorithm>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include <regex.h>  // POSIX regcomp/regexec: compiles in a blink, unlike <regex>
#include <cuda_runtime.h>
#include "args.h"
#include "build_mode.h"
#include "check.cuh"
#include "compare.h"
#include "device.cuh"
#include "timer.cuh"

class Results {
  public:
    enum Unit { GBPS, GFLOPS, TIME_ONLY, GOPS };  // GOPS: integer operations per second
    using Launch = std::function<void()>;
    using Check = std::function<void(Verdict&, const std::string&)>;

    struct Version {
        std::string name;
        Launch launch;
        double work = 0;        // bytes (GBPS) or operations (GFLOPS, GOPS) per launch
        Check check;            // empty: not checked here (e.g. the program checks it elsewhere)
        Launch prepare;         // run once before the checking launch (not timed)
        bool baseline = false;  // the reference row the "% of" column divides by
        bool ceiling = false;   // a bound to compare with (a plain copy), not a version of the lesson:
                                // never the best version (best(), the results summary); CSV baseline 2
        double ms = -1;         // median time, filled by run()
        Launch reset{};         // if set: run (untimed) before every timed launch, to re-create the
                                // state a first run starts from (bench_ms_fresh); set it on add()'s result
        Launch setup{};         // if set: run once before this version is checked and once before it is
                                // timed: a device state the version needs (an L2 set-aside, a window)
        cudaStream_t wall = nullptr;  // with host_timed(): the stream its launch works on
        bool host_clock = false;
        // Time this version by the host's clock around launch() + cudaStreamSynchronize(stream)
        // instead of CUDA events: for a launch whose cost is partly on the host (cudaMalloc, cudaFree).
        Version& host_timed(cudaStream_t stream) {
            host_clock = true;
            wall = stream;
            return *this;
        }
        Version& as_ceiling() {  // see `ceiling` above: timed and checked, never best()
            ceiling = true;
            return *this;
        }
        std::vector<std::pair<std::string, std::string>> row = {};  // this row's own CSV parameters
        double rate() const { return ms > 0 ? work / (ms * 1e6) : 0.0; }  // GB/s, GFLOP/s or GOP/s
        // A parameter of this row only (a sweep: the offset, the transfer size): one CSV column,
        // empty in the rows that do not set it.
        template <class T>
        Version& param(const std::string& name, T value) {
            row.push_back({name, to_text(value)});
            return *this;
        }
    };
    // An extra printed column (and CSV column `key`) computed from a timed version: "% of peak",
    // "x CPU", the book's figure. A NaN value prints as "-" and leaves the CSV cell empty.
    using Column = std::function<double(const Version&)>;

    Results(Args& args, std::string program, Unit unit = GBPS);

    // Call after parse_or_exit() and before select_device(); exits 2 on a bad --only pattern.
    // (run() calls it too, for programs that forget.)
    void validate() const;

    // A parameter of the run (a size, a mode): one CSV column.
    template <class T>
    void param(const std::string& name, T value) {
        params_.push_back({name, to_text(value)});
    }

    Version& add(std::string name, Launch launch, double work, Check check = {}, Launch prepare = {});

    // The baseline row, timed like the versions: ratios are printed as "% of <name>".
    Version& baseline(std::string name, Launch launch, double work, Check check = {});

    // cudaMemcpy device-to-device of `bytes` bytes as the baseline (2 x bytes moved): the practical
    // ceiling of a kernel that streams memory. Its buffers are allocated here and freed at exit.
    void baseline_d2d(size_t bytes);

    // Adds a column "x <name>": how many times faster than that version each row is.
    void speedup_over(const std::string& name) { speedup_ref_ = name; }

    // Adds a column after the standard ones, e.g.
    //   table.column("% of peak", "pct_of_peak", [&](auto& v) { return 100 * v.rate() / dev.peak_gbps; }, "%.1f%%");
    void column(std::string head, std::string key, Column value, std::string format = "%.2f");

    // Times and writes the CSV as usual but prints no table: for a sweep of many rows that the
    // program summarises itself (from find()).
    void quiet() { print_ = false; }

    bool selected(const Version& v) const;

    // Checks every selected version, then times them, then prints the table (or writes the CSV).
    void run(Verdict& verdict, int reps, int warmup = 2);

    // After run(): a version by name (nullptr if absent or not selected).
    const Version* find(const std::string& name) const;
    const Version* base() const;
    // The fastest version that is neither the baseline nor a ceiling (as_ceiling): highest rate (lowest time for TIME_ONLY).
    const Version* best() const;
    const std::deque<Version>& versions() const { return versions_; }

    ~Results();
    Results(const Results&) = delete;
    Results& operator=(const Results&) = delete;

    template <class T>
    static std::string to_text(T v) {
        if constexpr (std::is_convertible<T, std::string>::value) return std::string(v);
        else if constexpr (std::is_floating_point<T>::value) {
            char b[64];
            std::snprintf(b, sizeof b, "%g", (double)v);
            return b;
        } else return std::to_string(v);
    }

  private:
    struct ExtraColumn {
        std::string head, key;
        Column value;
        std::string format;
    };

    // Median host wall-clock time of launch() + cudaStreamSynchronize, after warm-up runs; reset()
    // (if set) runs before each, untimed.
    static double host_ms(const Version& v, int reps, int warmup);
    const char* rate_name() const;
    void print() const;
    static int col_width(const ExtraColumn& c);
    static std::string cell(const ExtraColumn& c, const Version& v, const char* missing);
    static std::string short_name(const std::string& n);
    static std::string csv_field(const std::string& s);
    void write_csv() const;

    std::string program_, csv_, only_, speedup_ref_;
    Unit unit_;
    bool print_ = true;
    std::vector<ExtraColumn> columns_;
    regex_t only_re_{};
    bool has_re_ = false;
    bool bad_only_ = false;
    std::vector<std::pair<std::string, std::string>> params_;
    std::deque<Version> versions_;  // a deque: add() returns references that stay valid
    std::unique_ptr<D2DCopy> d2d_;  // the baseline_d2d buffers (timer.cuh)
};

// ---- the bodies: inline here (header-only), or compiled once into the library (build_mode.h) ----
#if LAB_COMMON_BODIES
LAB_INLINE Results::Results(Args& args, std::string program, Unit unit) : program_(std::move(program)), unit_(unit) {
    csv_ = args.text("csv", "", "also write the results table as CSV to FILE");
    only_ = args.text("only", "", "check and time only the versions whose name matches this POSIX extended regex");
    if (!only_.empty()) {
        has_re_ = regcomp(&only_re_, only_.c_str(), REG_EXTENDED | REG_NOSUB) == 0;
        bad_only_ = !has_re_;  // reported by validate(), before any CUDA call
    }
}

LAB_INLINE void Results::validate() const {
    if (bad_only_) {
        std::fprintf(stderr, "%s: error: --only='%s' is not a valid (POSIX extended) regular expression\n", program_.c_str(),
                     only_.c_str());
        std::exit(2);
    }
}

LAB_INLINE Results::Version& Results::add(std::string name, Launch launch, double work, Check check, Launch prepare) {
    versions_.push_back({std::move(name), std::move(launch), work, std::move(check), std::move(prepare)});
    return versions_.back();
}

LAB_INLINE Results::Version& Results::baseline(std::string name, Launch launch, double work, Check check) {
    Version& v = add(std::move(name), std::move(launch), work, std::move(check));
    v.baseline = true;
    return v;
}

LAB_INLINE void Results::baseline_d2d(size_t bytes) {
    d2d_ = std::make_unique<D2DCopy>(bytes);
    baseline("cudaMemcpy D2D", [this] { (*d2d_)(); }, 2.0 * bytes);
}

LAB_INLINE void Results::column(std::string head, std::string key, Column value, std::string format) {
    columns_.push_back({std::move(head), std::move(key), std::move(value), std::move(format)});
}

LAB_INLINE bool Results::selected(const Version& v) const {
    return v.baseline || only_.empty() || regexec(&only_re_, v.name.c_str(), 0, nullptr, 0) == 0;
}

LAB_INLINE void Results::run(Verdict& verdict, int reps, int warmup) {
    validate();
    for (auto& v : versions_) {
        if (!selected(v) || !v.check) continue;
        if (v.setup) v.setup();
        if (v.prepare) v.prepare();
        v.launch();
        CHECK_LAUNCH();
        CHECK(cudaDeviceSynchronize());
        v.check(verdict, v.name);
    }
    for (auto& v : versions_) {
        if (!selected(v)) continue;
        if (v.setup) v.setup();
        v.ms = v.host_clock ? host_ms(v, reps, warmup)
               : v.reset    ? bench_ms_fresh(v.reset, v.launch, reps, warmup)
                            : bench_ms(v.launch, reps, warmup);
    }
    if (print_) print();
    if (!csv_.empty()) write_csv();
}

LAB_INLINE const Results::Version* Results::find(const std::string& name) const {
    for (auto& v : versions_)
        if (v.name == name && v.ms > 0) return &v;
    return nullptr;
}

LAB_INLINE const Results::Version* Results::base() const {
    for (auto& v : versions_)
        if (v.baseline && v.ms > 0) return &v;
    return nullptr;
}

LAB_INLINE const Results::Version* Results::best() const {
    const Version* b = nullptr;
    for (auto& v : versions_)
        if (!v.baseline && !v.ceiling && v.ms > 0 && (!b || (unit_ == TIME_ONLY ? v.ms < b->ms : v.rate() > b->rate())))
            b = &v;
    return b;
}

LAB_INLINE Results::~Results() {
    if (has_re_) regfree(&only_re_);
}

LAB_INLINE double Results::host_ms(const Version& v, int reps, int warmup) {
    std::vector<double> t;
    for (int r = 0; r < warmup + reps; ++r) {
        if (v.reset) v.reset();
        CHECK(cudaStreamSynchronize(v.wall));
        CpuTimer cpu;
        v.launch();
        CHECK(cudaStreamSynchronize(v.wall));
        double ms = cpu.stop_ms();
        CHECK(cudaGetLastError());
        if (r >= warmup) t.push_back(ms);
    }
    return median(t);
}

LAB_INLINE const char* Results::rate_name() const {
    return unit_ == GBPS ? "GB/s" : unit_ == GFLOPS ? "GFLOP/s" : unit_ == GOPS ? "GOP/s" : "";
}

LAB_INLINE void Results::print() const {
    const Version* b = base();
    const Version* sref = speedup_ref_.empty() ? nullptr : find(speedup_ref_);
    double max_ms = 0;
    size_t w = 7;
    for (auto& v : versions_) {
        if (v.ms > max_ms) max_ms = v.ms;
        if (v.ms > 0) w = std::max(w, v.name.size());
    }
    bool us = max_ms < 10.0;  // microseconds read better for short kernels
    std::printf("\n%-*s %10s", (int)w, "version", us ? "time us" : "time ms");
    if (unit_ != TIME_ONLY) std::printf(" %10s", rate_name());
    if (b && unit_ != TIME_ONLY) std::printf(" %9s", ("% of " + short_name(b->name)).c_str());
    if (sref) std::printf(" %9s", ("x " + short_name(sref->name)).c_str());
    for (auto& c : columns_) std::printf(" %*s", col_width(c), c.head.c_str());
    std::printf("\n");
    for (auto& v : versions_) {
        if (v.ms <= 0) continue;
        std::printf("%-*s %10.*f", (int)w, v.name.c_str(), us ? 1 : 3, us ? 1e3 * v.ms : v.ms);
        if (unit_ != TIME_ONLY) std::printf(" %10.1f", v.rate());
        if (b && unit_ != TIME_ONLY) std::printf(" %8.1f%%", 100.0 * v.rate() / b->rate());
        if (sref) std::printf(" %8.2fx", sref->ms / v.ms);
        for (auto& c : columns_) std::printf(" %*s", col_width(c), cell(c, v, "-").c_str());
        std::printf("\n");
    }
}

LAB_INLINE int Results::col_width(const ExtraColumn& c) { return (int)std::max<size_t>(9, c.head.size()); }
LAB_INLINE std::string Results::cell(const ExtraColumn& c, const Version& v, const char* missing) {
    double x = c.value(v);
    if (x != x) return missing;  // NaN: no value for this row
    char b[64];
    std::snprintf(b, sizeof b, c.format.c_str(), x);
    return b;
}

LAB_INLINE std::string Results::short_name(const std::string& n) {
    if (n.rfind("cudaMemcpy D2D", 0) == 0) return "D2D";
    size_t from = n.find_first_not_of("0123456789") == n.find(' ') ? n.find(' ') + 1 : 0;  // "2 sync_staging"
    std::string s = n.substr(from, n.find(' ', from) - from);
    return s.size() > 7 ? s.substr(0, 7) : s;
}

LAB_INLINE std::string Results::csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

LAB_INLINE void Results::write_csv() const {
    FILE* f = std::fopen(csv_.c_str(), "w");
    if (!f) {
        std::fprintf(stderr, "warning: could not write '%s'\n", csv_.c_str());
        return;
    }
    int dev = 0, driver = 0, runtime = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDriverGetVersion(&driver));
    CHECK(cudaRuntimeGetVersion(&runtime));
    cudaDeviceProp p{};  // the real GPU's, not a CUDA_LAB_PROFILE's: the figures are measured on it
    CHECK(cudaGetDeviceProperties(&p, dev));
    const Version* b = base();
    const Version* sref = speedup_ref_.empty() ? nullptr : find(speedup_ref_);
    std::string unit = unit_ == GBPS ? "gbps" : unit_ == GFLOPS ? "gflops" : unit_ == GOPS ? "gops" : "none";
    std::fprintf(f, "gpu,cc,driver,cuda,program");
    std::vector<std::string> row_keys;  // the union of the rows' own parameters, in first-seen order
    for (auto& v : versions_)
        for (auto& kv : v.row)
            if (std::find(row_keys.begin(), row_keys.end(), kv.first) == row_keys.end()) row_keys.push_back(kv.first);
    for (auto& kv : params_) std::fprintf(f, ",%s", csv_field(kv.first).c_str());
    for (auto& k : row_keys) std::fprintf(f, ",%s", csv_field(k).c_str());
    std::fprintf(f, ",version,baseline,ms,rate,unit,pct_of_baseline,speedup");
    for (auto& c : columns_) std::fprintf(f, ",%s", csv_field(c.key).c_str());
    std::fprintf(f, "\n");
    for (auto& v : versions_) {
        if (v.ms <= 0) continue;
        std::fprintf(f, "%s,%d.%d,%d.%d,%d.%d,%s", csv_field(p.name).c_str(), p.major, p.minor, driver / 1000,
                     driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10, program_.c_str());
        for (auto& kv : params_) std::fprintf(f, ",%s", csv_field(kv.second).c_str());
        for (auto& k : row_keys) {
            auto it = std::find_if(v.row.begin(), v.row.end(), [&](auto& kv) { return kv.first == k; });
            std::fprintf(f, ",%s", it == v.row.end() ? "" : csv_field(it->second).c_str());
        }
        std::fprintf(f, ",%s,%d,%.6f,%.3f,%s,", csv_field(v.name).c_str(), v.baseline ? 1 : v.ceiling ? 2 : 0, v.ms, v.rate(),
                     unit.c_str());
        if (b && unit_ != TIME_ONLY) std::fprintf(f, "%.2f", 100.0 * v.rate() / b->rate());
        std::fprintf(f, ",");
        if (sref) std::fprintf(f, "%.3f", sref->ms / v.ms);
        for (auto& c : columns_) {
            double x = c.value(v);
            if (x == x) std::fprintf(f, ",%.6g", x);
            else std::fprintf(f, ",");
        }
        std::fprintf(f, "\n");
    }
    std::fclose(f);
    std::printf("  wrote %s\n", csv_.c_str());
}
#endif  // LAB_COMMON_BODIES
