// compilation - which code runs: SASS for the GPU's architecture, or PTX compiled just in time.
//
// Manual: G 3.1.1 编译流程 (3.1.1.1 离线编译, 3.1.1.2 即时编译), G 3.1.2 Binary 兼容性,
//         G 3.1.3 PTX 兼容性, G 3.1.4 应用程序兼容性 (-gencode, __CUDA_ARCH__); N 1.1.1 常用命令.
// Compile: nvcc -std=c++17 -O3 -I../common -gencode arch=compute_75,code=[sm_75,compute_75]
//            -gencode arch=compute_80,code=sm_80 -gencode arch=compute_86,code=sm_86
//            -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90,code=sm_90
//            -o compilation compilation.cu
// Shows:  the Makefile builds this program (and only this one) with a fat binary holding SASS
//         for sm_75, 80, 86, 89 and 90 but PTX only for compute_75. At load time the driver picks
//         the most appropriate code: SASS for the GPU's own architecture when there is one
//         (binaryVersion = CC, and the kernel sees __CUDA_ARCH__ = CC x 10). The program then
//         re-runs itself in a child process with CUDA_FORCE_PTX_JIT=1 set before CUDA starts:
//         the driver ignores the SASS and JIT-compiles the compute_75 PTX for this GPU
//         (binaryVersion = CC, ptxVersion = 75, __CUDA_ARCH__ = 750), which costs time at module
//         load the first time (the driver keeps the result in its compute cache, ~/.nv/ComputeCache,
//         so a second run loads fast). A GPU newer than sm_90 has no SASS here and always takes the PTX path -
//         the only way code runs on an architecture that did not exist at build time (G 3.1.4).
//         Both runs compute y = x*x - 3x and are checked against the CPU.
//         A driver older than the toolkit refuses the toolkit's PTX at the JIT
//         (cudaErrorUnsupportedPtxVersion, "the provided PTX was compiled with an unsupported
//         toolchain": Colab's nvcc 12.5 with a driver for CUDA 12.4): the SASS still runs, so the
//         forced-JIT row says SKIPPED and the default run decides; where the PTX is the only code
//         for this GPU (newer than sm_90, or CUDA_FORCE_PTX_JIT=1 already set) the program skips (77).
//         `make -C 01_intro arch-lab` builds variants with other -arch / -gencode settings into
//         a temporary directory and lists their contents with cuobjdump --list-elf / --list-ptx.
// Build:  make compilation       Run: ./compilation [--n=1000003]
// Output: one row per run (default, forced JIT): __CUDA_ARCH__, ptxVersion, binaryVersion, load
//         time and the code path, then the checks and PASSED.
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
#include "common.cuh"

// CPU reference.
void poly_cpu(const int* x, int* y, int n) {
    for (int i = 0; i < n; ++i) y[i] = x[i] * x[i] - 3 * x[i];
}

// __CUDA_ARCH__ exists only while compiling device code, once per virtual architecture: its
// value tells which PTX (or which compute_XX the SASS was built from) this code came from.
__global__ void poly(const int* x, int* y, int n, int* arch) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef __CUDA_ARCH__
    if (i == 0) *arch = __CUDA_ARCH__;
#endif
    if (i < n) y[i] = x[i] * x[i] - 3 * x[i];
}

struct Report {
    int arch = -1, ptx = -1, binary = -1, cc = -1;
    long long mismatches = -1;
    double load_ms = 0;
    bool ptx_refused = false;  // the driver cannot JIT-compile this toolkit's PTX (older than the toolkit)
};

// Loads the kernel (timed: this is where a JIT compile happens), runs it, checks it on the CPU.
Report run(int device, int n, bool banner, std::vector<int>* got = nullptr) {
    DeviceInfo dev = select_device(device, banner);
    Report r;
    r.cc = dev.real.major * 10 + dev.real.minor;  // the GPU the JIT compiles for (also under a profile)
    cudaFuncAttributes fa;
    CpuTimer load;
    cudaError_t loaded = cudaFuncGetAttributes(&fa, poly);  // loads the module (lazy loading): SASS or JIT
    r.load_ms = load.stop_ms();
    int driver = 0;  // the refusal is "the driver is older than the toolkit" only if it is: else a fault
    if (loaded == cudaErrorUnsupportedPtxVersion && cudaDriverGetVersion(&driver) == cudaSuccess &&
        driver < CUDART_VERSION) {  // PTX newer than this driver's JIT compiler knows
        r.ptx_refused = true;
        return r;
    }
    CHECK(loaded);  // cudaFuncGetAttributes: e.g. no SASS for this GPU and no PTX (cudaErrorNoKernelImageForDevice)
    r.ptx = fa.ptxVersion;
    r.binary = fa.binaryVersion;

    std::vector<int> x = random_vector<int>(n, -10000, 10000, 1), ref(n), y(n);
    poly_cpu(x.data(), ref.data(), n);
    int *d_x, *d_y, *d_arch;
    CHECK(cudaMalloc(&d_x, n * sizeof(int)));
    CHECK(cudaMalloc(&d_y, n * sizeof(int)));
    CHECK(cudaMalloc(&d_arch, sizeof(int)));
    CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_y, 0xff, n * sizeof(int)));
    CHECK(cudaMemset(d_arch, 0xff, sizeof(int)));
    poly<<<(n + 255) / 256, 256>>>(d_x, d_y, n, d_arch);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(y.data(), d_y, n * sizeof(int), cudaMemcpyDeviceToHost));
    lab_corrupt(y.data(), n);  // CUDA_LAB_CORRUPT: the child's count below must be able to fail (corrupt.h)
    CHECK(cudaMemcpy(&r.arch, d_arch, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_y));
    CHECK(cudaFree(d_arch));
    r.mismatches = 0;
    for (int i = 0; i < n; ++i) r.mismatches += y[i] != ref[i];
    if (got) *got = y;
    return r;
}

// The forced-JIT run, in a child forked before this process touches CUDA: the driver reads
// CUDA_FORCE_PTX_JIT when it initializes, so the variable must be set before the first call.
Report run_jit_child(int device, int n, int* exit_code) {
    Report r;
    int fd[2];
    if (pipe(fd) != 0) return r;
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        int devnull = open("/dev/null", O_WRONLY);  // the parent prints the report; a CUDA error
        if (devnull >= 0) dup2(devnull, 1);          // still shows: CHECK writes it to stderr
        setenv("CUDA_FORCE_PTX_JIT", "1", 1);
        Report c = run(device, n, false);
        if (write(fd[1], &c, sizeof c) != sizeof c) std::_Exit(3);
        std::_Exit(0);
    }
    close(fd[1]);
    if (read(fd[0], &r, sizeof r) != sizeof r) r = Report();
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

// Why the PTX did not run: the driver's CUDA version is older than the toolkit's that wrote the PTX.
static std::string ptx_refused_reason() {
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    return "this driver is older than the toolkit: its PTX cannot be JIT-compiled (cudaErrorUnsupportedPtxVersion; "
           "the driver supports CUDA " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) +
           ", this program was built with CUDA " + std::to_string(CUDART_VERSION / 1000) + "." +
           std::to_string(CUDART_VERSION % 1000 / 10) +
           "; a newer driver, or a toolkit no newer than the driver, runs it)";
}

static std::string path(const Report& r) {
    char buf[96];
    if (r.ptx_refused)
        std::snprintf(buf, sizeof buf, "SKIPPED: the driver refused the PTX (older than the toolkit)");
    else if (r.ptx < r.binary)
        std::snprintf(buf, sizeof buf, "PTX compute_%d JIT-compiled for sm_%d", r.ptx, r.binary);
    else
        std::snprintf(buf, sizeof buf, "SASS sm_%d (or PTX of the same arch)", r.binary);
    return buf;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Shows which code the driver runs: SASS, or the PTX JIT-compiled (CUDA_FORCE_PTX_JIT=1).");
    int n = (int)args.integer("n", 1000003, 1, 1 << 26, "elements of the small computation");
    args.parse_or_exit();

    int child_rc = 0;
    Report jit = run_jit_child(args.device(), n, &child_rc);
    std::vector<int> y;
    Report def = run(args.device(), n, true, &y);  // skips here (77) when there is no GPU
    if (def.ptx_refused) skip(ptx_refused_reason() + "; the default run found no SASS for this GPU either "
                                    "(a GPU newer than sm_90, or CUDA_FORCE_PTX_JIT=1 set)");
    const char* env = std::getenv("CUDA_FORCE_PTX_JIT");
    if (env && *env == '1') std::printf("note: CUDA_FORCE_PTX_JIT=1 is already set: both runs use the PTX\n");

    std::printf("%-24s %13s %10s %13s %9s  %s\n", "run", "__CUDA_ARCH__", "ptxVersion", "binaryVersion", "load ms",
                "code path");
    const Report* rows[2] = {&def, &jit};
    const char* names[2] = {"default", "CUDA_FORCE_PTX_JIT=1"};
    for (int i = 0; i < 2; ++i) {
        if (rows[i]->ptx_refused)
            std::printf("%-24s %13s %10s %13s %9.2f  %s\n", names[i], "-", "-", "-", rows[i]->load_ms,
                        path(*rows[i]).c_str());
        else
            std::printf("%-24s %13d %10d %13d %9.2f  %s\n", names[i], rows[i]->arch, rows[i]->ptx, rows[i]->binary,
                        rows[i]->load_ms, path(*rows[i]).c_str());
    }

    Verdict verdict;
    std::vector<int> x = random_vector<int>(n, -10000, 10000, 1), ref(n);
    poly_cpu(x.data(), ref.data(), n);
    verdict.exact("default run vs CPU", ref.data(), y.data(), n);
    if (child_rc == 0 && jit.ptx_refused) {  // the SASS run above still checked the GPU's results
        std::printf("  skip  %-34s SKIPPED: %s\n", "forced-JIT run vs CPU", ptx_refused_reason().c_str());
        verdict.check(def.arch == 10 * def.ptx, "__CUDA_ARCH__ = 10 x ptxVersion");
        return verdict.finish();
    }
    verdict.check(child_rc == 0 && jit.mismatches == 0, "forced-JIT run vs CPU");
    verdict.check(def.arch == 10 * def.ptx && jit.arch == 10 * jit.ptx, "__CUDA_ARCH__ = 10 x ptxVersion");
    // JIT output is native code for exactly this GPU; the PTX it came from is the oldest one.
    verdict.note(jit.binary == def.cc && jit.ptx <= def.ptx, "JIT: binary for this GPU, from PTX");
    return verdict.finish();
}
