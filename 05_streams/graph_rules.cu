// graph_rules - the rules of CUDA graphs: node types, what a stream capture refuses, what a graph
// update refuses, and why one executable graph never overlaps itself.
//
// Manual: G 3.2.6.6 CUDA图: 3.2.6.6.1.1 节点类型, 3.2.6.6.3.2 禁止和未处理的操作, 3.2.6.6.3.3 失效,
//         3.2.6.6.4 更新实例化图 (3.2.6.6.4.1 图更新限制), 3.2.6.6.5 使用图API.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o graph_rules graph_rules.cu
// Shows:  1. Node types (3.2.6.6.1.1): one graph built with the explicit API holds an event-wait
//            node, a memset node, an empty node (joining the two), a kernel node, a child-graph
//            node, a memcpy node, a host node and an event-record node; cudaGraphNodeGetType reads
//            each type back. The wait node makes the graph start after a producer kernel in another
//            stream; the record node lets a consumer stream start after the graph. Both results
//            are checked against the CPU.
//         2. Capture refusals (3.2.6.6.3.2) and invalidation (3.2.6.6.3.3): cudaStreamQuery on a
//            capturing stream, and a synchronous cudaMemcpy (legacy stream) while a blocking stream
//            captures, each return an error; cudaStreamEndCapture then returns an error and no
//            graph, and the stream works normally again. The same cudaMemcpy while a non-blocking
//            stream captures in relaxed mode is printed (the guide's rule names blocking streams).
//         3. Update refusals (3.2.6.6.4.1): cudaGraphExecUpdate with a node of another type, a
//            memcpy whose source memory type changed, an added edge, and a 2D memset whose height
//            changed: each returns cudaErrorGraphExecUpdateFailure and a result code, and the
//            executable graph still does what it did. A kernel node given another function (same
//            context, no dynamic parallelism) updates, and the graph then runs the new function.
//         4. 3.2.6.6.5: the same cudaGraphExec_t launched into --launches different streams runs one
//            launch at a time, in launch order. Each launch is given its number beforehand with
//            cudaGraphExecKernelNodeSetParams (an update affects the next launch only, 3.2.6.6.4)
//            and records it, with its start and end on the global timer: the numbers come back in
//            launch order and no two launches overlap. Two executable graphs of the same graph in
//            two streams are printed (they may overlap).
//         Only calls whose signatures are the same in CUDA 12.x and 13 (no graph edge calls: the
//         edges are given as node dependencies when a node is added).
// Build:  make graph_rules   Run: ./graph_rules [--n=2^20] [--ms=20] [--launches=4]
// Output: the node types, each refused call and its error, each update's result code, the launch
//         order table, the checks, PASSED.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>
#include "common.cuh"

const int BLOCK = 256;

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// One block: thread 0 waits ns first, then the block writes x[i] = in[i] (a slow producer).
__global__ void producer(const uint32_t* in, uint32_t* x, int n, long long ns) {
    if (threadIdx.x == 0) {
        unsigned long long t0 = global_ns();
        while ((long long)(global_ns() - t0) < ns) {
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) x[i] = in[i];
}

__global__ void axpb(uint32_t* y, const uint32_t* x, int n, uint32_t a, uint32_t b) {  // y = y*a + x*3 + b
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = y[i] * a + (x ? x[i] * 3u : 0u) + b;
}
__global__ void set_to(uint32_t* y, int n, uint32_t v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = v;
}
__global__ void add_to(uint32_t* y, int n, uint32_t v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += v;
}

// Part 4: takes a ticket (the order in which launches ran), records its launch number and its
// window, and spins ns.
__global__ void stamp(int launch_id, unsigned* counter, long long* rec, long long ns) {
    unsigned ticket = atomicAdd(counter, 1u);
    unsigned long long t0 = global_ns(), t = t0;
    while ((long long)(t - t0) < ns) t = global_ns();
    rec[3 * ticket] = launch_id;
    rec[3 * ticket + 1] = (long long)t0;
    rec[3 * ticket + 2] = (long long)global_ns();
}

void CUDART_CB host_count(void* p) { ++*static_cast<int*>(p); }  // a host node: no CUDA calls here

const char* type_name(cudaGraphNodeType t) {
    switch (t) {
    case cudaGraphNodeTypeKernel: return "kernel";
    case cudaGraphNodeTypeMemcpy: return "memcpy";
    case cudaGraphNodeTypeMemset: return "memset";
    case cudaGraphNodeTypeHost: return "host";
    case cudaGraphNodeTypeGraph: return "child graph";
    case cudaGraphNodeTypeEmpty: return "empty";
    case cudaGraphNodeTypeWaitEvent: return "wait event";
    case cudaGraphNodeTypeEventRecord: return "event record";
    default: return "other";
    }
}

const char* update_name(cudaGraphExecUpdateResult r) {
    switch (r) {
    case cudaGraphExecUpdateSuccess: return "Success";
    case cudaGraphExecUpdateError: return "Error";
    case cudaGraphExecUpdateErrorTopologyChanged: return "ErrorTopologyChanged";
    case cudaGraphExecUpdateErrorNodeTypeChanged: return "ErrorNodeTypeChanged";
    case cudaGraphExecUpdateErrorFunctionChanged: return "ErrorFunctionChanged";
    case cudaGraphExecUpdateErrorParametersChanged: return "ErrorParametersChanged";
    case cudaGraphExecUpdateErrorNotSupported: return "ErrorNotSupported";
    case cudaGraphExecUpdateErrorUnsupportedFunctionChange: return "ErrorUnsupportedFunctionChange";
    case cudaGraphExecUpdateErrorAttributesChanged: return "ErrorAttributesChanged";
    default: return "other";
    }
}

// A kernel node's parameters; args are copied into the node by the call that takes them.
template <class... A>
cudaKernelNodeParams kparams(void (*f)(A...), int n, void** args) {
    cudaKernelNodeParams k{};
    k.func = (void*)f;
    k.gridDim = dim3((n + BLOCK - 1) / BLOCK);
    k.blockDim = dim3(BLOCK);
    k.kernelParams = args;
    return k;
}

cudaMemsetParams memset_params(void* dst, size_t pitch, uint32_t value, size_t width, size_t height) {
    cudaMemsetParams m{};
    m.dst = dst;
    m.pitch = pitch;
    m.value = value;
    m.elementSize = 4;
    m.width = width;
    m.height = height;
    return m;
}

std::vector<uint32_t> fetch(const uint32_t* d, int n) {
    std::vector<uint32_t> h(n);
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    return h;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "CUDA graph rules: node types, capture and update refusals, one exec never overlaps itself.");
    long long n_arg = args.integer("n", 1 << 20, 1, 1 << 26, "elements of the buffers");
    int ms = (int)args.integer("ms", 20, 0, 1000, "length of the producer's wait and of each part-4 launch");
    int launches = (int)args.integer("launches", 4, 2, 64, "launches of one executable graph in part 4");
    args.parse_or_exit();
    int n = (int)n_arg;
    long long ns = ms * 1000000LL;
    size_t bytes = (size_t)n * sizeof(uint32_t);
    int grid = (n + BLOCK - 1) / BLOCK;

    select_device(args.device());
    bool tool = cuda_tool_attached();
    Verdict verdict;
    std::vector<uint32_t> in = random_vector<uint32_t>(n, 0, 0xffffffffu, 41);
    uint32_t *d_in, *d_x, *d_y, *d_z, *d_w;
    for (uint32_t** p : {&d_in, &d_x, &d_y, &d_z, &d_w}) CHECK(cudaMalloc(p, bytes));
    // Every kernel loaded now (common/device.cuh): a lazy first load can synchronize the device and
    // would hide an order the program forgot to state.
    LOAD_KERNELS((const void*)producer, (const void*)axpb, (const void*)set_to, (const void*)add_to,
                 (const void*)stamp);
    cudaStream_t s1, s2, s3;
    for (cudaStream_t* s : {&s1, &s2, &s3}) CHECK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));

    // ---- 1. Node types -------------------------------------------------------------------------
    // wait(ev_in) ┐
    // memset y=7  ┴> empty -> kernel y = y + 3x -> child{ y = 5y + 1 } -> memcpy z = y -> host -> record(ev_out)
    cudaEvent_t ev_in, ev_out;
    CHECK(cudaEventCreateWithFlags(&ev_in, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&ev_out, cudaEventDisableTiming));
    int host_calls = 0;
    cudaGraph_t g, child;
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphCreate(&child, 0));
    cudaGraphNode_t wait, mset, empty, kern, chnode, cpy, host, rec, ck;
    CHECK(cudaGraphAddEventWaitNode(&wait, g, nullptr, 0, ev_in));
    cudaMemsetParams ms7 = memset_params(d_y, 0, 7u, n, 1);
    CHECK(cudaGraphAddMemsetNode(&mset, g, nullptr, 0, &ms7));
    cudaGraphNode_t join[2] = {wait, mset};
    CHECK(cudaGraphAddEmptyNode(&empty, g, join, 2));
    uint32_t one = 1u, zero = 0u, five = 5u;
    void* k_args[] = {&d_y, &d_x, &n, &one, &zero};
    cudaKernelNodeParams kp = kparams(axpb, n, k_args);
    CHECK(cudaGraphAddKernelNode(&kern, g, &empty, 1, &kp));
    const uint32_t* no_x = nullptr;
    void* c_args[] = {&d_y, &no_x, &n, &five, &one};
    cudaKernelNodeParams cp = kparams(axpb, n, c_args);
    CHECK(cudaGraphAddKernelNode(&ck, child, nullptr, 0, &cp));
    CHECK(cudaGraphAddChildGraphNode(&chnode, g, &kern, 1, child));  // the child graph is cloned into the node
    CHECK(cudaGraphAddMemcpyNode1D(&cpy, g, &chnode, 1, d_z, d_y, bytes, cudaMemcpyDeviceToDevice));
    cudaHostNodeParams hp{host_count, &host_calls};
    CHECK(cudaGraphAddHostNode(&host, g, &cpy, 1, &hp));
    CHECK(cudaGraphAddEventRecordNode(&rec, g, &host, 1, ev_out));
    size_t count = 0;
    CHECK(cudaGraphGetNodes(g, nullptr, &count));
    std::vector<cudaGraphNode_t> nodes(count);
    CHECK(cudaGraphGetNodes(g, nodes.data(), &count));
    std::map<std::string, int> types;
    std::string order;
    for (cudaGraphNode_t nd : nodes) {
        cudaGraphNodeType t;
        CHECK(cudaGraphNodeGetType(nd, &t));
        ++types[type_name(t)];
        order += std::string(order.empty() ? "" : ", ") + type_name(t);
    }
    std::printf("1. cudaGraphNodeGetType of the %zu nodes: %s\n", count, order.c_str());
    bool each_once = count == 8 && types.size() == 8 && types.count("other") == 0;
    verdict.note(each_once, "8 nodes, 8 different types");  // what this program added, read back: a note

    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaMemcpy(d_in, in.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_x, 0, bytes));
    // Part 2's relaxed-mode cudaMemcpy is allowed and reads d_w while the captured kernel that would
    // write it has not run (a capture records, it does not execute): d_w needs defined content
    // (compute-sanitizer --tool initcheck reports a copy of never-written memory). The copy's result is unused.
    CHECK(cudaMemset(d_w, 0, bytes));
    // s1, s2 and s3 are non-blocking: nothing orders them after the legacy stream's work above
    // (cudaMemset returns before the device has done it, a pageable cudaMemcpy before its DMA has
    // landed). The producer in s2 reads d_in and writes d_x: wait for the set-up first.
    CHECK(cudaDeviceSynchronize());
    producer<<<1, BLOCK, 0, s2>>>(d_in, d_x, n, ns);  // x is ready only after ~ms
    CHECK_LAUNCH();
    CHECK(cudaEventRecord(ev_in, s2));
    CHECK(cudaGraphLaunch(exec, s1));                   // its wait node waits for ev_in
    CHECK(cudaStreamWaitEvent(s3, ev_out, 0));          // s3 waits for the graph's record node
    add_to<<<grid, BLOCK, 0, s3>>>(d_z, n, 1u);
    CHECK_LAUNCH();
    CHECK(cudaStreamSynchronize(s3));                   // only s3: the record node ordered it
    std::vector<uint32_t> z = fetch(d_z, n), want(n);
    for (int i = 0; i < n; ++i) want[i] = ((7u + in[i] * 3u) * 5u + 1u) + 1u;
    CHECK(cudaDeviceSynchronize());
    std::printf("   graph after the producer (wait node), consumer after the graph (record node): host node ran %d time(s)\n",
                host_calls);
    verdict.exact("graph result + consumer vs CPU", want.data(), z.data(), n);
    verdict.check(host_calls == 1, "host node ran once");
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaGraphDestroy(child));

    // ---- 2. Capture refusals and invalidation --------------------------------------------------
    std::printf("2. operations a capture refuses (G 3.2.6.6.3.2) and what they do to it (3.2.6.6.3.3):\n");
    std::vector<uint32_t> host_buf(n);
    cudaStream_t blocking, nonblocking;
    CHECK(cudaStreamCreate(&blocking));
    CHECK(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking));
    struct Refusal {
        const char* what;
        cudaStream_t s;
        cudaStreamCaptureMode mode;
        bool asserted;
        cudaError_t (*op)(cudaStream_t, uint32_t*, uint32_t*);
    };
    auto query = [](cudaStream_t s, uint32_t*, uint32_t*) { return cudaStreamQuery(s); };
    auto sync_copy = [](cudaStream_t, uint32_t* h, uint32_t* d) {
        return cudaMemcpy(h, d, sizeof(uint32_t), cudaMemcpyDeviceToHost);
    };
    Refusal cases[] = {
        {"cudaStreamQuery(capturing stream)", blocking, cudaStreamCaptureModeGlobal, true, query},
        {"cudaMemcpy (legacy stream), blocking stream", blocking, cudaStreamCaptureModeGlobal, true, sync_copy},
        {"cudaMemcpy, non-blocking stream, relaxed mode", nonblocking, cudaStreamCaptureModeRelaxed, false, sync_copy},
    };
    for (const Refusal& c : cases) {
        CHECK(cudaStreamBeginCapture(c.s, c.mode));
        set_to<<<grid, BLOCK, 0, c.s>>>(d_w, n, 11u);
        cudaError_t launch = cudaGetLastError();
        cudaError_t op = c.op(c.s, host_buf.data(), d_w);
        cudaGraph_t cg = nullptr;
        cudaError_t end = cudaStreamEndCapture(c.s, &cg);
        cudaGetLastError();  // capture errors are not sticky: clear the last error
        std::printf("   %-46s -> %s; cudaStreamEndCapture -> %s, graph %s%s\n", c.what, cudaGetErrorName(op),
                    cudaGetErrorName(end), cg ? "returned" : "NULL", c.asserted ? "" : " (printed)");
        verdict.check(launch == cudaSuccess, std::string("capture of the kernel before: ") + c.what);
        if (c.asserted) {
            verdict.check(op != cudaSuccess && op != cudaErrorNotReady, std::string("refused: ") + c.what);
            verdict.check(end != cudaSuccess && cg == nullptr, "capture invalidated: error, no graph");
        }
        if (cg) CHECK(cudaGraphDestroy(cg));
        cudaStreamCaptureStatus st;
        CHECK(cudaStreamIsCapturing(c.s, &st));
        verdict.check(st == cudaStreamCaptureStatusNone, "stream out of capture mode after EndCapture");
    }
    // The invalidated stream runs ordinary work again.
    set_to<<<grid, BLOCK, 0, blocking>>>(d_w, n, 12u);
    CHECK_LAUNCH();
    CHECK(cudaStreamSynchronize(blocking));
    std::vector<uint32_t> w = fetch(d_w, n), w12(n, 12u);
    verdict.exact("the stream after the failed capture", w12.data(), w.data(), n);

    // ---- 3. Update refusals --------------------------------------------------------------------
    std::printf("3. cudaGraphExecUpdate (G 3.2.6.6.4.1): the change -> returned, result\n");
    size_t pitch = 0;
    uint32_t* d_2d;
    const int W = 64, H = 4;
    CHECK(cudaMallocPitch(&d_2d, &pitch, W * sizeof(uint32_t), 2 * H));
    uint32_t* h_pinned;
    CHECK(cudaMallocHost(&h_pinned, bytes));
    std::copy(in.begin(), in.end(), h_pinned);
    // Each case: a graph "before" (instantiated and run), a graph "after" with one change.
    enum Change { TYPE, MEMTYPE, EDGE, MEMSET2D_HEIGHT, FUNCTION };
    auto build = [&](Change c, bool after) {
        cudaGraph_t gr;
        CHECK(cudaGraphCreate(&gr, 0));
        cudaGraphNode_t a, b;
        void* set_args[] = {&d_w, &n, &one};
        cudaKernelNodeParams ks = kparams(set_to, n, set_args);
        switch (c) {
        case TYPE: {  // memset w = 3 -> a kernel w = 1
            cudaMemsetParams m = memset_params(d_w, 0, 3u, n, 1);
            if (after) CHECK(cudaGraphAddKernelNode(&a, gr, nullptr, 0, &ks));
            else CHECK(cudaGraphAddMemsetNode(&a, gr, nullptr, 0, &m));
            break;
        }
        case MEMTYPE:  // w = y (device) -> w = pinned host buffer
            CHECK(cudaGraphAddMemcpyNode1D(&a, gr, nullptr, 0, d_w, after ? (void*)h_pinned : (void*)d_y, bytes,
                                           after ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToDevice));
            break;
        case EDGE: {  // two independent kernels -> the second depends on the first
            void* add_args[] = {&d_z, &n, &one};
            cudaKernelNodeParams ka = kparams(add_to, n, add_args);
            CHECK(cudaGraphAddKernelNode(&a, gr, nullptr, 0, &ks));
            CHECK(cudaGraphAddKernelNode(&b, gr, after ? &a : nullptr, after ? 1 : 0, &ka));
            break;
        }
        case MEMSET2D_HEIGHT: {  // a 2D memset of H rows -> 2H rows
            cudaMemsetParams m = memset_params(d_2d, pitch, 9u, W, after ? 2 * H : H);
            CHECK(cudaGraphAddMemsetNode(&a, gr, nullptr, 0, &m));
            break;
        }
        case FUNCTION: {  // set_to(w, 1) -> add_to(w, 1): same context, no dynamic parallelism
            cudaKernelNodeParams k2 = ks;
            k2.func = (void*)add_to;
            CHECK(cudaGraphAddKernelNode(&a, gr, nullptr, 0, after ? &k2 : &ks));
            break;
        }
        }
        return gr;
    };
    struct UpdateCase {
        Change c;
        const char* what;
        bool allowed;
    } ucases[] = {
        {TYPE, "memset node -> kernel node (node type)", false},
        {MEMTYPE, "memcpy source device -> pinned host (memory type)", false},
        {EDGE, "edge added between two kernel nodes (topology)", false},
        {MEMSET2D_HEIGHT, "2D memset, height 4 -> 8 rows", false},
        {FUNCTION, "kernel node's function set_to -> add_to", true},
    };
    for (const UpdateCase& u : ucases) {
        cudaGraph_t before = build(u.c, false), after = build(u.c, true);
        cudaGraphExec_t ex;
        CHECK(cudaGraphInstantiate(&ex, before, 0));
        cudaGraphExecUpdateResultInfo info{};
        cudaError_t r = cudaGraphExecUpdate(ex, after, &info);
        cudaGetLastError();
        std::printf("   %-50s -> %s, %s\n", u.what, cudaGetErrorName(r), update_name(info.result));
        if (u.allowed) {
            verdict.check(r == cudaSuccess && info.result == cudaGraphExecUpdateSuccess, "update allowed: function");
            // In s1, the graph's stream: a cudaMemset on the legacy stream would not be ordered before
            // a graph in the non-blocking s1, and could land after the first add_to (w = 1).
            CHECK(cudaMemsetAsync(d_w, 0, bytes, s1));
            CHECK(cudaGraphLaunch(ex, s1));  // now add_to: w = 0 + 1 twice
            CHECK(cudaGraphLaunch(ex, s1));
            CHECK(cudaStreamSynchronize(s1));
            std::vector<uint32_t> got = fetch(d_w, n), two(n, 2u);
            verdict.exact("updated graph runs add_to", two.data(), got.data(), n);
        } else {
            verdict.check(r == cudaErrorGraphExecUpdateFailure && info.result != cudaGraphExecUpdateSuccess,
                          std::string("refused: ") + u.what);
            if (u.c == TYPE) verdict.check(info.result == cudaGraphExecUpdateErrorNodeTypeChanged, "ErrorNodeTypeChanged");
            if (u.c == EDGE) verdict.check(info.result == cudaGraphExecUpdateErrorTopologyChanged, "ErrorTopologyChanged");
            if (u.c == TYPE) {  // not performed: the exec still runs the memset (w = 3)
                CHECK(cudaGraphLaunch(ex, s1));
                CHECK(cudaStreamSynchronize(s1));
                std::vector<uint32_t> got = fetch(d_w, n), three(n, 3u);
                verdict.exact("refused update left the graph as it was", three.data(), got.data(), n);
            }
        }
        CHECK(cudaGraphExecDestroy(ex));
        CHECK(cudaGraphDestroy(before));
        CHECK(cudaGraphDestroy(after));
    }

    // ---- 4. One executable graph never runs concurrently with itself (3.2.6.6.5) ------------------
    unsigned* d_counter;
    long long* d_rec;
    CHECK(cudaMalloc(&d_counter, sizeof(unsigned)));
    CHECK(cudaMalloc(&d_rec, 3 * (launches + 2) * sizeof(long long)));
    cudaGraph_t sg;
    CHECK(cudaGraphCreate(&sg, 0));
    int id = 0;
    void* s_args[] = {&id, &d_counter, &d_rec, (void*)&ns};
    cudaKernelNodeParams sp{};
    sp.func = (void*)stamp;
    sp.gridDim = dim3(1);
    sp.blockDim = dim3(1);
    sp.kernelParams = s_args;
    cudaGraphNode_t snode;
    CHECK(cudaGraphAddKernelNode(&snode, sg, nullptr, 0, &sp));
    cudaGraphExec_t sx;
    CHECK(cudaGraphInstantiate(&sx, sg, 0));
    std::vector<cudaStream_t> ls(launches);
    for (auto& s : ls) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMemset(d_counter, 0, sizeof(unsigned)));
    CHECK(cudaMemset(d_rec, 0xff, 3 * (launches + 2) * sizeof(long long)));
    CHECK(cudaDeviceSynchronize());  // the counter is 0 before the launches in the non-blocking streams
    for (int k = 0; k < launches; ++k) {
        id = k;  // this launch's number: an update takes effect at the next launch only
        CHECK(cudaGraphExecKernelNodeSetParams(sx, snode, &sp));
        CHECK(cudaGraphLaunch(sx, ls[k]));  // each launch into a stream of its own
    }
    CHECK(cudaDeviceSynchronize());
    std::vector<long long> rc(3 * launches);
    CHECK(cudaMemcpy(rc.data(), d_rec, rc.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    std::printf("4. one cudaGraphExec_t launched into %d different streams (each launch %d ms):\n", launches, ms);
    std::printf("   %-8s %-9s %12s %12s\n", "ran as", "launch #", "start ms", "end ms");
    bool in_order = true, apart = true;
    for (int t = 0; t < launches; ++t) {
        if (t < 6 || t == launches - 1)
            std::printf("   %-8d %-9lld %12.3f %12.3f\n", t, rc[3 * t], (rc[3 * t + 1] - rc[1]) / 1e6,
                        (rc[3 * t + 2] - rc[1]) / 1e6);
        if (rc[3 * t] != t) in_order = false;
        if (t > 0 && rc[3 * t + 1] < rc[3 * (t - 1) + 2]) apart = false;
    }
    verdict.check(in_order, "launches ran in launch order");
    verdict.check(apart, "no two launches overlapped");
    // Contrast: two executable graphs of the same graph, in two streams (allowed to overlap).
    cudaGraphExec_t sx2;
    CHECK(cudaGraphInstantiate(&sx2, sg, 0));
    CHECK(cudaMemset(d_counter, 0, sizeof(unsigned)));
    CHECK(cudaDeviceSynchronize());  // as above: ls[0] and ls[1] do not wait for the legacy stream
    CHECK(cudaGraphLaunch(sx, ls[0]));
    CHECK(cudaGraphLaunch(sx2, ls[1]));
    CHECK(cudaDeviceSynchronize());
    long long r2[6];
    CHECK(cudaMemcpy(r2, d_rec, sizeof r2, cudaMemcpyDeviceToHost));
    double ov = (std::min(r2[2], r2[5]) - std::max(r2[1], r2[4])) / 1e6;
    std::printf("   two cudaGraphExec_t of the same graph in two streams: overlapped %.3f ms of %d (printed%s)\n",
                std::max(ov, 0.0), ms, tool ? "; a CUDA tool is attached" : "");

    CHECK(cudaGraphExecDestroy(sx));
    CHECK(cudaGraphExecDestroy(sx2));
    CHECK(cudaGraphDestroy(sg));
    for (auto s : ls) CHECK(cudaStreamDestroy(s));
    for (cudaStream_t s : {s1, s2, s3, blocking, nonblocking}) CHECK(cudaStreamDestroy(s));
    CHECK(cudaEventDestroy(ev_in));
    CHECK(cudaEventDestroy(ev_out));
    for (void* p : {(void*)d_in, (void*)d_x, (void*)d_y, (void*)d_z, (void*)d_w, (void*)d_2d, (void*)d_counter,
                    (void*)d_rec})
        CHECK(cudaFree(p));
    CHECK(cudaFreeHost(h_pinned));
    return verdict.finish();
}
