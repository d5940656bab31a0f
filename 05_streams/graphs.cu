// graphs - CUDA graphs: the guide's diamond built with the graph API and by stream capture, the
// launch cost of many tiny kernels in a stream vs one graph, and updating an instantiated graph.
//
// Manual: G 3.2.6.6 CUDA图: 3.2.6.6.1 图架构, 3.2.6.6.2 利用API创建图, 3.2.6.6.3 使用流捕获创建图
//         (3.2.6.6.3.1 跨流依赖性和事件), 3.2.6.6.4 更新实例化图 (3.2.6.6.4.2 全图更新,
//         3.2.6.6.4.3 单个节点更新), 3.2.6.6.5 使用图API.
// Shows:  a graph separates defining work from launching it. Instantiation validates the graph and
//         does most of the per-launch setup once, so launching a graph of K kernels costs the CPU
//         one call instead of K. The program
//           1. builds the diamond A -> {B, C} -> D with cudaGraphAddKernelNode +
//              cudaGraphAddDependencies, and again by capturing two streams joined by events
//              (fork: record in stream1, wait in stream2; join: the reverse); both have 4 nodes and
//              4 edges and compute the same as the CPU;
//           2. times K tiny dependent kernels launched one by one into a stream vs the same K
//              captured into one graph (CUDA-event median): microseconds per kernel and the ratio;
//           3. runs the guide's 10-iteration loop: capture, cudaGraphExecUpdate, re-instantiate only
//              when the update fails (iteration 5 adds a node on purpose, so 5 and 6 must
//              re-instantiate), each result checked;
//           4. changes one kernel node's arguments in the executable graph
//              (cudaGraphExecKernelNodeSetParams) without touching the graph it came from.
//         CUDA 12+ signatures (the guide's listings use the older ones): cudaGraphInstantiate(&exec,
//         graph, flags); cudaGraphExecUpdate(exec, graph, &cudaGraphExecUpdateResultInfo);
//         CUDA 13 adds an edge-data argument to cudaGraphAddDependencies and cudaGraphGetEdges
//         (the guide's and CUDA 12's cudaGraphAddDependencies(graph, from, to, n) becomes
//         (graph, from, to, edgeData, n); 12.3-12.9 call that form ..._v2): the program calls
//         compat::graph_add_dependencies / graph_get_edges (common/cuda_compat.cuh), which
//         build with CUDA 12.x and 13.x.
// Build:  make graphs   (nvcc -std=c++17 -O3 -arch=native -I../common -o graphs graphs.cu)
// Run:    ./graphs [--n=2^20] [--kernels=1000] [--reps=20] [--csv=FILE] [--only=REGEX]
// Output: node / edge counts and checks, a stream-vs-graph table (time per K launches, x stream),
//         microseconds per kernel and the ratio, the update loop's instantiate / update counts, PASSED.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>
#include "common.cuh"
#include "cuda_compat.cuh"
#include "results.cuh"

// out = in1 * mul + in2 + add (in2 may be null), in 32-bit unsigned arithmetic: wraps the same
// way on the CPU and the GPU, so results compare exactly.
__global__ void combine(uint32_t* out, const uint32_t* in1, const uint32_t* in2, int n, uint32_t mul, uint32_t add) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in1[i] * mul + (in2 ? in2[i] : 0u) + add;
}

// The launch-cost kernel: almost no work, so a sequence of them measures launch overhead.
__global__ void tick(uint32_t* v) { v[threadIdx.x] += 1u; }

struct Diamond {  // the constants of A, B, C, D (the update loop changes them per iteration)
    uint32_t mul_a, add_a, mul_b, add_b, mul_c, add_c, add_d;
};

// A: a = x*mul_a + add_a; B: b = a*mul_b + add_b; C: c = a*mul_c + add_c; D: d = b + c + add_d.
// extra (the update loop's changed topology): E: d = d*7 + 1.
std::vector<uint32_t> diamond_cpu(const std::vector<uint32_t>& x, const Diamond& p, bool extra = false) {
    std::vector<uint32_t> d(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        uint32_t a = x[i] * p.mul_a + p.add_a;
        uint32_t b = a * p.mul_b + p.add_b;
        uint32_t c = a * p.mul_c + p.add_c;
        d[i] = b + c + p.add_d;
        if (extra) d[i] = d[i] * 7u + 1u;
    }
    return d;
}

struct Buffers {
    uint32_t *x, *a, *b, *c, *d;
    int n;
};

const int BLOCK = 256;

// The diamond issued into two streams (the guide's 3.2.6.6.3.1 listing): stream1 is the origin
// stream; stream2 is forked from it with an event and joined back with another before D.
void diamond_streams(const Buffers& m, const Diamond& p, cudaStream_t s1, cudaStream_t s2, cudaEvent_t fork,
                     cudaEvent_t join, bool extra = false) {
    int grid = (m.n + BLOCK - 1) / BLOCK;
    combine<<<grid, BLOCK, 0, s1>>>(m.a, m.x, nullptr, m.n, p.mul_a, p.add_a);  // A
    CHECK(cudaEventRecord(fork, s1));
    CHECK(cudaStreamWaitEvent(s2, fork, 0));
    combine<<<grid, BLOCK, 0, s1>>>(m.b, m.a, nullptr, m.n, p.mul_b, p.add_b);  // B
    combine<<<grid, BLOCK, 0, s2>>>(m.c, m.a, nullptr, m.n, p.mul_c, p.add_c);  // C
    CHECK(cudaEventRecord(join, s2));
    CHECK(cudaStreamWaitEvent(s1, join, 0));
    combine<<<grid, BLOCK, 0, s1>>>(m.d, m.b, m.c, m.n, 1u, p.add_d);  // D
    if (extra) combine<<<grid, BLOCK, 0, s1>>>(m.d, m.d, nullptr, m.n, 7u, 1u);  // E
    // Not CHECK_LAUNCH(): with DEBUG=1 it synchronizes, which is invalid while a stream captures.
    CHECK(cudaGetLastError());
}

cudaGraph_t capture_diamond(const Buffers& m, const Diamond& p, cudaStream_t s1, cudaStream_t s2, cudaEvent_t fork,
                            cudaEvent_t join, bool extra = false) {
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    diamond_streams(m, p, s1, s2, fork, join, extra);
    CHECK(cudaStreamEndCapture(s1, &g));  // s2 has been joined back, so the capture ends cleanly
    return g;
}

cudaKernelNodeParams combine_params(void** args, int n) {
    cudaKernelNodeParams k{};
    k.func = (void*)combine;
    k.gridDim = dim3((n + BLOCK - 1) / BLOCK);
    k.blockDim = dim3(BLOCK);
    k.sharedMemBytes = 0;
    k.kernelParams = args;  // copied into the node by the call that takes these parameters
    k.extra = nullptr;
    return k;
}

void count_nodes_edges(cudaGraph_t g, size_t* nodes, size_t* edges) {
    CHECK(cudaGraphGetNodes(g, nullptr, nodes));
    // Null from/to: only count. CUDA 13: cudaGraphGetEdges(g, from, to, edgeData, &n); 12.x:
    // (g, from, to, &n) - compat::graph_get_edges (common/cuda_compat.cuh) calls the right one.
    CHECK(compat::graph_get_edges(g, nullptr, nullptr, edges));
}

// Poisons d, launches the executable graph, waits, and compares d with the CPU's result.
void run_and_check(Verdict& v, const std::string& what, cudaGraphExec_t exec, cudaStream_t s, const Buffers& m,
                   const std::vector<uint32_t>& expected) {
    CHECK(cudaMemsetAsync(m.d, 0xff, m.n * sizeof(uint32_t), s));  // a D that did not run fails
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    std::vector<uint32_t> got(m.n);
    CHECK(cudaMemcpy(got.data(), m.d, m.n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    lab_corrupt(got.data(), got.size());  // CUDA_LAB_CORRUPT: the update loop's check must be able to fail too
    if (!what.empty()) v.exact(what, expected.data(), got.data(), m.n);
    else if (got != expected) v.exact("update loop", expected.data(), got.data(), m.n);
}

const char* update_result_name(cudaGraphExecUpdateResult r) {
    switch (r) {
    case cudaGraphExecUpdateSuccess: return "Success";
    case cudaGraphExecUpdateError: return "Error";
    case cudaGraphExecUpdateErrorTopologyChanged: return "ErrorTopologyChanged";
    case cudaGraphExecUpdateErrorNodeTypeChanged: return "ErrorNodeTypeChanged";
    case cudaGraphExecUpdateErrorFunctionChanged: return "ErrorFunctionChanged";
    case cudaGraphExecUpdateErrorParametersChanged: return "ErrorParametersChanged";
    case cudaGraphExecUpdateErrorNotSupported: return "ErrorNotSupported";
    default: return "other";
    }
}

int main(int argc, char** argv) {
    Args args(argc, argv, "CUDA graphs: diamond by API and by capture, stream vs graph launch cost, graph updates.");
    long long n_arg = args.integer("n", 1 << 20, 1, 1 << 26, "elements in each diamond buffer");
    int kernels = (int)args.integer("kernels", 1000, 1, 100000, "tiny kernels per launch-cost run");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "graphs", Results::TIME_ONLY);
    args.parse_or_exit();
    table.validate();
    int n = (int)n_arg;

    DeviceInfo dev = select_device(args.device());
    (void)dev;
    Verdict verdict;
    size_t bytes = (size_t)n * sizeof(uint32_t);
    std::vector<uint32_t> x = random_vector<uint32_t>(n, 0, 0xffffffffu, 11);
    Buffers m;
    m.n = n;
    CHECK(cudaMalloc(&m.x, bytes));
    CHECK(cudaMalloc(&m.a, bytes));
    CHECK(cudaMalloc(&m.b, bytes));
    CHECK(cudaMalloc(&m.c, bytes));
    CHECK(cudaMalloc(&m.d, bytes));
    // Capture is not allowed on the legacy NULL stream, and a capturing blocking stream would make
    // every use of the legacy stream invalid (3.2.6.6.3.2): non-blocking streams.
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t fork, join;
    CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));

    // 1a. The diamond with the graph API, nodes first, then the edges (3.2.6.6.2).
    Diamond p0{3u, 12345u, 5u, 777u, 0x9E3779B1u, 13u, 17u};
    const uint32_t* none = nullptr;
    uint32_t one = 1u;
    cudaGraph_t api_graph;
    CHECK(cudaGraphCreate(&api_graph, 0));
    void* args_a[] = {&m.a, &m.x, &none, &m.n, &p0.mul_a, &p0.add_a};
    void* args_b[] = {&m.b, &m.a, &none, &m.n, &p0.mul_b, &p0.add_b};
    void* args_c[] = {&m.c, &m.a, &none, &m.n, &p0.mul_c, &p0.add_c};
    void* args_d[] = {&m.d, &m.b, &m.c, &m.n, &one, &p0.add_d};
    cudaKernelNodeParams kp_a = combine_params(args_a, n), kp_b = combine_params(args_b, n),
                         kp_c = combine_params(args_c, n), kp_d = combine_params(args_d, n);
    cudaGraphNode_t na, nb, nc, nd;
    CHECK(cudaGraphAddKernelNode(&na, api_graph, nullptr, 0, &kp_a));
    CHECK(cudaGraphAddKernelNode(&nb, api_graph, nullptr, 0, &kp_b));
    CHECK(cudaGraphAddKernelNode(&nc, api_graph, nullptr, 0, &kp_c));
    CHECK(cudaGraphAddKernelNode(&nd, api_graph, nullptr, 0, &kp_d));
    cudaGraphNode_t from[4] = {na, na, nb, nc}, to[4] = {nb, nc, nd, nd};  // A->B, A->C, B->D, C->D
    // CUDA 13: cudaGraphAddDependencies(graph, from, to, edgeData, n), edgeData null for plain edges;
    // 12.x and the guide: (graph, from, to, n). compat:: picks the form of the toolkit in use.
    CHECK(compat::graph_add_dependencies(api_graph, from, to, 4));
    size_t nodes = 0, edges = 0;
    count_nodes_edges(api_graph, &nodes, &edges);
    std::printf("1. diamond A->{B,C}->D, graph API: %zu nodes, %zu edges\n", nodes, edges);
    verdict.note(nodes == 4 && edges == 4, "API graph: 4 nodes, 4 edges");  // what this program added
    cudaGraphExec_t api_exec;
    CHECK(cudaGraphInstantiate(&api_exec, api_graph, 0));  // CUDA 12+: (exec, graph, flags)
    std::vector<uint32_t> ref0 = diamond_cpu(x, p0);
    // The input goes up in s1, where the graphs run: a cudaMemcpy on the legacy stream would not be
    // ordered before them (s1 is non-blocking), and from pageable memory it returns once the data is
    // staged, before it has reached m.x. Issued right before the first launch, so that no host work
    // in between (the instantiation, the CPU reference) hides a missing order.
    CHECK(cudaMemcpyAsync(m.x, x.data(), bytes, cudaMemcpyHostToDevice, s1));
    run_and_check(verdict, "API graph result vs CPU", api_exec, s1, m, ref0);

    // 1b. The same diamond by stream capture with fork / join events (3.2.6.6.3.1).
    cudaGraph_t cap_graph = capture_diamond(m, p0, s1, s2, fork, join);
    count_nodes_edges(cap_graph, &nodes, &edges);
    std::printf("   stream capture with fork/join events: %zu nodes, %zu edges (the events became edges)\n", nodes,
                edges);
    verdict.check(nodes == 4 && edges == 4, "captured graph: 4 nodes, 4 edges");
    cudaGraphExec_t cap_exec;
    CHECK(cudaGraphInstantiate(&cap_exec, cap_graph, 0));
    run_and_check(verdict, "captured graph result vs CPU", cap_exec, s1, m, ref0);

    // 2. Launch cost: K dependent tiny kernels, one by one into a stream vs one graph launch. Each
    //    run adds K to every counter, which the check verifies.
    const int lanes = 32;
    std::vector<uint32_t> v0 = random_vector<uint32_t>(lanes, 0, 1u << 30, 12), v_expect(lanes);
    for (int i = 0; i < lanes; ++i) v_expect[i] = v0[i] + (uint32_t)kernels;
    uint32_t* d_v;
    CHECK(cudaMalloc(&d_v, lanes * sizeof(uint32_t)));
    cudaGraph_t tick_graph;
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    for (int k = 0; k < kernels; ++k) tick<<<1, lanes, 0, s1>>>(d_v);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamEndCapture(s1, &tick_graph));
    cudaGraphExec_t tick_exec;
    CpuTimer inst_timer;
    CHECK(cudaGraphInstantiate(&tick_exec, tick_graph, 0));
    double inst_ms = inst_timer.stop_ms();
    CHECK(cudaGraphUpload(tick_exec, 0));  // move the upload out of the first timed launch

    auto prepare = [&] { CHECK(cudaMemcpy(d_v, v0.data(), lanes * sizeof(uint32_t), cudaMemcpyHostToDevice)); };
    auto check_v = [&](Verdict& vd, const std::string& name) {
        std::vector<uint32_t> got(lanes);
        CHECK(cudaMemcpy(got.data(), d_v, lanes * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        vd.exact(name + ": counters + K", v_expect.data(), got.data(), lanes);
    };
    std::string kname = std::to_string(kernels);
    table.param("kernels", kernels);
    table.add("stream (" + kname + " launches)", [&] {
        for (int k = 0; k < kernels; ++k) tick<<<1, lanes>>>(d_v);
    }, 0, check_v, prepare);
    table.add("graph (" + kname + " nodes)", [&] { CHECK(cudaGraphLaunch(tick_exec, 0)); }, 0, check_v, prepare);
    table.speedup_over("stream (" + kname + " launches)");
    std::printf("\n2. launch cost of %d tiny kernels (1 block of %d threads each), CUDA-event median of %d:", kernels,
                lanes, reps);
    table.run(verdict, reps);
    const Results::Version* st = table.find("stream (" + kname + " launches)");
    const Results::Version* gr = table.find("graph (" + kname + " nodes)");
    if (st && gr) {
        double us_stream = 1e3 * st->ms / kernels, us_graph = 1e3 * gr->ms / kernels;
        std::printf("per kernel: stream %.2f us, graph %.2f us -> stream / graph = %.2fx (target: graph cheaper: %s)\n",
                    us_stream, us_graph, us_stream / us_graph, us_graph < us_stream ? "met" : "NOT met");
        if (st->ms > gr->ms)
            std::printf("instantiating the graph took %.2f ms on the CPU: paid back after %.0f graph launches\n", inst_ms,
                        std::ceil(inst_ms / (st->ms - gr->ms)));
    }

    // 3. Whole-graph update, the guide's loop (3.2.6.6.4.2): capture the work with this iteration's
    //    constants; update the executable graph in place if the topology is the same, otherwise
    //    destroy and instantiate it again. Iteration 5 captures an extra node E.
    std::printf("\n3. cudaGraphExecUpdate over 10 iterations (iteration 5 adds a node):\n   ");
    cudaGraphExec_t exec = nullptr;
    int instantiations = 0, updates = 0, failed_updates = 0;
    bool all_ok = true;
    for (int i = 0; i < 10; ++i) {
        Diamond p{3u + 2u * i, 100u * i + 1u, 5u + i, 777u + i, 0x9E3779B1u + 2u * i, 13u * i, 17u + i};
        bool extra = (i == 5);
        cudaGraph_t g = capture_diamond(m, p, s1, s2, fork, join, extra);
        cudaGraphExecUpdateResultInfo info{};
        bool updated = false;
        if (exec) {
            cudaError_t e = cudaGraphExecUpdate(exec, g, &info);  // CUDA 12+: result info struct
            updated = e == cudaSuccess && info.result == cudaGraphExecUpdateSuccess;
            if (updated) ++updates;
            else {
                ++failed_updates;
                std::printf("[%d: update %s -> instantiate] ", i, update_result_name(info.result));
                if (e != cudaErrorGraphExecUpdateFailure) CHECK(e);
                (void)cudaGetLastError();  // the expected failure is not an error of this program
            }
        }
        if (!updated) {
            if (exec) CHECK(cudaGraphExecDestroy(exec));
            CHECK(cudaGraphInstantiate(&exec, g, 0));
            ++instantiations;
        }
        CHECK(cudaGraphDestroy(g));
        Verdict it;  // one line per iteration would flood the screen: report only a mismatch
        run_and_check(it, "", exec, s1, m, diamond_cpu(x, p, extra));
        if (!it.ok()) {
            all_ok = false;
            std::printf("[%d: MISMATCH %s] ", i, it.first_failure().c_str());
        }
    }
    std::printf("\n   instantiations %d, successful updates %d, failed updates %d\n", instantiations, updates,
                failed_updates);
    verdict.check(all_ok, "10 iterations vs CPU");
    verdict.check(instantiations == 3 && updates == 7, "3 instantiations (0, 5, 6), 7 updates");

    // 4. Single-node update (3.2.6.6.4.3): D's add constant changes in the executable graph only.
    Diamond p4 = p0;
    p4.add_d = 4242u;
    void* args_d4[] = {&m.d, &m.b, &m.c, &m.n, &one, &p4.add_d};
    cudaKernelNodeParams kp_d4 = combine_params(args_d4, n);
    CHECK(cudaGraphExecKernelNodeSetParams(api_exec, nd, &kp_d4));
    std::printf("\n4. cudaGraphExecKernelNodeSetParams on node D (add %u -> %u), no re-instantiation\n", p0.add_d,
                p4.add_d);
    run_and_check(verdict, "node-updated graph vs CPU", api_exec, s1, m, diamond_cpu(x, p4));
    // The graph the executable came from is unchanged: a fresh instantiation computes the old D.
    cudaGraphExec_t fresh;
    CHECK(cudaGraphInstantiate(&fresh, api_graph, 0));
    run_and_check(verdict, "template graph unchanged", fresh, s1, m, ref0);

    CHECK(cudaGraphExecDestroy(fresh));
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphExecDestroy(tick_exec));
    CHECK(cudaGraphExecDestroy(cap_exec));
    CHECK(cudaGraphExecDestroy(api_exec));
    CHECK(cudaGraphDestroy(tick_graph));
    CHECK(cudaGraphDestroy(cap_graph));
    CHECK(cudaGraphDestroy(api_graph));
    CHECK(cudaEventDestroy(fork));
    CHECK(cudaEventDestroy(join));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    for (uint32_t* p : {m.x, m.a, m.b, m.c, m.d, d_v}) CHECK(cudaFree(p));
    return verdict.finish();
}
