// Host-side unit tests of common/: argument parsing, result comparison, the CUDA_LAB_CORRUPT hook,
// random data, the host-side timing helpers, image fallback, the device profiles' table. No GPU needed. `test_common --list` names the cases; `test_common CASE` runs one
// (exit 0 pass, 1 fail, 77 skip). `test_common args ...` parses its arguments like a program
// and `test_common image PATH` loads an image, `test_common profile` reads CUDA_LAB_PROFILE as
// select_device() does, so tests/test_common.py can check exit codes.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>
// Every header of common/ (image.h below), compiled header-only (common/build_mode.h): what a program
// built on its own with the nvcc line at its top gets. The Makefiles build the programs with the
// separate mode, so this is where the header-only one is compiled (with g++ -Wall -Wextra -Werror).
#include "common.cuh"
#include "results.cuh"
#ifndef NO_OPENCV
#include "image.h"
#endif

static int failures = 0;
#define EXPECT(cond)                                                          \
    do {                                                                      \
        if (!(cond)) {                                                        \
            std::printf("%s:%d: expectation failed: %s\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                       \
        }                                                                     \
    } while (0)

struct Argv {  // builds a mutable argv from strings
    std::vector<std::string> s;
    std::vector<char*> p;
    Argv(std::initializer_list<const char*> a) {
        s.push_back("prog");
        for (auto x : a) s.push_back(x);
        for (auto& x : s) p.push_back(&x[0]);
    }
    int argc() { return static_cast<int>(p.size()); }
    char** argv() { return p.data(); }
};

static std::string parse_error(std::initializer_list<const char*> a) {
    Argv v(a);
    Args args(v.argc(), v.argv(), "test");
    args.integer("n", 10, 1, 1000, "size");
    args.real("x", 0.5, 0.0, 1.0, "fraction");
    args.flag("csv", "csv");
    args.text("image", "", "path");
    return args.first_error();
}

static void args_values() {
    Argv v({"--n=2^8", "--x=0.25", "--csv", "--image=a.png", "--device=1"});
    Args a(v.argc(), v.argv(), "test");
    EXPECT(a.integer("n", 10, 1, 1000, "") == 256);
    EXPECT(a.real("x", 0.5, 0, 1, "") == 0.25);
    EXPECT(a.flag("csv", ""));
    EXPECT(a.text("image", "", "") == "a.png");
    EXPECT(a.device() == 1);
    EXPECT(a.first_error().empty());
}

static void args_defaults() {
    Argv v({});
    Args a(v.argc(), v.argv(), "test");
    EXPECT(a.integer("n", 10, 1, 1000, "") == 10);
    EXPECT(!a.flag("csv", ""));
    EXPECT(a.first_error().empty());
    EXPECT(a.usage().find("--n=INT") != std::string::npos);
    EXPECT(a.usage().find("default 10, range 1..1000") != std::string::npos);
}

static void args_errors() {
    EXPECT(parse_error({"--n=0"}).find("out of range") != std::string::npos);
    EXPECT(parse_error({"--n=-3"}).find("out of range") != std::string::npos);
    EXPECT(parse_error({"--n=1001"}).find("out of range") != std::string::npos);
    EXPECT(parse_error({"--n=99999999999999999999999"}).find("out of range") != std::string::npos);
    EXPECT(parse_error({"--n=2^70"}).find("out of range") != std::string::npos);
    EXPECT(parse_error({"--n=12abc"}).find("expects an integer") != std::string::npos);
    EXPECT(parse_error({"--n="}).find("expects an integer") != std::string::npos);
    EXPECT(parse_error({"--n=3^2"}).find("expects an integer") != std::string::npos);
    EXPECT(parse_error({"--n"}).find("needs a value") != std::string::npos);
    EXPECT(parse_error({"--x=nan"}).find("expects a number") != std::string::npos);
    EXPECT(parse_error({"--x=1.5"}).find("out of range") != std::string::npos);
    EXPECT(parse_error({"--csv=1"}).find("takes no value") != std::string::npos);
    EXPECT(parse_error({"--bogus=1"}) == "unknown option '--bogus'");
    EXPECT(parse_error({"stray"}).find("unexpected argument") != std::string::npos);
    EXPECT(parse_error({"--n=5", "--x=0.1"}).empty());
}

static void compare_exact() {
    std::vector<int> a{1, 2, 3, 4}, b{1, 2, 3, 4}, c{1, 9, 3, 8};
    Verdict v;
    EXPECT(v.exact("same", a.data(), b.data(), a.size()));
    EXPECT(v.ok());
    EXPECT(!v.exact("differ", a.data(), c.data(), a.size()));
    EXPECT(!v.ok());
    EXPECT(v.first_failure() == "differ: 2 of 4 differ, first [1] expected 2 got 9, [3] expected 4 got 8");
    std::vector<unsigned char> u{200}, w{201};
    Verdict v2;
    v2.exact("bytes", u.data(), w.data(), 1);
    EXPECT(v2.first_failure().find("expected 200 got 201") != std::string::npos);  // numbers, not chars
}

static void compare_close() {
    std::vector<float> e{1.0f, 100.0f, -2.0f}, g{1.0005f, 100.05f, -2.0f};
    Verdict v;
    EXPECT(v.close("tol", e.data(), g.data(), e.size(), 1e-3, 1e-3));
    EXPECT(!v.close("tight", e.data(), g.data(), e.size(), 1e-6, 1e-6));
    std::vector<float> n{std::nanf("")};
    EXPECT(!v.close("nan", e.data(), n.data(), 1, 1.0, 1.0));
    EXPECT(v.finish() == 1);
    Verdict ok;
    EXPECT(ok.check(true, "cond") && ok.finish() == 0);
    // Floating point is shown with 9 significant digits, as an ostream with precision(9) prints it.
    std::vector<float> far{1.0005f, 100.0f, 1e30f};
    std::vector<double> d{0.1, -2.0}, dn{std::nan(""), -HUGE_VAL};
    Verdict t;
    t.close("floats", e.data(), far.data(), 3, 0.0, 0.0);
    EXPECT(t.first_failure() == "floats: 2 of 3 differ, first [0] expected 1 got 1.00049996, [2] expected -2 got 1.00000002e+30");
    Verdict t2;
    t2.exact("doubles", d.data(), dn.data(), 2);
    EXPECT(t2.first_failure() == "doubles: 2 of 2 differ, first [0] expected 0.1 got nan, [1] expected -2 got -inf");
}

// CUDA_LAB_CORRUPT (corrupt.h) on: every exact() / close() fails, whatever the type and tolerance,
// and lab_corrupt() changes exactly one element. The buffers compared are never modified.
static void corrupt_on() {
    lab_corrupt_on() = true;
    std::vector<int> a{1, 2, 3, 4, 5};
    Verdict v;
    EXPECT(!v.exact("int", a.data(), a.data(), a.size()));
    EXPECT(v.first_failure() == "int: 1 of 5 differ, first [2] expected 3 got 4");  // off by one
    EXPECT(a[2] == 3);
    std::vector<int> one{std::numeric_limits<int>::max()};
    EXPECT(!Verdict().exact("int max", one.data(), one.data(), 1));  // no overflow: max - 1
    std::vector<unsigned char> px{0, 128, 255};
    EXPECT(!Verdict().exact("bytes", px.data(), px.data(), px.size()));
    EXPECT(!Verdict().close("bytes +-1", px.data(), px.data(), px.size(), 1.0, 0.0));  // +1 is within: far value
    EXPECT(!Verdict().close("bytes +-100", px.data(), px.data(), px.size(), 100.0, 0.0));
    EXPECT(Verdict().close("bytes +-254", px.data(), px.data(), px.size(), 254.0, 0.0));  // cannot fail: the test sees it
    std::vector<float> f{1.0f, -2.5f, 1e30f};
    EXPECT(!Verdict().exact("float", f.data(), f.data(), f.size()));
    EXPECT(!Verdict().close("float rtol 1e-3", f.data(), f.data(), f.size(), 1e-3, 1e-3));
    EXPECT(!Verdict().close("float rtol 1e6", f.data(), f.data(), f.size(), 0.0, 1e6));  // far is within: NaN
    std::vector<double> d{0.0};
    EXPECT(!Verdict().close("double, one element", d.data(), d.data(), 1, 1e-9, 0.0));
    std::vector<long long> wrong{7, 9, 9}, right{7, 0, 9};
    Verdict w;  // an element that already differs stays as it is: still exactly one mismatch
    EXPECT(!w.exact("already wrong", right.data(), wrong.data(), wrong.size()));
    EXPECT(w.first_failure() == "already wrong: 1 of 3 differ, first [1] expected 0 got 9");
    std::vector<unsigned> u{10, 20, 30, 40};
    lab_corrupt(u.data(), u.size());
    EXPECT(u[0] == 10 && u[1] == 20 && u[2] == 31 && u[3] == 40);
    std::vector<float> g{1.0f, 2.0f};
    lab_corrupt(g.data(), g.size());
    EXPECT(g[0] == 1.0f && std::fabs(g[1] - 2.0f) > 1000.0f);
    bool flag = true;
    lab_corrupt(&flag, 1);
    EXPECT(!flag);
    lab_corrupt(g.data(), 0);  // an empty range: nothing to corrupt, no crash
}

// Off (the default): exact() / close() and lab_corrupt() behave as if the hook did not exist.
static void corrupt_off() {
    lab_corrupt_on() = false;
    std::vector<int> a{1, 2, 3, 4, 5};
    std::vector<float> f{1.0f, -2.5f};
    Verdict v;
    EXPECT(v.exact("int", a.data(), a.data(), a.size()));
    EXPECT(v.close("float", f.data(), f.data(), f.size(), 0.0, 0.0));
    EXPECT(v.finish() == 0);
    lab_corrupt(a.data(), a.size());
    lab_corrupt(f.data(), f.size());
    EXPECT(a == std::vector<int>({1, 2, 3, 4, 5}) && f[1] == -2.5f);
}

// The variable: set and not empty and not "0" turns the hook on.
static void corrupt_env() {
    unsetenv("CUDA_LAB_CORRUPT");
    EXPECT(!lab_corrupt_env());
    setenv("CUDA_LAB_CORRUPT", "", 1);
    EXPECT(!lab_corrupt_env());
    setenv("CUDA_LAB_CORRUPT", "0", 1);
    EXPECT(!lab_corrupt_env());
    setenv("CUDA_LAB_CORRUPT", "1", 1);
    EXPECT(lab_corrupt_env());
    setenv("CUDA_LAB_CORRUPT", "yes", 1);
    EXPECT(lab_corrupt_env());
}

static void random_data() {
    auto a = random_vector<int>(1000, -5, 5, 1), b = random_vector<int>(1000, -5, 5, 1);
    auto c = random_vector<int>(1000, -5, 5, 2);
    EXPECT(a == b);  // seeded: reproducible
    EXPECT(a != c);
    int lo = 99, hi = -99, zeros = 0;
    for (int x : a) lo = std::min(lo, x), hi = std::max(hi, x), zeros += x == 0;
    EXPECT(lo == -5 && hi == 5);
    EXPECT(zeros < 200);
    auto f = random_vector<float>(1000, 1.0f, 2.0f, 3);
    for (float x : f) EXPECT(x >= 1.0f && x < 2.0f);
    // The numbers are those of one std::mt19937(seed) through uniform_real_distribution<double> or
    // uniform_int_distribution<long long>, converted to the element type (what random.h always
    // drew; its RandomStream draws them in chunks, so sizes past a chunk are compared).
    std::mt19937 gen(7);
    std::uniform_real_distribution<double> real(-1.0, 3.0);
    auto r = random_vector<float>(2500, -1.0f, 3.0f, 7);
    bool same = true;
    for (float x : r) same = same && x == static_cast<float>(real(gen));
    EXPECT(same);
    std::mt19937 gen2(2024);
    std::uniform_int_distribution<long long> integer(0, 255);
    auto u = random_vector<unsigned char>(3000, 0, 255);
    same = true;
    for (unsigned char x : u) same = same && x == static_cast<unsigned char>(integer(gen2));
    EXPECT(same);
}

// timer.cuh's host side: the median, the host clock, and FnRef calling what it refers to.
static void timer_host() {
    EXPECT(median({}) == 0.0 && median({3, 1, 2}) == 2.0 && median({4, 1, 3, 2}) == 2.5);
    CpuTimer t;
    double a = t.stop_ms(), b = t.stop_ms();
    EXPECT(a >= 0.0 && b >= a && b < 60e3);
    int calls = 0;
    auto add = [&] { ++calls; };
    const auto twice = [&] { calls += 2; };
    std::vector<FnRef> fns{add, twice, [&] { calls += 10; }};
    for (auto& f : fns) f();
    EXPECT(calls == 13 && fns[0] && !FnRef());
    EXPECT(Results::to_text(0.5) == "0.5" && Results::to_text(42) == "42" && Results::to_text("x") == "x");
}

#ifndef NO_OPENCV
static void image_fallback() {
    cv::Mat a = load_image("", 97, 61), b = load_image("", 97, 61);
    EXPECT(a.cols == 97 && a.rows == 61 && a.type() == CV_8UC3);
    EXPECT(cv::norm(a, b, cv::NORM_INF) == 0);  // deterministic
    double mn, mx;
    cv::minMaxLoc(a.reshape(1), &mn, &mx);
    EXPECT(mx - mn > 200);  // not a constant image
    cv::Mat g = load_image("", 64, 48, CV_8UC1);
    EXPECT(g.type() == CV_8UC1 && g.cols == 64 && g.rows == 48);
}
#endif

// A note prints but does not decide the verdict: a failed note leaves PASSED, a failed check does not.
static void compare_note() {
    Verdict v;
    v.note(false, "the host's own input");
    EXPECT(v.ok());
    EXPECT(v.finish() == 0);
    v.check(false, "a GPU count");
    EXPECT(!v.ok());
    EXPECT(v.first_failure() == "a GPU count");
}


// common/profiles.h parses into the five profiles, each with every attribute (device.cuh), and a
// malformed table is refused with the line and the reason.
static void profiles_parse() {
    std::string error;
    std::vector<DeviceProfile> all = parse_profiles(lab_profiles::kTable, &error);
    EXPECT(error.empty());
    std::vector<std::string> keys;
    for (auto& p : all) keys.push_back(p.key);
    EXPECT((keys == std::vector<std::string>{"t4", "rtx3060-laptop-wsl", "rtx4090", "a100", "gtx1650"}));
    for (auto& p : all) {
        EXPECT(!p.gpu.empty() && !p.where.empty());
        for (auto& a : profile_attributes()) EXPECT(p.has(a));
        EXPECT(p.get("major") >= 7 && p.get("totalGlobalMem") >= (4LL << 30));
    }
    if (all.size() == 5) {
        EXPECT(all[0].gpu == "Tesla T4" && all[0].get("major") == 7 && all[0].get("minor") == 5);
        EXPECT(all[1].get("concurrentManagedAccess") == 0 && all[1].get("ipcEventSupported") == 0);  // WSL 2
        EXPECT(all[4].get("totalGlobalMem") == (4LL << 30));
    }
    const std::string head = "source s https://example.com/x  a source\nprofile p  GPU | where\n";
    std::string full;
    for (auto& a : profile_attributes()) full += "p " + a + " 1 s\n";
    EXPECT(parse_profiles(head + full, &error).size() == 1);
    auto refused = [&](const std::string& table, const char* why) {
        error.clear();
        bool empty = parse_profiles(table, &error).empty();
        if (!empty || error.find(why) == std::string::npos) std::printf("  table not refused for '%s': '%s'\n", why, error.c_str());
        return empty && error.find(why) != std::string::npos;
    };
    EXPECT(refused(head + full + "p major 7 s\n", "twice"));
    EXPECT(refused(head + "p major 7 nowhere\n" + full, "is not listed"));
    EXPECT(refused(head + "p major 7 unpublished\n" + full, "unpublished needs a note"));
    EXPECT(refused(head + "p warpSize 32 s\n" + full, "unknown attribute"));
    EXPECT(refused(head + "p major seven s\n" + full, "is not a count"));
    EXPECT(refused(head + "q major 7 s\n", "is not the profile above"));
    EXPECT(refused(head, "has no major"));
    EXPECT(refused("source s http://example.com  plain http\n", "https"));
}

// Every value of every profile reaches DeviceInfo::prop (apply_profile, what device_info() does)
// and device_attribute() (profile_attribute): each attribute of profile_attributes() has its check
// below, so an attribute added to the table without being applied fails here. The real GPU is
// made up with values no profile has, so a value left at the real GPU's shows.
static void profiles_applied() {
    std::string error;
    std::vector<DeviceProfile> all = parse_profiles(lab_profiles::kTable, &error);
    EXPECT(!all.empty());
    cudaDeviceProp real{};
    std::snprintf(real.name, sizeof real.name, "%s", "Made-up GPU");
    real.major = 9, real.minor = 0, real.totalGlobalMem = 3ull << 40, real.multiProcessorCount = 999;
    real.sharedMemPerBlock = 7777, real.sharedMemPerBlockOptin = 77777, real.sharedMemPerMultiprocessor = 777777;
    real.reservedSharedMemPerBlock = 1024, real.l2CacheSize = 50 << 20, real.persistingL2CacheMaxSize = 30 << 20;
    real.accessPolicyMaxWindowSize = 1 << 27, real.maxThreadsPerMultiProcessor = 9999;
    real.maxBlocksPerMultiProcessor = 999, real.regsPerMultiprocessor = 99999, real.memoryBusWidth = 9999;
    real.clusterLaunch = 7, real.managedMemory = 7, real.concurrentManagedAccess = 7, real.pageableMemoryAccess = 7;
    real.pageableMemoryAccessUsesHostPageTables = 7, real.hostNativeAtomicSupported = 7, real.canMapHostMemory = 7;
    real.unifiedAddressing = 7, real.asyncEngineCount = 7, real.concurrentKernels = 7, real.memoryPoolsSupported = 7;
    real.ipcEventSupported = 7;
    using F = std::function<long long(const DeviceInfo&)>;
    const std::map<std::string, std::pair<F, cudaDeviceAttr>> fields = {
        {"major", {[](const DeviceInfo& d) { return (long long)d.prop.major; }, cudaDevAttrComputeCapabilityMajor}},
        {"minor", {[](const DeviceInfo& d) { return (long long)d.prop.minor; }, cudaDevAttrComputeCapabilityMinor}},
        {"totalGlobalMem", {[](const DeviceInfo& d) { return (long long)d.prop.totalGlobalMem; }, cudaDevAttrMax}},
        {"multiProcessorCount", {[](const DeviceInfo& d) { return (long long)d.prop.multiProcessorCount; },
                                 cudaDevAttrMultiProcessorCount}},
        {"sharedMemPerBlock", {[](const DeviceInfo& d) { return (long long)d.prop.sharedMemPerBlock; },
                               cudaDevAttrMaxSharedMemoryPerBlock}},
        {"sharedMemPerBlockOptin", {[](const DeviceInfo& d) { return (long long)d.prop.sharedMemPerBlockOptin; },
                                    cudaDevAttrMaxSharedMemoryPerBlockOptin}},
        {"sharedMemPerMultiprocessor", {[](const DeviceInfo& d) { return (long long)d.prop.sharedMemPerMultiprocessor; },
                                        cudaDevAttrMaxSharedMemoryPerMultiprocessor}},
        {"l2CacheSize", {[](const DeviceInfo& d) { return (long long)d.prop.l2CacheSize; }, cudaDevAttrL2CacheSize}},
        {"maxThreadsPerMultiProcessor", {[](const DeviceInfo& d) { return (long long)d.prop.maxThreadsPerMultiProcessor; },
                                         cudaDevAttrMaxThreadsPerMultiProcessor}},
        {"maxBlocksPerMultiProcessor", {[](const DeviceInfo& d) { return (long long)d.prop.maxBlocksPerMultiProcessor; },
                                        cudaDevAttrMaxBlocksPerMultiprocessor}},
        {"regsPerMultiprocessor", {[](const DeviceInfo& d) { return (long long)d.prop.regsPerMultiprocessor; },
                                   cudaDevAttrMaxRegistersPerMultiprocessor}},
        {"memoryClockRate", {nullptr, cudaDevAttrMemoryClockRate}},  // not a cudaDeviceProp field in CUDA 13
        {"memoryBusWidth", {[](const DeviceInfo& d) { return (long long)d.prop.memoryBusWidth; },
                            cudaDevAttrGlobalMemoryBusWidth}},
        {"clusterLaunch", {[](const DeviceInfo& d) { return (long long)d.prop.clusterLaunch; }, cudaDevAttrClusterLaunch}},
        {"managedMemory", {[](const DeviceInfo& d) { return (long long)d.prop.managedMemory; }, cudaDevAttrManagedMemory}},
        {"concurrentManagedAccess", {[](const DeviceInfo& d) { return (long long)d.prop.concurrentManagedAccess; },
                                     cudaDevAttrConcurrentManagedAccess}},
        {"pageableMemoryAccess", {[](const DeviceInfo& d) { return (long long)d.prop.pageableMemoryAccess; },
                                  cudaDevAttrPageableMemoryAccess}},
        {"pageableMemoryAccessUsesHostPageTables",
         {[](const DeviceInfo& d) { return (long long)d.prop.pageableMemoryAccessUsesHostPageTables; },
          cudaDevAttrPageableMemoryAccessUsesHostPageTables}},
        {"hostNativeAtomicSupported", {[](const DeviceInfo& d) { return (long long)d.prop.hostNativeAtomicSupported; },
                                       cudaDevAttrHostNativeAtomicSupported}},
        {"canMapHostMemory", {[](const DeviceInfo& d) { return (long long)d.prop.canMapHostMemory; },
                              cudaDevAttrCanMapHostMemory}},
        {"unifiedAddressing", {[](const DeviceInfo& d) { return (long long)d.prop.unifiedAddressing; },
                               cudaDevAttrUnifiedAddressing}},
        {"asyncEngineCount", {[](const DeviceInfo& d) { return (long long)d.prop.asyncEngineCount; },
                              cudaDevAttrAsyncEngineCount}},
        {"concurrentKernels", {[](const DeviceInfo& d) { return (long long)d.prop.concurrentKernels; },
                               cudaDevAttrConcurrentKernels}},
        {"memoryPoolsSupported", {[](const DeviceInfo& d) { return (long long)d.prop.memoryPoolsSupported; },
                                  cudaDevAttrMemoryPoolsSupported}},
        {"ipcEventSupported", {[](const DeviceInfo& d) { return (long long)d.prop.ipcEventSupported; },
                               cudaDevAttrIpcEventSupport}},
        {"peerAccess", {nullptr, cudaDevAttrMax}},  // can_access_peer(): cudaDeviceCanAccessPeer's answer
    };
    for (auto& a : profile_attributes())
        if (!fields.count(a)) {
            std::printf("  %s: no check of how it is applied (add it to profiles_applied)\n", a.c_str());
            EXPECT(false);
        }
    for (auto& p : all) {
        DeviceInfo d;
        d.real = real;
        apply_profile(p, &d);
        for (auto& f : fields) {
            if (!p.has(f.first)) continue;
            const long long want = p.get(f.first);
            if (f.second.first && f.second.first(d) != want) {
                std::printf("  %s %s: prop has %lld, the table %lld\n", p.key.c_str(), f.first.c_str(),
                            f.second.first(d), want);
                EXPECT(false);
            }
            if (f.second.second != cudaDevAttrMax && profile_attribute(p, f.second.second, 12345, 50 << 20) != want) {
                std::printf("  %s %s: device_attribute() gives %d, the table %lld\n", p.key.c_str(), f.first.c_str(),
                            profile_attribute(p, f.second.second, 12345, 50 << 20), want);
                EXPECT(false);
            }
        }
        EXPECT(std::string(d.prop.name) == p.gpu);
        EXPECT(d.real.multiProcessorCount == 999);  // the real GPU's stays
        const double peak = 2.0 * p.get("memoryClockRate") * 1e3 * (p.get("memoryBusWidth") / 8.0) / 1e9;
        EXPECT(d.profile_peak_gbps > 0.99 * peak && d.profile_peak_gbps < 1.01 * peak);
        const size_t optin = d.smem_optin();
        EXPECT(optin == std::min<size_t>(p.get("sharedMemPerBlockOptin"), real.sharedMemPerBlockOptin));
        // L2 persistence and the reserved 1 KB per block come with 8.0 (the programming guide)
        const bool ampere = p.get("major") >= 8;
        EXPECT((d.prop.persistingL2CacheMaxSize > 0) == ampere);
        EXPECT(d.prop.persistingL2CacheMaxSize <= real.persistingL2CacheMaxSize);
        EXPECT(d.prop.reservedSharedMemPerBlock == (ampere ? real.reservedSharedMemPerBlock : 0));
        EXPECT(profile_attribute(p, cudaDevAttrReservedSharedMemoryPerBlock, 1024, 0) == (ampere ? 1024 : 0));
        EXPECT(profile_attribute(p, cudaDevAttrTextureAlignment, 512, 0) == 512);  // not in the profiles
    }
}

int main(int argc, char** argv) {
    std::map<std::string, std::function<void()>> cases = {
        {"args_values", args_values},     {"args_defaults", args_defaults}, {"args_errors", args_errors},
        {"compare_exact", compare_exact}, {"compare_close", compare_close}, {"random_data", random_data},
        {"compare_note", compare_note},
        {"corrupt_on", corrupt_on},       {"corrupt_off", corrupt_off},     {"corrupt_env", corrupt_env},
        {"timer_host", timer_host},       {"profiles_parse", profiles_parse},
        {"profiles_applied", profiles_applied},
#ifndef NO_OPENCV
        {"image_fallback", image_fallback},
#endif
    };
    if (argc >= 2 && !std::strcmp(argv[1], "--list")) {
        for (auto& c : cases) std::printf("%s\n", c.first.c_str());
        std::printf("image_fallback\n");  // listed always: skips without OpenCV
        return 0;
    }
    if (argc >= 2 && !std::strcmp(argv[1], "profile")) {  // CUDA_LAB_PROFILE as select_device() reads it
        const DeviceProfile* p = active_profile();       // an unknown name exits 2
        std::printf("profile %s\n", p ? p->key.c_str() : "(none)");
        return 0;
    }
    if (argc >= 2 && !std::strcmp(argv[1], "args")) {  // behave like a program's parser
        Args a(argc - 1, argv + 1, "parser test");
        long long n = a.integer("n", 10, 1, 1000, "size");
        a.parse_or_exit();
        std::printf("n=%lld\n", n);
        return 0;
    }
    if (argc >= 3 && !std::strcmp(argv[1], "image")) {
#ifdef NO_OPENCV
        std::printf("SKIPPED: built without OpenCV\n");
        return 77;
#else
        cv::Mat m = load_image(argv[2], 32, 32);
        std::printf("loaded %dx%d\n", m.cols, m.rows);
        return 0;
#endif
    }
    if (argc != 2) return 2;
    auto it = cases.find(argv[1]);
    if (it == cases.end()) {
        if (!std::strcmp(argv[1], "image_fallback")) {
            std::printf("SKIPPED: built without OpenCV\n");
            return 77;
        }
        std::printf("unknown case %s\n", argv[1]);
        return 2;
    }
    lab_corrupt_on() = false;  // CUDA_LAB_CORRUPT in the environment must not change a case; corrupt_on sets it
    it->second();
    return failures ? 1 : 0;
}
