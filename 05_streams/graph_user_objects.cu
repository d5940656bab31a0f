// graph_user_objects - CUDA user objects: a resource whose lifetime the graph manages, destroyed
// exactly once, after the last launch that uses it.
//
// Manual: G 3.2.15 CUDA用户对象.
// Shows:  a library that creates a resource for work it enqueues cannot delete the resource when
//         the call returns (the work has not run yet), and under stream capture it cannot even
//         wait for it: the work may be launched later, many times, as part of a graph. A user
//         object wraps the resource with a reference count and a destructor callback, like a
//         shared_ptr that graphs can own. The program follows the guide's example:
//           - a Tally (host memory that a host node of the graph writes into) is wrapped with the
//             CUDA-provided template cudaUserObjectCreate(&obj, ptr, 1, cudaUserObjectNoDestructorSync),
//             whose callback deletes the C++ object;
//           - cudaGraphRetainUserObject(graph, obj, 1, cudaGraphUserObjectMove) moves the caller's
//             only reference into the graph (the caller owns none afterwards);
//           - a clone of the graph and the instantiated graph each hold their own reference, so
//             destroying the graph and the clone does not destroy the object;
//           - the executable graph is launched --launches times and destroyed without waiting for
//             the launches: the release is deferred until they finish;
//           - the destructor then runs once, on a driver thread, asynchronously: the program waits
//             for it by polling an atomic (with a timeout), never with a CUDA call, and checks that
//             it saw every launch's data.
//         The destructor must not call CUDA (it runs inside the driver, like a host function).
// Build:  make graph_user_objects   (nvcc -std=c++17 -O3 -arch=native -I../common -o graph_user_objects graph_user_objects.cu)
// Run:    ./graph_user_objects [--n=2^20] [--launches=5] [--hold-ms=50]
// Output: the reference-count story step by step with the destructor count after each step,
//         the checks, PASSED.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>
#include "common.cuh"

// What the destructor reports, read by main after the object is gone.
std::atomic<int> g_destructor_calls{0};
std::atomic<long long> g_launches_seen_at_destruction{-1};
std::atomic<unsigned long long> g_sum_at_destruction{0};

// The resource: host state that every launch of the graph updates through a host node.
struct Tally {
    const uint32_t* host_out = nullptr;  // pinned buffer the graph copies the kernel's output into
    int n = 0;
    long long launches_seen = 0;
    unsigned long long sum = 0;
    ~Tally() {
        // Runs on a CUDA driver thread when the last reference goes: no CUDA calls allowed here.
        g_launches_seen_at_destruction.store(launches_seen);
        g_sum_at_destruction.store(sum);
        g_destructor_calls.fetch_add(1);
    }
};

// Host node of the graph: runs after the copy, in stream order. No CUDA calls (as for
// cudaLaunchHostFunc callbacks).
void CUDART_CB tally_host_node(void* p) {
    Tally* t = static_cast<Tally*>(p);
    unsigned long long s = 0;
    for (int i = 0; i < t->n; ++i) s += t->host_out[i];
    lab_corrupt(&s, 1);  // CUDA_LAB_CORRUPT: the sum check must be able to fail (corrupt.h; no CUDA call)
    t->sum += s;
    t->launches_seen += 1;
}

// Launch l writes in[i] * 2654435761 + 0x9E3779B9 * (l + 1): different data every launch.
__host__ __device__ inline uint32_t value(uint32_t in, int launch) {
    return in * 2654435761u + 0x9E3779B9u * (uint32_t)(launch + 1);
}

// Output depends on the element and on the launch number, so every launch adds different data.
__global__ void fill(uint32_t* out, const uint32_t* in, int n, const int* launch) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value(in[i], *launch);
}

__global__ void next_launch(int* launch) { *launch += 1; }

// Keeps the stream busy for wait_ns (GPU wall clock), so that the graph launches queued behind it
// are certainly still pending when the executable graph is destroyed.
__global__ void hold(unsigned long long wait_ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        __nanosleep(10000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < wait_ns);
}

// Waits (without CUDA calls) until the destructor has run `want` times or `timeout_ms` passed.
bool wait_for_destructor(int want, int timeout_ms) {
    auto t0 = std::chrono::steady_clock::now();
    while (g_destructor_calls.load() < want) {
        if (std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(timeout_ms)) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "CUDA user objects: a graph-owned resource destroyed exactly once after the last launch.");
    long long n_arg = args.integer("n", 1 << 20, 1, 1 << 26, "elements the graph's kernel writes");
    int launches = (int)args.integer("launches", 5, 1, 1000, "launches of the executable graph");
    int hold_ms = (int)args.integer("hold-ms", 50, 0, 10000, "how long a kernel holds the stream before the launches (ms)");
    args.parse_or_exit();
    int n = (int)n_arg;

    DeviceInfo dev = select_device(args.device());
    (void)dev;
    // Every kernel loaded now (common/device.cuh): `hold` is first launched right after the set-up
    // below, and its lazy loading could hide a set-up left on the legacy stream
    // (tests/mutants/05_streams.txt, setup-legacy).
    LOAD_KERNELS((const void*)fill, (const void*)next_launch, (const void*)hold);
    Verdict verdict;
    std::vector<uint32_t> in = random_vector<uint32_t>(n, 0, 0xffffffffu, 21);
    unsigned long long expected_sum = 0;
    for (int l = 0; l < launches; ++l)
        for (int i = 0; i < n; ++i) expected_sum += value(in[i], l);

    uint32_t *d_in, *d_out, *h_out;
    int* d_launch;
    CHECK(cudaMalloc(&d_in, n * sizeof(uint32_t)));
    CHECK(cudaMalloc(&d_out, n * sizeof(uint32_t)));
    CHECK(cudaMalloc(&d_launch, sizeof(int)));
    CHECK(cudaMallocHost(&h_out, n * sizeof(uint32_t)));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    // The library's work, captured: kernel -> copy to pinned host memory -> host node -> counter.
    Tally* tally = new Tally;
    tally->host_out = h_out;
    tally->n = n;
    cudaGraph_t graph;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    fill<<<(n + 255) / 256, 256, 0, s>>>(d_out, d_in, n, d_launch);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(h_out, d_out, n * sizeof(uint32_t), cudaMemcpyDeviceToHost, s));
    CHECK(cudaLaunchHostFunc(s, tally_host_node, tally));  // becomes a host node
    next_launch<<<1, 1, 0, s>>>(d_launch);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamEndCapture(s, &graph));

    // Wrap the Tally. The template overload (cuda_runtime.h) supplies a callback that deletes it.
    // cudaUserObjectNoDestructorSync is required: no CUDA call can wait for the destructor.
    cudaUserObject_t obj;
    CHECK(cudaUserObjectCreate(&obj, tally, 1, cudaUserObjectNoDestructorSync));
    // Move our one reference into the graph: the total count stays 1, and we own none.
    CHECK(cudaGraphRetainUserObject(graph, obj, 1, cudaGraphUserObjectMove));
    std::printf("created the user object (refcount 1) and moved it into the graph: destructor calls %d\n",
                g_destructor_calls.load());

    cudaGraph_t clone;
    CHECK(cudaGraphClone(&clone, graph));  // the clone holds its own copy of the reference
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));  // so does the executable graph
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaGraphDestroy(clone));
    std::printf("cloned, instantiated, destroyed graph and clone (exec still owns a reference): destructor calls %d\n",
                g_destructor_calls.load());
    verdict.check(g_destructor_calls.load() == 0, "alive while the exec owns it");

    // Input and launch counter set in s, where the graph runs: on the legacy stream they would not be
    // ordered before work in the non-blocking s. Issued after the capture and the instantiation, so
    // that less host work stands between them and the launches. Issued before the hold
    // kernel: the upload is from pageable memory, and such a cudaMemcpyAsync "might be synchronous
    // with respect to host" (API reference, API synchronization behavior): behind the hold kernel it
    // could keep the host waiting until the hold ended, and the launches below would no longer be
    // queued behind a running kernel.
    CHECK(cudaMemcpyAsync(d_in, in.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice, s));
    CHECK(cudaMemsetAsync(d_launch, 0, sizeof(int), s));
    hold<<<1, 1, 0, s>>>(hold_ms * 1000000ull);  // --hold-ms ahead of the launches
    CHECK_LAUNCH();
    for (int l = 0; l < launches; ++l) CHECK(cudaGraphLaunch(exec, s));
    // Destroyed without synchronizing: the queued launches keep the reference until they complete.
    CHECK(cudaGraphExecDestroy(exec));
    int calls_right_after = g_destructor_calls.load();
    std::printf("launched %d times behind a %d ms kernel, destroyed the exec at once: destructor calls %d%s\n",
                launches, hold_ms, calls_right_after, calls_right_after == 0 ? " (release deferred)" : "");

    CHECK(cudaStreamSynchronize(s));
    // The release happens after the work completes, on a driver thread: poll, do not assume.
    bool ran = wait_for_destructor(1, 5000);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a second call would show up here
    int calls = g_destructor_calls.load();
    std::printf("after cudaStreamSynchronize and waiting: destructor calls %d; it saw %lld launches, sum %llu "
                "(CPU %llu)\n", calls, g_launches_seen_at_destruction.load(), g_sum_at_destruction.load(),
                expected_sum);
    verdict.check(ran, "destructor ran (within 5 s)");
    verdict.check(calls == 1, "destructor ran exactly once");
    verdict.check(g_launches_seen_at_destruction.load() == launches, "destroyed after the last launch");
    verdict.check(g_sum_at_destruction.load() == expected_sum, "host-node sums vs CPU");
    int launch_count = 0;
    CHECK(cudaMemcpy(&launch_count, d_launch, sizeof(int), cudaMemcpyDeviceToHost));
    lab_corrupt(&launch_count, 1);  // CUDA_LAB_CORRUPT: this check must be able to fail (corrupt.h)
    verdict.check(launch_count == launches, "device launch counter");

    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFreeHost(h_out));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_launch));
    return verdict.finish();
}
