// graph_params - exercise (fix): a time step of two kernels, captured into a CUDA graph and
//                replayed step after step; the CPU check of the final state fails.
//
// Manual: G 3.2.6.6 CUDA图 (3.2.6.6.3 使用流捕获创建图, 3.2.6.6.4 更新实例化图).
// The program advances a state of n uint32 through --steps steps. Step i applies two kernels,
// x -> x * mul_i, then x -> x + add_i (mod 2^32), whose constants change from step to step. As in
// the guide's update loop, each step is captured from a stream into a graph, the first capture is
// instantiated, and the executable graph is launched once per step. At the end the state is
// compared with the CPU, which applies the same steps exactly.
// Your task: find out why the CPU check fails and fix it without giving up the executable graph
// (no re-instantiation per step, no plain stream launches).
// Build and check: from the chapter folder, `make exercises` builds workspace/graph_params from your
// copy, `make check` runs it and says solved / not yet (with a hint after a miss).
// Run:    cd workspace && ./graph_params [--n=100003] [--steps=20]
// Output: the graph's node count, the number of instantiations, the CPU check, the checks of the
//         rules (counted by the program: one instantiation, `steps` graph launches, no plain
//         launch, every step computed by the kernels), PASSED.
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <cstdint>
#include <vector>
#include "common.cuh"
#include "witness.cuh"  // gpu_witness, witness(), witness_sum(), witness_now(): the kernel's record

struct Step {
    uint32_t mul, add;
};
// Step i's constants: odd multipliers, so no step loses information.
Step step_params(int i) { return {3u + 2u * (uint32_t)i, 0x9E3779B9u * (uint32_t)i + 1u}; }

__device__ unsigned long long kernel_runs;  // launches of scale and shift that ran (graph or not)

__global__ void scale(uint32_t* x, int n, uint32_t mul) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) atomicAdd(&kernel_runs, 1ull);
    if (i < n) x[i] *= mul;
}
__global__ void shift(uint32_t* x, int n, uint32_t add) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) atomicAdd(&kernel_runs, 1ull);
    if (i < n) {
        x[i] += add;
        atomicAdd(&gpu_witness, witness(&x[i], x[i]));  // every step's result, step by step
    }
}

// The two kernels of one step, queued in stream s (or recorded, while s captures).
void enqueue_step(cudaStream_t s, uint32_t* d_x, int n, Step p) {
    unsigned grid = (unsigned)((n + 255) / 256);
    scale<<<grid, 256, 0, s>>>(d_x, n, p.mul);
    shift<<<grid, 256, 0, s>>>(d_x, n, p.add);
    CHECK(cudaGetLastError());  // not CHECK_LAUNCH(): with DEBUG=1 it synchronizes, invalid while capturing
}

// The exercise's rules (one instantiation, every step a launch of the executable graph) are checked:
// from here on the program's cudaGraphInstantiate and cudaGraphLaunch are these counting wrappers,
// and the kernels count the launches that ran.
static int graph_instantiations = 0, graph_launches = 0;
static size_t graph_nodes = 0;
static cudaError_t counted_instantiate(cudaGraphExec_t* exec, cudaGraph_t g, unsigned long long flags = 0) {
    ++graph_instantiations;
    CHECK(cudaGraphGetNodes(g, nullptr, &graph_nodes));
    return cudaGraphInstantiate(exec, g, flags);
}
static cudaError_t counted_launch(cudaGraphExec_t exec, cudaStream_t s) {
    ++graph_launches;
    return cudaGraphLaunch(exec, s);
}
#define cudaGraphInstantiate counted_instantiate
#define cudaGraphInstantiateWithFlags counted_instantiate
#define cudaGraphLaunch counted_launch

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: a captured two-kernel step replayed as a CUDA graph; the final check fails.");
    int n = (int)args.integer("n", 100003, 1, 1 << 26, "uint32 elements in the state");
    int steps = (int)args.integer("steps", 20, 2, 10000, "steps (graph launches)");
    args.parse_or_exit();

    select_device(args.device());
    std::vector<uint32_t> x = random_vector<uint32_t>(n, 0u, 0xffffffffu, 51), expected = x;
    for (int i = 0; i < steps; ++i) {
        Step p = step_params(i);
        for (auto& v : expected) v = v * p.mul + p.add;
    }
    uint32_t* d_x;
    CHECK(cudaMalloc(&d_x, n * sizeof(uint32_t)));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMemcpyAsync(d_x, x.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice, s));  // in s: before the graphs

    cudaGraphExec_t exec = nullptr;
    int instantiations = 0;
    size_t nodes = 0;
    // Your region is a function: it sees copies of main's variables, which stay as they are, except exec, instantiations and nodes.
    auto your_region = [=, &exec, &instantiations, &nodes]() {
    // ---- your change: begin ----
    for (int i = 0; i < steps; ++i) {
        cudaGraph_t g;
        CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        enqueue_step(s, d_x, n, step_params(i));
        CHECK(cudaStreamEndCapture(s, &g));
        if (!exec) {
            CHECK(cudaGraphGetNodes(g, nullptr, &nodes));
            CHECK(cudaGraphInstantiate(&exec, g, 0));  // CUDA 12+: (exec, graph, flags)
            ++instantiations;
        } else {
            // The executable graph is a snapshot: it keeps the kernel arguments of the capture it was
            // instantiated from. Same topology, new arguments: update it in place (3.2.6.6.4.2).
            cudaGraphExecUpdateResultInfo info{};
            CHECK(cudaGraphExecUpdate(exec, g, &info));
        }
        CHECK(cudaGraphDestroy(g));
        CHECK(cudaGraphLaunch(exec, s));
    }
    // ---- your change: end ----
    REGION_GUARD_RUNTIME();  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
    REGION_GUARD(witness); REGION_GUARD(step_params); REGION_GUARD_TYPE(Step); REGION_GUARD_TYPE(Verdict);
    };
    your_region();
    CHECK(cudaStreamSynchronize(s));
    std::printf("%d steps: graph of %zu nodes, %d instantiation(s), %d graph launches (the program's counts)\n", steps,
                graph_nodes, graph_instantiations, graph_launches);

    std::vector<uint32_t> got(n);
    CHECK(cudaMemcpy(got.data(), d_x, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    Verdict verdict;
    verdict.exact("state after all steps vs CPU", expected.data(), got.data(), n);
    // Every step's result, written by shift: the sum of what the CPU's steps give at each address.
    std::vector<uint32_t> state = x;
    unsigned long long want = 0, wrote = 0, runs = 0;
    for (int i = 0; i < steps; ++i) {
        Step p = step_params(i);
        for (int j = 0; j < n; ++j) {
            state[j] = state[j] * p.mul + p.add;
            want += witness(d_x + j, state[j]);
        }
    }
    CHECK(cudaMemcpyFromSymbol(&wrote, gpu_witness, sizeof wrote));
    CHECK(cudaMemcpyFromSymbol(&runs, kernel_runs, sizeof runs));
    verdict.check(wrote == want, "every step computed by the kernels, in order");
    verdict.check(graph_instantiations == 1 && graph_nodes == 2,
                  "one instantiation, of a graph of 2 nodes (" + std::to_string(graph_instantiations) +
                      " instantiation(s), " + std::to_string(graph_nodes) + " nodes)");
    verdict.check(graph_launches == steps && runs == 2ull * steps,
                  "every step one launch of the executable graph, no plain launches (" + std::to_string(graph_launches) +
                      " graph launches, " + std::to_string(runs) + " kernels ran)");

    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d_x));
    return verdict.finish();
}
