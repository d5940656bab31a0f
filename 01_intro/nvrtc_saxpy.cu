// nvrtc_saxpy - compile a kernel from a string at run time with NVRTC, load it, launch it.
//
// Manual: G 3.1.1.2 即时编译 (just-in-time compilation).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o nvrtc_saxpy nvrtc_saxpy.cu -lnvrtc
// Shows:  nvcc is not the only way to get device code: NVRTC compiles CUDA C++ held in a string
//         while the program runs. Version 1 asks NVRTC for a cubin (SASS) for exactly this GPU's
//         architecture; version 2 asks for PTX only and lets the driver JIT-compile it when the
//         module is loaded - the path the guide describes for running on GPUs newer than the
//         compiler. Both are loaded and launched through compat::load_kernel / launch_loaded
//         (common/cuda_compat.cuh): with CUDA 12.8 and newer that is the runtime's library API
//         (cudaLibraryLoadData, cudaLibraryGetKernel, then cudaLaunchKernel with the
//         cudaKernel_t); with older toolkits the driver API's cuModuleLoadData,
//         cuModuleGetFunction and cuLaunchKernel, reached through cudaGetDriverEntryPoint. The
//         guide points to the driver API (cuModuleLoadData); neither route links -lcuda, which
//         would keep the program from starting on a machine without the driver.
//         A driver older than NVRTC refuses NVRTC's PTX (cudaErrorUnsupportedPtxVersion, "the
//         provided PTX was compiled with an unsupported toolchain": Colab's CUDA 12.5 with a driver
//         for CUDA 12.4): the PTX row then says SKIPPED and the cubin decides; where the PTX is the
//         only path (no cubin for this GPU from this NVRTC) the program skips (77).
// Build:  make nvrtc_saxpy       (links -lnvrtc)
// Run:    ./nvrtc_saxpy [--n=2^24] [--a=2.5] [--reps=20]
// Output: NVRTC version, compile / load times and code sizes for both paths, kernel time and
//         GB/s, then PASSED.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>
#include <nvrtc.h>
#include "common.cuh"
#include "cuda_compat.cuh"

// NVRTC has its own error type; a failed compile also leaves a log worth printing.
#define NVRTC_CHECK(call)                                                                       \
    do {                                                                                        \
        nvrtcResult r_ = (call);                                                                \
        if (r_ != NVRTC_SUCCESS) {                                                              \
            std::fprintf(stderr, "NVRTC error at %s:%d\n  call:  %s\n  error: %s\n", __FILE__, \
                         __LINE__, #call, nvrtcGetErrorString(r_));                             \
            std::printf("FAILED: NVRTC error %s\n", nvrtcGetErrorString(r_));                   \
            std::exit(1);                                                                       \
        }                                                                                       \
    } while (0)

// The device code, as the program carries it: plain text. extern "C" keeps the name unmangled,
// so the loader can find it as "saxpy". fmaf makes the rounding explicit (one rounding
// of a*x+y), so the CPU reference below can be bit-identical.
static const char* kSaxpySource = R"(
extern "C" __global__ void saxpy(float a, const float* x, const float* y, float* out, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = fmaf(a, x[i], y[i]);
}
)";

// CPU reference: the same single-rounding fused multiply-add.
void saxpy_cpu(float a, const float* x, const float* y, float* out, long long n) {
    for (long long i = 0; i < n; ++i) out[i] = std::fma(a, x[i], y[i]);
}

struct Compiled {
    std::vector<char> code;  // cubin bytes, or NUL-terminated PTX text
    std::string target;
    double ms = 0;
    bool ptx = false;
    bool refused = false;  // PTX the driver cannot JIT-compile: it is older than this NVRTC
};

// Why the PTX did not run: NVRTC wrote PTX of a newer version than this driver's JIT compiler knows.
static std::string ptx_refused_reason(int nvrtc_major, int nvrtc_minor) {
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    return "this driver is older than the toolkit: its PTX cannot be JIT-compiled (cudaErrorUnsupportedPtxVersion; "
           "the driver supports CUDA " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) +
           ", the PTX came from NVRTC " + std::to_string(nvrtc_major) + "." + std::to_string(nvrtc_minor) +
           "; a newer driver, or a toolkit no newer than the driver, runs it)";
}

// Compiles kSaxpySource for `arch` ("sm_90": SASS in a cubin; "compute_90": PTX for the driver).
Compiled compile(const std::string& arch, bool cubin) {
    nvrtcProgram prog;
    NVRTC_CHECK(nvrtcCreateProgram(&prog, kSaxpySource, "saxpy.cu", 0, nullptr, nullptr));
    std::string opt = "--gpu-architecture=" + arch;
    const char* opts[] = {opt.c_str(), "-std=c++17"};
    CpuTimer t;
    nvrtcResult r = nvrtcCompileProgram(prog, 2, opts);
    Compiled c;
    c.ms = t.stop_ms();
    size_t log_size = 0;
    NVRTC_CHECK(nvrtcGetProgramLogSize(prog, &log_size));
    if (r != NVRTC_SUCCESS || log_size > 1) {  // the log is "" (size 1) on a clean compile
        std::string log(log_size, '\0');
        NVRTC_CHECK(nvrtcGetProgramLog(prog, &log[0]));
        std::printf("NVRTC log for %s:\n%s\n", arch.c_str(), log.c_str());
    }
    NVRTC_CHECK(r);
    size_t size = 0;
    if (cubin) {
        NVRTC_CHECK(nvrtcGetCUBINSize(prog, &size));
        c.code.resize(size);
        NVRTC_CHECK(nvrtcGetCUBIN(prog, c.code.data()));
    } else {
        NVRTC_CHECK(nvrtcGetPTXSize(prog, &size));  // includes the terminating NUL
        c.code.resize(size);
        NVRTC_CHECK(nvrtcGetPTX(prog, c.code.data()));
    }
    c.target = arch + (cubin ? " cubin" : " PTX");
    c.ptx = !cubin;
    NVRTC_CHECK(nvrtcDestroyProgram(&prog));
    return c;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Compiles saxpy at run time with NVRTC (cubin and PTX), loads and launches it.");
    long long n = args.integer("n", 1LL << 24, 1, 1LL << 30, "number of elements");
    double a_arg = args.real("a", 2.5, -1e6, 1e6, "the scalar a in a*x + y");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    const float a = (float)a_arg;
    const int block = 256;
    size_t bytes = n * sizeof(float);

    int nvrtc_major = 0, nvrtc_minor = 0, n_archs = 0;
    NVRTC_CHECK(nvrtcVersion(&nvrtc_major, &nvrtc_minor));
    NVRTC_CHECK(nvrtcGetNumSupportedArchs(&n_archs));
    std::vector<int> archs(n_archs);
    NVRTC_CHECK(nvrtcGetSupportedArchs(archs.data()));
    // A GPU newer than this NVRTC gets no SASS from it; its PTX for the newest known architecture
    // still runs, because the driver JIT-compiles PTX for any later GPU (guide 3.1.1.2, 3.1.3).
    // The code is loaded on the GPU this runs on: its own architecture, also under CUDA_LAB_PROFILE
    // (a profile's sm_75 SASS would not load on the real GPU; its compute_75 PTX would, JIT-compiled).
    const int real_cc = dev.real.major * 10 + dev.real.minor;
    bool sass_ok = false;
    for (int arch : archs) sass_ok |= arch == real_cc;
    int ptx_arch = std::min({dev.cc(), real_cc, archs.back()});  // PTX the real GPU can run
    std::printf("NVRTC %d.%d: %d architectures (sm_%d .. sm_%d); n = %lld, a = %g\n", nvrtc_major, nvrtc_minor,
                n_archs, archs.front(), archs.back(), n, a);

    std::vector<float> x = random_vector<float>(n, -1.f, 1.f, 1), y = random_vector<float>(n, -1.f, 1.f, 2);
    std::vector<float> ref(n), out(n);
    saxpy_cpu(a, x.data(), y.data(), ref.data(), n);

    float *d_x, *d_y, *d_out;
    CHECK(cudaMalloc(&d_x, bytes));
    CHECK(cudaMalloc(&d_y, bytes));
    CHECK(cudaMalloc(&d_out, bytes));
    CHECK(cudaMemcpy(d_x, x.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_y, y.data(), bytes, cudaMemcpyHostToDevice));

    std::vector<Compiled> versions;
    if (sass_ok) versions.push_back(compile("sm_" + std::to_string(real_cc), true));
    else std::printf("  (this NVRTC cannot emit SASS for sm_%d: cubin path skipped)\n", real_cc);
    versions.push_back(compile("compute_" + std::to_string(ptx_arch), false));

    // Load each version: for PTX this is where the driver's JIT compiler runs (or its cache answers);
    // with lazy loading (the default since CUDA 12.2) part of it may move to the first launch.
    unsigned grid = (unsigned)((n + block - 1) / block);
    void* kargs[] = {(void*)&a, (void*)&d_x, (void*)&d_y, (void*)&d_out, (void*)&n};
    std::vector<compat::LoadedKernel> kernels(versions.size());
    std::vector<double> load_ms(versions.size());
    std::vector<char> loaded(versions.size(), 0);  // to unload: a lazily loaded PTX may be refused at launch
    // The driver refuses PTX newer than it knows at the load, or (lazy loading) at the first launch.
    // Only a driver older than this NVRTC explains the refusal; with a driver as new, it is a fault.
    int driver_version = 0;
    if (cudaDriverGetVersion(&driver_version) != cudaSuccess) driver_version = 0;
    const bool driver_older = driver_version < nvrtc_major * 1000 + nvrtc_minor * 10;
    auto refused = [&](size_t k, cudaError_t e) {
        if (e != cudaErrorUnsupportedPtxVersion || !versions[k].ptx || !driver_older) return false;
        (void)cudaGetLastError();  // a load error, not a sticky one: clear it for the calls that follow
        versions[k].refused = true;
        return true;
    };
    for (size_t k = 0; k < versions.size(); ++k) {
        CpuTimer t;
        cudaError_t e = compat::load_kernel(&kernels[k], versions[k].code.data(), "saxpy");  // load + look up
        load_ms[k] = t.stop_ms();
        if (!refused(k, e)) CHECK(e);
        loaded[k] = e == cudaSuccess;
    }
    auto launcher = [&](size_t k) {
        return [&, k] { CHECK(compat::launch_loaded(kernels[k], grid, block, kargs)); };
    };

    // Validate every version before timing any of them.
    Verdict verdict;
    for (size_t k = 0; k < versions.size(); ++k) {
        if (versions[k].refused) continue;
        CHECK(cudaMemset(d_out, 0xff, bytes));  // NaN pattern: a skipped element cannot pass
        cudaError_t e = compat::launch_loaded(kernels[k], grid, block, kargs);
        if (refused(k, e)) continue;
        CHECK(e);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(out.data(), d_out, bytes, cudaMemcpyDeviceToHost));
        verdict.exact(versions[k].target, ref.data(), out.data(), n);
    }
    std::string reason = ptx_refused_reason(nvrtc_major, nvrtc_minor);
    bool any_ran = false;
    for (const Compiled& v : versions) {
        if (v.refused) std::printf("  skip  %-34s SKIPPED: %s\n", v.target.c_str(), reason.c_str());
        any_ran |= !v.refused;
    }
    if (!any_ran) skip(reason + "; this NVRTC has no cubin for sm_" + std::to_string(real_cc) + " either");

    std::printf("\n%-18s %9s %11s %13s %10s %9s\n", "code", "bytes", "compile ms", "load+get ms", "kernel ms",
                "GB/s");
    for (size_t k = 0; k < versions.size(); ++k) {
        if (versions[k].refused) {
            std::printf("%-18s %9zu %11.1f %13s %10s %9s\n", versions[k].target.c_str(), versions[k].code.size(),
                        versions[k].ms, "refused", "-", "-");
            continue;
        }
        double ms = bench_ms(launcher(k), reps);
        std::printf("%-18s %9zu %11.1f %13.1f %10.3f %9.1f\n", versions[k].target.c_str(), versions[k].code.size(),
                    versions[k].ms, load_ms[k], ms, gbps(3.0 * bytes, ms));  // read x and y, write out
    }
    for (size_t k = 0; k < versions.size(); ++k)
        if (loaded[k]) CHECK(compat::unload_kernel(kernels[k]));
    std::printf("compile time is paid once per run (NVRTC) or once per driver (PTX JIT, then cached)\n");

    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_y));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
