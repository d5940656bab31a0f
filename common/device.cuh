// device.cuh - picking the GPU, printing what it is, and skipping where it cannot run.
//
// select_device() is the first CUDA call of every program. If the runtime finds no usable GPU
// (no driver, no device, a driver too old for this toolkit) the program prints
// "SKIPPED: <the runtime's reason>" and exits 77, the conventional "skipped" code that the test
// suite understands. Otherwise it prints one banner line with the facts that later figures are
// compared with: compute capability, SM count, L2 size and the theoretical DRAM bandwidth,
// computed as 2 (double data rate) x memory clock x bus width. CUDA 13 removed
// cudaDeviceProp::memoryClockRate and clockRate, so those come from cudaDeviceGetAttribute.
// require_cc() skips (77) with a reason on a GPU older than a feature needs. select_device() also
// skips on a GPU older than every architecture the program was compiled for (nvcc's
// __CUDA_ARCH_LIST__, lowest first): such a GPU can run none of its kernels, and without this check
// the first launch would fail with cudaErrorNoKernelImageForDevice.
//
// Device profiles: CUDA_LAB_PROFILE=t4 (profiles.h lists the names and the published source of
// every value) makes select_device() fill DeviceInfo::prop with that GPU's attributes, and
// device_attribute(), mem_get_info() and can_access_peer() answer as that GPU would: a program
// that asks through these (not cudaGetDeviceProperties / cudaDeviceGetAttribute / cudaMemGetInfo /
// cudaDeviceCanAccessPeer) skips, falls back and sizes itself as on the learner's GPU. An unknown
// name is a usage error (2). The rule every program follows under a profile:
//   - from the profile (dev.prop): feature gates, and the sizes a learner's GPU would choose
//     (buffer sizes from its memory, which kernel variant fits its shared memory);
//   - from the real GPU (dev.real): what the program MEASURES and the yardsticks it divides by:
//     SM counts for waves, grids and per-SM rates, occupancy and its model, FP32 and DRAM peaks
//     (peak_gbps, the clocks), L2 sizes of flushes and of "x the L2" ratios, resident warps;
//   - an API call's argument never exceeds what the real GPU accepts: smem_optin() is the opt-in
//     shared memory per block that both the profile's GPU and this one allow (min of the two);
//   - where a size chosen from the profile meets a measurement (a buffer meant to oversubscribe a
//     small card), the output says what the real GPU is.
// The banner prints both GPUs.
//
// Gates that ask the binary too (the manual's G 3.1, binary and PTX compatibility): a kernel runs
// the code compiled for the virtual architecture its PTX was generated for (__CUDA_ARCH__ =
// 10 x ptxVersion), even when the driver JIT-compiles that PTX for a newer GPU. A feature that a
// kernel compiled out under `#if __CUDA_ARCH__ >= ...` is missing whatever the device reports, so
// require_kernel_arch() / kernel_has_arch() ask the kernel (cudaFuncGetAttributes) as well.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>
#include <cuda_runtime.h>
#include "build_mode.h"
#include "check.cuh"

[[noreturn]] LAB_INLINE void skip(const std::string& reason);

// One entry of profiles.h: the profile's name, its GPU, and ATTRIBUTE -> value.
struct DeviceProfile {
    std::string key;    // "t4"
    std::string gpu;    // "Tesla T4"
    std::string where;  // "a hosted notebook (Linux, one GPU)"
    std::vector<std::pair<std::string, long long>> values;
    bool has(const std::string& attr) const;
    long long get(const std::string& attr) const;  // exits 1 if missing (parse_profiles() checks)
};

// The attributes every profile gives (tests/test_profiles.py checks the table against this list).
LAB_INLINE const std::vector<std::string>& profile_attributes();
// profiles.h's table parsed; on a malformed table *error says where (and the result is empty).
LAB_INLINE std::vector<DeviceProfile> parse_profiles(const std::string& text, std::string* error);
// The profile CUDA_LAB_PROFILE names, or nullptr when it is unset or empty. An unknown name prints
// the known ones and exits 2 (a usage error: no CUDA call has been made by then).
LAB_INLINE const DeviceProfile* active_profile();

struct DeviceInfo {
    int id = 0;
    cudaDeviceProp prop{};    // with a profile: the profile's GPU (gates, sizes); else the real one
    cudaDeviceProp real{};    // the GPU this runs on
    const DeviceProfile* profile = nullptr;
    int mem_clock_khz = 0;    // cudaDevAttrMemoryClockRate, the real GPU's
    int sm_clock_khz = 0;     // cudaDevAttrClockRate, the real GPU's
    double peak_gbps = 0.0;   // theoretical DRAM bandwidth of the real GPU, 1e9 B/s
    double profile_peak_gbps = 0.0;  // the same for the profile's GPU (0 without a profile)
    int cc() const { return prop.major * 10 + prop.minor; }
    // Opt-in shared memory per block (cudaFuncAttributeMaxDynamicSharedMemorySize may be raised to
    // this) that both the profile's GPU and the real one allow: a kernel that fits it fits both.
    size_t smem_optin() const {
        return prop.sharedMemPerBlockOptin < real.sharedMemPerBlockOptin ? prop.sharedMemPerBlockOptin
                                                                         : real.sharedMemPerBlockOptin;
    }
};

LAB_INLINE DeviceInfo device_info(int id);
// device_info()'s part without CUDA calls (tests/unit/test_common.cpp checks it): d->prop = d->real
// with every value of profile p applied, and d->profile_peak_gbps.
LAB_INLINE void apply_profile(const DeviceProfile& p, DeviceInfo* d);
// device_attribute()'s part without CUDA calls: attr's value under profile p, given the real GPU's
// value of attr (real_value) and of cudaDevAttrL2CacheSize (real_l2).
LAB_INLINE int profile_attribute(const DeviceProfile& p, cudaDeviceAttr attr, int real_value, int real_l2);

// cudaDeviceGetAttribute through the profile: the profile's value where it has the attribute.
LAB_INLINE int device_attribute(cudaDeviceAttr attr, int dev);
// cudaMemGetInfo through the profile: total = the profile's card, free = what is free here,
// at most the profile's card less what is in use here (by this process and others).
LAB_INLINE void mem_get_info(size_t* free_bytes, size_t* total_bytes);
// cudaDeviceCanAccessPeer through the profile (its peerAccess).
LAB_INLINE bool can_access_peer(int dev, int peer);

// What a kernel was compiled for (cudaFuncGetAttributes), as major x 10 + minor: ptx is the
// virtual architecture of its code (the kernel saw __CUDA_ARCH__ = 10 x ptx), binary the SASS
// that runs (== the GPU's when the driver JIT-compiled the PTX).
struct KernelArch {
    int ptx = 0;
    int binary = 0;
};
LAB_INLINE KernelArch kernel_built_for(const void* func);
// Whether func's code was compiled for compute capability cc (e.g. 90) or newer.
LAB_INLINE bool kernel_has_arch(const void* func, int cc);
// Skips (77) unless func's code was compiled for cc or newer, e.g. "cluster_dsmem's kernels were
// compiled for compute_75 (its PTX compiled for this 9.0 GPU); thread block clusters need code
// compiled for 9.0: build with make ARCH=sm_90 or ARCH=native ...". what: "cluster_dsmem's kernels".
LAB_INLINE void require_kernel_arch(const void* func, int cc, const char* what, const char* feature);
// "compute_75 (its PTX compiled for this 9.0 GPU)" or "sm_90": how func's code came to be. The SASS
// differs from the PTX's architecture when the driver JIT-compiled the PTX at load time, and also
// when nvcc compiled it ahead of time for another target (-gencode arch=compute_75,code=sm_90):
// either way the kernel runs the code of compute_75 (__CUDA_ARCH__ = 750).
LAB_INLINE std::string kernel_arch_text(const void* func);

// select_device() with the lowest and highest architecture this program was built for (e.g. 750
// and 900; 0: unknown), which the inline select_device() below takes from the program's own
// __CUDA_ARCH_LIST__. Under a profile the banner says "code built for 7.5" (or "7.5 .. 9.0"), so that
// tools/profile_run.py can tell a run on the wrong build from one on the build it names.
LAB_INLINE DeviceInfo select_device_built_for(int id, bool banner, int lowest_arch, int highest_arch = 0);

inline DeviceInfo select_device(int id, bool banner = true) {
#ifdef __CUDA_ARCH_LIST__
    constexpr int built_for[] = {__CUDA_ARCH_LIST__};  // e.g. 750,800,860,890,900 (the portable build)
    return select_device_built_for(id, banner, built_for[0], built_for[sizeof built_for / sizeof built_for[0] - 1]);
#else
    return select_device_built_for(id, banner, 0);
#endif
}

LAB_INLINE void require_cc(const DeviceInfo& d, int major, int minor, const char* feature);

// Whether a CUDA tool (compute-sanitizer, ncu, nsys) is attached to this process. They attach
// through the CUDA injection hook and take over parts of launching and synchronization, so a
// program prints its timing-dependent claims (concurrency, overlap, CPU cost of a wait) under them
// but does not assert them. Call after CUDA is initialized: the tool's library is then mapped into
// this process (Linux: /proc/self/maps; elsewhere only the environment variable is seen).
// The ordering stress of the test suite (tests/stress.py: random delays in front of every
// asynchronous operation, CUDA_LAB_STRESS=1 in the environment) counts as such a tool.
LAB_INLINE bool cuda_tool_attached();

// Loads each kernel on the current device now (cudaFuncGetAttributes). With lazy loading (the default
// on Linux since CUDA 12.2, on Windows since 12.3) a kernel is loaded at its first launch, and that
// load can synchronize the device: a program that checks an ordering loads its kernels first, so
// that a load never puts back an order the program forgot to state (tests/mutants/05_streams.txt).
// LOAD_KERNELS(k1, k2, ...): a failed load is reported, as CHECK reports, at the caller's line.
LAB_INLINE void load_kernels_at(std::initializer_list<const void*> kernels, const char* file, int line);
#define LOAD_KERNELS(...) load_kernels_at({__VA_ARGS__}, __FILE__, __LINE__)

// A texture object on linear memory needs devPtr aligned to the device's textureAlignment
// (cudaDevAttrTextureAlignment: 512 bytes on the H100). cudaMalloc promises only 256 (the
// programming guide), so the pointer is checked against the device's own figure, not assumed.
LAB_INLINE void check_texture_alignment(const void* p, const char* name);

// ---- the bodies: inline here (header-only), or compiled once into the library (build_mode.h) ----
#if LAB_COMMON_BODIES
#include <algorithm>
#include <fstream>
#include <sstream>
#include "profiles.h"

[[noreturn]] LAB_INLINE void skip(const std::string& reason) {
    std::printf("SKIPPED: %s\n", reason.c_str());
    std::exit(77);
}

LAB_INLINE bool DeviceProfile::has(const std::string& attr) const {
    for (const auto& kv : values)
        if (kv.first == attr) return true;
    return false;
}

LAB_INLINE long long DeviceProfile::get(const std::string& attr) const {
    for (const auto& kv : values)
        if (kv.first == attr) return kv.second;
    std::fprintf(stderr, "error: profile %s has no %s (common/profiles.h)\n", key.c_str(), attr.c_str());
    std::exit(1);
}

LAB_INLINE const std::vector<std::string>& profile_attributes() {
    static const std::vector<std::string> names = {
        "major", "minor", "totalGlobalMem", "multiProcessorCount", "sharedMemPerBlock", "sharedMemPerBlockOptin",
        "sharedMemPerMultiprocessor", "l2CacheSize", "maxThreadsPerMultiProcessor", "maxBlocksPerMultiProcessor",
        "regsPerMultiprocessor", "memoryClockRate", "memoryBusWidth", "clusterLaunch", "managedMemory",
        "concurrentManagedAccess", "pageableMemoryAccess", "pageableMemoryAccessUsesHostPageTables",
        "hostNativeAtomicSupported", "canMapHostMemory", "unifiedAddressing", "asyncEngineCount", "concurrentKernels",
        "memoryPoolsSupported", "ipcEventSupported", "peerAccess"};
    return names;
}

LAB_INLINE std::vector<DeviceProfile> parse_profiles(const std::string& text, std::string* error) {
    std::vector<DeviceProfile> out;
    std::vector<std::string> sources;
    std::istringstream in(text);
    std::string line;
    int lineno = 0;
    auto fail = [&](const std::string& what) {
        if (error) *error = "profiles.h table line " + std::to_string(lineno) + ": " + what;
        return std::vector<DeviceProfile>{};
    };
    while (std::getline(in, line)) {
        ++lineno;
        std::istringstream f(line);
        std::string first;
        if (!(f >> first) || first[0] == '#') continue;
        if (first == "source") {
            std::string id, url;
            if (!(f >> id >> url) || url.rfind("https://", 0) != 0) return fail("source needs an ID and an https URL");
            sources.push_back(id);
        } else if (first == "profile") {
            DeviceProfile p;
            std::string rest;
            if (!(f >> p.key) || !std::getline(f, rest)) return fail("profile needs a name and a description");
            size_t bar = rest.find('|');
            if (bar == std::string::npos) return fail("profile " + p.key + ": 'GPU | where' expected");
            auto trim = [](std::string t) {
                size_t a = t.find_first_not_of(' '), b = t.find_last_not_of(' ');
                return a == std::string::npos ? std::string() : t.substr(a, b - a + 1);
            };
            p.gpu = trim(rest.substr(0, bar));
            p.where = trim(rest.substr(bar + 1));
            for (const auto& q : out)
                if (q.key == p.key) return fail("profile " + p.key + " twice");
            out.push_back(p);
        } else {
            if (out.empty() || out.back().key != first) return fail("'" + first + "' is not the profile above");
            std::string attr, value, src;
            if (!(f >> attr >> value >> src)) return fail("KEY ATTRIBUTE VALUE SOURCE expected");
            bool known = false;
            for (const auto& a : profile_attributes()) known = known || a == attr;
            if (!known) return fail("unknown attribute " + attr);
            if (out.back().has(attr)) return fail(first + " " + attr + " twice");
            size_t used = 0;
            long long v = 0;
            try {
                v = std::stoll(value, &used);
            } catch (...) {
                used = 0;
            }
            if (used != value.size() || v < 0) return fail(attr + ": '" + value + "' is not a count");
            std::string note;
            std::getline(f, note);
            if (src == "unpublished") {
                if (note.find_first_not_of(' ') == std::string::npos) return fail(attr + ": unpublished needs a note");
            } else {
                std::istringstream ids(src);
                std::string id;
                while (std::getline(ids, id, ','))
                    if (std::find(sources.begin(), sources.end(), id) == sources.end())
                        return fail(attr + ": source '" + id + "' is not listed");
            }
            out.back().values.emplace_back(attr, v);
        }
    }
    for (const auto& p : out)
        for (const auto& a : profile_attributes())
            if (!p.has(a)) {
                if (error) *error = "profile " + p.key + " has no " + a;
                return {};
            }
    if (out.empty() && error) *error = "no profile in the table";
    return out;
}

LAB_INLINE const DeviceProfile* active_profile() {
    static const std::vector<DeviceProfile> all = [] {
        std::string error;
        std::vector<DeviceProfile> v = parse_profiles(lab_profiles::kTable, &error);
        if (v.empty()) {
            std::fprintf(stderr, "error: %s\n", error.c_str());
            std::exit(1);
        }
        return v;
    }();
    static const DeviceProfile* chosen = [] () -> const DeviceProfile* {
        const char* name = std::getenv("CUDA_LAB_PROFILE");
        if (!name || !*name) return nullptr;
        for (const auto& p : all)
            if (p.key == name) return &p;
        std::string names;
        for (const auto& p : all) names += (names.empty() ? "" : ", ") + p.key;
        std::fprintf(stderr, "error: CUDA_LAB_PROFILE=%s is not a known profile; known: %s (common/profiles.h)\n",
                     name, names.c_str());
        std::exit(2);
    }();
    return chosen;
}

// persistingL2CacheMaxSize under a profile: 0 below compute capability 8.0 (L2 persistence comes
// with 8.0, the programming guide); else the real GPU's set-aside share of its L2, of the profile's L2,
// at most the real GPU's own maximum: a program sets the limit it reads here on the real GPU
// (cudaDeviceSetLimit refuses more), e.g. the 4090 profile's 72 MB L2 on an H100's 50 MB.
LAB_INLINE int profile_persisting_l2(const DeviceProfile& p, int real_persisting, int real_l2) {
    if (p.get("major") < 8 || real_l2 <= 0) return 0;
    const double share = (double)real_persisting / real_l2 * p.get("l2CacheSize");
    return (int)std::min(share, (double)real_persisting);
}

LAB_INLINE void apply_profile(const DeviceProfile& p, DeviceInfo* d) {
    d->prop = d->real;
    cudaDeviceProp& q = d->prop;
    std::snprintf(q.name, sizeof q.name, "%s", p.gpu.c_str());
    q.major = (int)p.get("major");
    q.minor = (int)p.get("minor");
    q.totalGlobalMem = (size_t)p.get("totalGlobalMem");
    q.multiProcessorCount = (int)p.get("multiProcessorCount");
    q.sharedMemPerBlock = (size_t)p.get("sharedMemPerBlock");
    q.sharedMemPerBlockOptin = (size_t)p.get("sharedMemPerBlockOptin");
    q.sharedMemPerMultiprocessor = (size_t)p.get("sharedMemPerMultiprocessor");
    q.l2CacheSize = (int)p.get("l2CacheSize");
    // L2 set-aside for persisting accesses exists from compute capability 8.0 (the programming
    // guide); the profiles give no set-aside size, so the real GPU's share of its L2 is applied.
    q.persistingL2CacheMaxSize = profile_persisting_l2(p, d->real.persistingL2CacheMaxSize, d->real.l2CacheSize);
    if (q.persistingL2CacheMaxSize == 0) q.accessPolicyMaxWindowSize = 0;
    q.maxThreadsPerMultiProcessor = (int)p.get("maxThreadsPerMultiProcessor");
    q.maxBlocksPerMultiProcessor = (int)p.get("maxBlocksPerMultiProcessor");
    q.regsPerMultiprocessor = (int)p.get("regsPerMultiprocessor");
    q.memoryBusWidth = (int)p.get("memoryBusWidth");
    q.managedMemory = (int)p.get("managedMemory");
    q.concurrentManagedAccess = (int)p.get("concurrentManagedAccess");
    q.pageableMemoryAccess = (int)p.get("pageableMemoryAccess");
    q.pageableMemoryAccessUsesHostPageTables = (int)p.get("pageableMemoryAccessUsesHostPageTables");
    q.hostNativeAtomicSupported = (int)p.get("hostNativeAtomicSupported");
    q.canMapHostMemory = (int)p.get("canMapHostMemory");
    q.unifiedAddressing = (int)p.get("unifiedAddressing");
    q.asyncEngineCount = (int)p.get("asyncEngineCount");
    q.concurrentKernels = (int)p.get("concurrentKernels");
    q.ipcEventSupported = (int)p.get("ipcEventSupported");
    q.clusterLaunch = (int)p.get("clusterLaunch");
    q.memoryPoolsSupported = (int)p.get("memoryPoolsSupported");
    // 1 KB of shared memory per block is reserved for the system from compute capability 8.0
    // (the programming guide's shared memory sections for 8.x and 9.0); 7.x reserves none.
    if (q.major < 8) q.reservedSharedMemPerBlock = 0;
    d->profile_peak_gbps = 2.0 * p.get("memoryClockRate") * 1e3 * (p.get("memoryBusWidth") / 8.0) / 1e9;
}

LAB_INLINE DeviceInfo device_info(int id) {
    DeviceInfo d;
    d.id = id;
    CHECK(cudaGetDeviceProperties(&d.real, id));
    CHECK(cudaDeviceGetAttribute(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, id));
    CHECK(cudaDeviceGetAttribute(&d.sm_clock_khz, cudaDevAttrClockRate, id));
    d.peak_gbps = 2.0 * d.mem_clock_khz * 1e3 * (d.real.memoryBusWidth / 8.0) / 1e9;
    d.prop = d.real;
    d.profile = active_profile();
    if (d.profile) apply_profile(*d.profile, &d);
    return d;
}

LAB_INLINE int profile_attribute(const DeviceProfile& p, cudaDeviceAttr attr, int v, int real_l2) {
    switch (attr) {
    case cudaDevAttrComputeCapabilityMajor: return (int)p.get("major");
    case cudaDevAttrComputeCapabilityMinor: return (int)p.get("minor");
    case cudaDevAttrMultiProcessorCount: return (int)p.get("multiProcessorCount");
    case cudaDevAttrMaxSharedMemoryPerBlock: return (int)p.get("sharedMemPerBlock");
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: return (int)p.get("sharedMemPerBlockOptin");
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: return (int)p.get("sharedMemPerMultiprocessor");
    case cudaDevAttrReservedSharedMemoryPerBlock: return p.get("major") >= 8 ? v : 0;
    case cudaDevAttrL2CacheSize: return (int)p.get("l2CacheSize");
    case cudaDevAttrMaxPersistingL2CacheSize: return profile_persisting_l2(p, v, real_l2);
    case cudaDevAttrMaxAccessPolicyWindowSize: return p.get("major") >= 8 ? v : 0;
    case cudaDevAttrMaxThreadsPerMultiProcessor: return (int)p.get("maxThreadsPerMultiProcessor");
    case cudaDevAttrMaxBlocksPerMultiprocessor: return (int)p.get("maxBlocksPerMultiProcessor");
    case cudaDevAttrMaxRegistersPerMultiprocessor: return (int)p.get("regsPerMultiprocessor");
    case cudaDevAttrMemoryClockRate: return (int)p.get("memoryClockRate");
    case cudaDevAttrGlobalMemoryBusWidth: return (int)p.get("memoryBusWidth");
    case cudaDevAttrClusterLaunch: return (int)p.get("clusterLaunch");
    case cudaDevAttrManagedMemory: return (int)p.get("managedMemory");
    case cudaDevAttrConcurrentManagedAccess: return (int)p.get("concurrentManagedAccess");
    case cudaDevAttrPageableMemoryAccess: return (int)p.get("pageableMemoryAccess");
    case cudaDevAttrPageableMemoryAccessUsesHostPageTables:
        return (int)p.get("pageableMemoryAccessUsesHostPageTables");
    case cudaDevAttrDirectManagedMemAccessFromHost:  // only where the GPU uses the host's page tables
        return std::min(v, (int)p.get("pageableMemoryAccessUsesHostPageTables"));
    case cudaDevAttrHostNativeAtomicSupported: return (int)p.get("hostNativeAtomicSupported");
    case cudaDevAttrCanMapHostMemory: return (int)p.get("canMapHostMemory");
    case cudaDevAttrUnifiedAddressing: return (int)p.get("unifiedAddressing");
    case cudaDevAttrAsyncEngineCount: return (int)p.get("asyncEngineCount");
    case cudaDevAttrConcurrentKernels: return (int)p.get("concurrentKernels");
    case cudaDevAttrMemoryPoolsSupported: return (int)p.get("memoryPoolsSupported");
    case cudaDevAttrIpcEventSupport: return (int)p.get("ipcEventSupported");
    default: return v;  // not in the profiles (texture limits, alignment ...): the real GPU's
    }
}

LAB_INLINE int device_attribute(cudaDeviceAttr attr, int dev) {
    int v = 0;
    CHECK(cudaDeviceGetAttribute(&v, attr, dev));
    const DeviceProfile* p = active_profile();
    if (!p) return v;
    int l2 = 0;
    if (attr == cudaDevAttrMaxPersistingL2CacheSize) CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    return profile_attribute(*p, attr, v, l2);
}

LAB_INLINE void mem_get_info(size_t* free_bytes, size_t* total_bytes) {
    size_t f = 0, t = 0;
    CHECK(cudaMemGetInfo(&f, &t));
    if (const DeviceProfile* p = active_profile()) {
        size_t card = (size_t)p->get("totalGlobalMem"), used = t - f;
        f = std::min(f, card > used ? card - used : (size_t)0);
        t = card;
    }
    *free_bytes = f;
    *total_bytes = t;
}

LAB_INLINE bool can_access_peer(int dev, int peer) {
    int can = 0;
    CHECK(cudaDeviceCanAccessPeer(&can, dev, peer));
    if (const DeviceProfile* p = active_profile()) can = can && p->get("peerAccess");
    return can != 0;
}

LAB_INLINE KernelArch kernel_built_for(const void* func) {
    cudaFuncAttributes a{};
    CHECK(cudaFuncGetAttributes(&a, func));
    return KernelArch{a.ptxVersion, a.binaryVersion};
}

LAB_INLINE bool kernel_has_arch(const void* func, int cc) { return kernel_built_for(func).ptx >= cc; }

LAB_INLINE std::string kernel_arch_text(const void* func) {
    KernelArch k = kernel_built_for(func);
    auto dotted = [](int v) { return std::to_string(v / 10) + "." + std::to_string(v % 10); };
    if (k.binary != k.ptx)  // SASS for another target than the PTX's: JIT, or -gencode arch=compute_X,code=sm_Y
        return "compute_" + std::to_string(k.ptx) + " (its PTX compiled for this " + dotted(k.binary) + " GPU)";
    return "sm_" + std::to_string(k.ptx);
}

LAB_INLINE void require_kernel_arch(const void* func, int cc, const char* what, const char* feature) {
    if (kernel_has_arch(func, cc)) return;
    skip(std::string(what) + " were compiled for " + kernel_arch_text(func) + "; " + feature +
         " need code compiled for " + std::to_string(cc / 10) + "." + std::to_string(cc % 10) +
         ": build with make ARCH=sm_" + std::to_string(cc) +
         " or ARCH=native (G 3.1: a kernel runs the code of the architecture it was compiled for, not the GPU's)");
}

LAB_INLINE DeviceInfo select_device_built_for(int id, bool banner, int lowest_arch, int highest_arch) {
    const DeviceProfile* profile = active_profile();  // an unknown name exits 2 before any CUDA call
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess)
        skip(std::string("no usable CUDA device (") + cudaGetErrorName(err) + ": " + cudaGetErrorString(err) + ")");
    if (count == 0) skip("no CUDA device found");
    if (id >= count) {
        std::fprintf(stderr, "error: --device=%d but this machine has %d CUDA device(s)\n", id, count);
        std::exit(2);
    }
    CHECK(cudaSetDevice(id));
    DeviceInfo d = device_info(id);
    if (banner) {
        std::printf("GPU %d: %s | sm_%d | %d SMs | %d MB L2 | %.0f GB/s peak DRAM", id, d.real.name,
                    d.real.major * 10 + d.real.minor, d.real.multiProcessorCount, d.real.l2CacheSize >> 20,
                    d.peak_gbps);
        if (profile)
            std::printf(" | profile %s: %s, sm_%d, %d SMs, %d MB L2, %zu MB, %.0f GB/s peak DRAM (%s); the gates and "
                        "sizes below are that GPU's, the measured figures this one's",
                        profile->key.c_str(), d.prop.name, d.cc(), d.prop.multiProcessorCount,
                        d.prop.l2CacheSize >> 20, d.prop.totalGlobalMem >> 20, d.profile_peak_gbps,
                        profile->where.c_str());
        if (profile && lowest_arch > 0) {
            auto dotted = [](int a) { return std::to_string(a / 100) + "." + std::to_string(a / 10 % 10); };
            std::string built = dotted(lowest_arch);
            if (highest_arch > lowest_arch) built += " .. " + dotted(highest_arch);
            std::printf(" | code built for %s", built.c_str());
        }
        std::printf("\n");
    }
    if (lowest_arch > 0 && d.cc() * 10 < lowest_arch)
        skip("this build has code for compute capability " + std::to_string(lowest_arch / 100) + "." +
             std::to_string(lowest_arch / 10 % 10) + " and newer; " + d.prop.name + " is " +
             std::to_string(d.prop.major) + "." + std::to_string(d.prop.minor) +
             " (CUDA 13 compiles for 7.5 and newer; an older toolkit may build for it: make ARCH=sm_" +
             std::to_string(d.cc()) + ")");
    return d;
}

LAB_INLINE void require_cc(const DeviceInfo& d, int major, int minor, const char* feature) {
    if (d.prop.major * 10 + d.prop.minor < major * 10 + minor)
        skip(std::string(feature) + " requires compute capability " + std::to_string(major) + "." +
             std::to_string(minor) + "; " + d.prop.name + " is " + std::to_string(d.prop.major) + "." +
             std::to_string(d.prop.minor));
}

LAB_INLINE void load_kernels_at(std::initializer_list<const void*> kernels, const char* file, int line) {
    int i = 0;
    for (const void* k : kernels) {
        cudaFuncAttributes fa;
        std::string what = "cudaFuncGetAttributes(LOAD_KERNELS' kernel " + std::to_string(++i) + ")";
        check_cuda(cudaFuncGetAttributes(&fa, k), what.c_str(), file, line);
    }
}

LAB_INLINE bool cuda_tool_attached() {
    const char* inj = std::getenv("CUDA_INJECTION64_PATH");
    if (inj && *inj) return true;
    const char* stress = std::getenv("CUDA_LAB_STRESS");
    if (stress && *stress && std::string(stress) != "0") return true;
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line))
        if (line.find("sanitizer") != std::string::npos || line.find("njection") != std::string::npos) return true;
    return false;
}

LAB_INLINE void check_texture_alignment(const void* p, const char* name) {
    int dev = 0, align = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&align, cudaDevAttrTextureAlignment, dev));
    if (reinterpret_cast<uintptr_t>(p) % (uintptr_t)align != 0) {
        std::printf("FAILED: %s = %p is not a multiple of textureAlignment (%d bytes)\n", name, p, align);
        std::exit(1);
    }
}
#endif  // LAB_COMMON_BODIES
