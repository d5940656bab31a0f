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
// Output: the graph's node and kernel-node counts, the number of instantiations, the CPU check, the
//         checks of the rules (counted by the program: every step computed by the kernels; one
//         instantiation, of 2 kernel nodes; `steps` graph launches, each of which ran 2 kernels, and
//         no kernel run outside them), PASSED.
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

// The exercise's rules (one instantiation, of a graph of the step's 2 kernels; every step a launch of
// the executable graph, no plain launch) are checked: from here on the program's cudaGraphInstantiate
// and cudaGraphLaunch are these counting wrappers, and the kernels count the launches that ran
// (kernel_runs). counted_instantiate records how many of the graph's nodes are kernel nodes;
// counted_launch waits for the whole device before and after the graph launch and reads kernel_runs
// each time, so that it sees how many kernels that graph launch ran (2: scale and shift) and how many
// ran outside graph launches (before the first, between two, after the last: plain launches). The
// waits make the host wait for every step, where graph launches would otherwise queue ahead of the
// GPU; this program times nothing, and the counts must not mix steps.
static int graph_instantiations = 0, graph_launches = 0, launches_not_two = 0;
static size_t graph_nodes = 0, graph_kernel_nodes = 0;
static unsigned long long runs_seen = 0, runs_in_graphs = 0, runs_outside = 0;
static cudaError_t counted_instantiate(cudaGraphExec_t* exec, cudaGraph_t g, unsigned long long flags = 0) {
    ++graph_instantiations;
    CHECK(cudaGraphGetNodes(g, nullptr, &graph_nodes));
    std::vector<cudaGraphNode_t> nodes(graph_nodes);
    if (graph_nodes) CHECK(cudaGraphGetNodes(g, nodes.data(), &graph_nodes));
    graph_kernel_nodes = 0;
    for (cudaGraphNode_t node : nodes) {
        cudaGraphNodeType type;
        CHECK(cudaGraphNodeGetType(node, &type));
        graph_kernel_nodes += type == cudaGraphNodeTypeKernel;
    }
    return cudaGraphInstantiate(exec, g, flags);
}
// kernel_runs once every kernel queued so far has run; what it grew by since the last graph launch
// ended ran outside a graph launch.
static unsigned long long runs_now() {
    CHECK(cudaDeviceSynchronize());
    unsigned long long runs = 0;
    CHECK(cudaMemcpyFromSymbol(&runs, kernel_runs, sizeof runs));
    runs_outside += runs - runs_seen;
    runs_seen = runs;
    return runs;
}
static cudaError_t counted_launch(cudaGraphExec_t exec, cudaStream_t s) {
    ++graph_launches;
    unsigned long long before = runs_now();
    cudaError_t e = cudaGraphLaunch(exec, s);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpyFromSymbol(&runs_seen, kernel_runs, sizeof runs_seen));
    runs_in_graphs += runs_seen - before;
    launches_not_two += runs_seen - before != 2;
    return e;
}
#define cudaGraphInstantiate counted_instantiate
#define cudaGraphInstantiateWithFlags counted_instantiate
#define cudaGraphLaunch counted_launch

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: a captured two-kernel step replayed as a CUDA graph; the final check fails.");
    int n = (int)args.integer("n", 100003, 1, 1 << 22, "uint32 elements in the state (the CPU check costs steps x n)");
    int steps = (int)args.integer("steps", 20, 2, 1000, "steps (graph launches; two device syncs each)");
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
    unsigned long long runs = runs_now();  // after the last graph launch: kernels that ran outside it
    std::printf("%d steps: graph of %zu nodes (%zu kernel nodes), %d instantiation(s), %d graph launches (the "
                "program's counts)\n", steps, graph_nodes, graph_kernel_nodes, graph_instantiations, graph_launches);

    std::vector<uint32_t> got(n);
    CHECK(cudaMemcpy(got.data(), d_x, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    Verdict verdict;
    verdict.exact("state after all steps vs CPU", expected.data(), got.data(), n);
    // Every step's result, written by shift: the sum of what the CPU's steps give at each address.
    std::vector<uint32_t> state = x;
    unsigned long long want = 0, wrote = 0;
    for (int i = 0; i < steps; ++i) {
        Step p = step_params(i);
        for (int j = 0; j < n; ++j) {
            state[j] = state[j] * p.mul + p.add;
            want += witness(d_x + j, state[j]);
        }
    }
    CHECK(cudaMemcpyFromSymbol(&wrote, gpu_witness, sizeof wrote));
    verdict.check(wrote == want, "every step computed by the kernels, in order");
    verdict.check(graph_instantiations == 1 && graph_nodes == 2 && graph_kernel_nodes == 2,
                  "one instantiation, of a graph of 2 kernel nodes (" + std::to_string(graph_instantiations) +
                      " instantiation(s), " + std::to_string(graph_nodes) + " nodes, " +
                      std::to_string(graph_kernel_nodes) + " kernel nodes)");
    verdict.check(graph_launches == steps && launches_not_two == 0 && runs_outside == 0,
                  "every step one graph launch, which ran 2 kernels; no plain launches (" +
                      std::to_string(graph_launches) + " graph launches, " + std::to_string(launches_not_two) +
                      " of them not 2 kernel runs; kernel runs: " + std::to_string(runs_in_graphs) + " inside graph "
                      "launches, " + std::to_string(runs_outside) + " outside, " + std::to_string(runs) + " in all)");

    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d_x));
    return verdict.finish();
}
