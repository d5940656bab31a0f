// dynamic_parallelism - kernels launching kernels (CUDA dynamic parallelism, CDP2 rules of CUDA 12+):
// what a child grid sees of its parent's writes, how the parent's side reads the children's
// results (a tail launch), and a recursion rewritten without device-side cudaDeviceSynchronize.
//
// Manual: DP notes (seed 002): 排序和併發, 記憶體模型, 一致性 / 全域性記憶體 (the child sees data[0..255]
//         after __syncthreads), 共享和本地記憶體 (never pass their pointers to a child), and the
//         build line "nvcc -arch=sm_35 -rdc=true ... -lcudadevrt"; G 3.2.6.5 流 (stream ordering).
// Shows:  the notes describe CDP1, where a parent thread could call cudaDeviceSynchronize() to wait
//         for its children. CDP2 (the only version on sm_90, default since CUDA 12) removed that
//         call. A parent grid now has two named streams besides the ordinary ones:
//           cudaStreamFireAndForget - the child runs independently of the launching grid;
//           cudaStreamTailLaunch    - the grid starts only after the launching grid AND all the
//                                     work it launched (fire-and-forget children included) have
//                                     completed, so it can read every child's results.
//         1. Coherence: each parent block writes its 256 elements of data (global memory), runs
//            __syncthreads(), and thread 0 launches a fire-and-forget child that records what it
//            sees. Writes made before the launch are visible to the child; the barrier extends
//            that from thread 0's own write to the whole block's (without it only data[0] of the
//            segment would be guaranteed). A tail-launched grid then sums every child's output:
//            the "parent waits for its children" step of the notes, in CDP2 form.
//         2. Recursion: a sum reduction where each level reduces 256 elements per block and
//            tail-launches the next level over the partial sums, until one block is left. Under
//            CDP1 this was "launch children, cudaDeviceSynchronize(), combine"; with a tail launch
//            the next level simply starts after the whole current level (all blocks) has finished:
//            each level records its first block's start and its last block's end on the global
//            timer, and the host checks that no level started before the one above had ended.
//         Shared and local memory are private to a block / a thread and are not coherent with a
//         child grid: passing a pointer to either to a child is undefined. The parent only
//         reports __isGlobal() of such pointers; it never passes them.
//         Device-side launches wait in a pending-launch buffer (cudaLimitDevRuntimePendingLaunchCount,
//         2048 by default); one child per parent block can exceed it, so the host raises the limit
//         and the parent counts failed launches (cudaGetLastError on the device).
//         3. Launch order (排序和併發): in each of 8 blocks, threads 0..3 launch one child each into
//            the block's implicit stream, one after the other (a __syncthreads() between launches).
//            Child k spins (4 - k) x 20 us and then takes a ticket: if the children overlapped, the
//            last launched (shortest) would take the first ticket; the tickets come out 0 1 2 3.
//            Thread 0 also creates a named stream (cudaStreamNonBlocking, the only kind a kernel may
//            create; private to its block) and launches a writer and then a reader into it: the
//            reader sees the writer's value.
//         4. Constant and zero-copy memory (常量記憶體, 零拷貝記憶體): a child reads a __constant__
//            table set by the host before the parent's launch, both directly and through a pointer
//            the parent took of it, and writes into mapped pinned host memory whose pointer the
//            host passed to the parent; the host reads that memory after the sync, checked.
//         5. A shared-memory pointer where only global memory is allowed (共享和本地記憶體), each in a
//            child process forked before this process touches CUDA (a fault would end this
//            process's context): (a) a device-side cudaMemsetAsync on a __shared__ array, which the
//            notes say returns an error; (b) a child launched with a pointer to its parent's
//            __shared__ array that writes through it. Printed: the code the device-side call
//            returned and what the host's cudaDeviceSynchronize then returned; (a) must fail one way
//            or the other, (b) is printed only (undefined behaviour). nvcc 13.0 compiles both
//            without a warning. Skipped under a CUDA tool (compute-sanitizer follows the children).
//         CDP2 has no device-side cudaDeviceSynchronize: building with -DCDP1_DEVICE_SYNC adds the
//         CDP1 call and nvcc stops with "calling a __host__ function("cudaDeviceSynchronize") from
//         a __global__ function ... is not allowed".
// Build:  make dynamic_parallelism
//         (nvcc -std=c++17 -O3 -arch=native -rdc=true -I../common -o dynamic_parallelism
//          dynamic_parallelism.cu -lcudadevrt: -rdc=true for relocatable device code, which device
//          launches need, and the device runtime library)
// Run:    ./dynamic_parallelism [--n=2^20]
// Output: what the children saw, the tail launch's sums, the __isGlobal answers, the recursion's
//         depth and sum, the launch-order tickets, the constant / zero-copy check, the two
//         shared-pointer outcomes, the checks, PASSED.
#include <algorithm>
#include <cstdint>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
#include "common.cuh"

constexpr int SEG = 256;  // elements per parent block = threads of one child grid

__host__ __device__ inline uint32_t parent_value(uint32_t in, uint32_t lane) { return in * 2u + lane; }
__host__ __device__ inline uint32_t child_value(uint32_t seen) { return seen * 3u + 1u; }

// A child grid of one block: what it reads of the parent's segment, and its own result.
__global__ void child_launch(const uint32_t* data, uint32_t* seen, uint32_t* child_out, int base, int count) {
    int t = threadIdx.x;
    if (t < count) {
        uint32_t v = data[base + t];
        seen[base + t] = v;
        child_out[base + t] = child_value(v);
    }
}

// Tail-launched by the parent: runs after the parent grid and every child has completed, so each
// block can sum one segment of the children's output.
__global__ void gather_tail(const uint32_t* child_out, unsigned long long* seg_sum, int n) {
    __shared__ unsigned long long s[SEG];
    int i = blockIdx.x * SEG + threadIdx.x;
    s[threadIdx.x] = i < n ? child_out[i] : 0ull;
    __syncthreads();
    for (int stride = SEG / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) seg_sum[blockIdx.x] = s[0];
}

// The notes' parent_launch, one segment per block.
__global__ void parent_launch(const uint32_t* in, uint32_t* data, uint32_t* seen, uint32_t* child_out,
                              unsigned long long* seg_sum, int n, int* launch_errors, int* is_global) {
    __shared__ uint32_t tile[SEG];
    int base = blockIdx.x * SEG;
    int count = min(SEG, n - base);
    int i = base + threadIdx.x;
    if (threadIdx.x < count) data[i] = parent_value(in[i], threadIdx.x);
    tile[threadIdx.x] = threadIdx.x;
    // Every thread's write to data happens before thread 0's launch: the child sees all 256.
    __syncthreads();
    if (threadIdx.x == 0) {
        // Never child_launch<<<...>>>(tile, ...) or a pointer to a local array: the child cannot
        // see this block's shared memory or this thread's local memory (undefined behaviour).
        child_launch<<<1, SEG, 0, cudaStreamFireAndForget>>>(data, seen, child_out, base, count);
        if (cudaGetLastError() != cudaSuccess) atomicAdd(launch_errors, 1);
        if (blockIdx.x == 0) {
            // One tail launch for the whole grid: it waits for all blocks and all their children.
            gather_tail<<<gridDim.x, SEG, 0, cudaStreamTailLaunch>>>(child_out, seg_sum, n);
            if (cudaGetLastError() != cudaSuccess) atomicAdd(launch_errors, 1);
            uint32_t local[2] = {tile[1], tile[2]};
            is_global[0] = __isGlobal(data);   // 1: cudaMalloc memory, safe to pass
            is_global[1] = __isGlobal(tile);   // 0: shared memory, must not be passed
            is_global[2] = __isGlobal(local);  // 0: a thread's local array, must not be passed
            is_global[3] = (int)(local[0] + local[1]);  // keeps `local` a real array (1 + 2 = 3)
        }
    }
}

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// One level of the recursive sum: 256 elements per block. The last level (one block) writes the
// result; every other level tail-launches the next one over its partial sums. The next level
// reads `out` and writes `spare`, and the roles swap again below it: a level's input is never
// written while it is read, because the next level only starts when this one has finished.
// span[2 * depth] gets the level's first block start, span[2 * depth + 1] its last block end
// (global timer, ns): the host checks that each level started after the one before had ended.
template <class T>
__global__ void reduce_level(const T* in, unsigned long long* out, unsigned long long* spare, int n,
                             unsigned long long* result, int depth, int* depth_reached, int* launch_errors,
                             unsigned long long* span) {
    __shared__ unsigned long long s[SEG];
    if (threadIdx.x == 0) atomicMin(&span[2 * depth], global_ns());
    int i = blockIdx.x * SEG + threadIdx.x;
    s[threadIdx.x] = i < n ? (unsigned long long)in[i] : 0ull;
    __syncthreads();
    for (int stride = SEG / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x != 0) return;
    if (gridDim.x == 1) {
        *result = s[0];
        *depth_reached = depth;
        __threadfence();
        atomicMax(&span[2 * depth + 1], global_ns());
        return;
    }
    out[blockIdx.x] = s[0];
    __threadfence();
    atomicMax(&span[2 * depth + 1], global_ns());  // this block's partial sum is written
    if (blockIdx.x == 0) {
        // CDP1: launch the children, cudaDeviceSynchronize(), combine. That call no longer exists,
        // and it never waited for the *other blocks* of this grid anyway. A tail launch starts
        // after the whole grid, so every block's partial sum is in `out` when it runs.
        int blocks = (int)gridDim.x;
        reduce_level<unsigned long long><<<(blocks + SEG - 1) / SEG, SEG, 0, cudaStreamTailLaunch>>>(
            out, spare, out, blocks, result, depth + 1, depth_reached, launch_errors, span);
        if (cudaGetLastError() != cudaSuccess) atomicAdd(launch_errors, 1);
    }
}

// ---- 3. Launch order in the block's implicit stream and in a named device stream ----------------
constexpr int ORDER_CHILDREN = 4;


// Child k of a block: waits (4 - k) x 20 us, then takes the block's next ticket.
__global__ void order_child(int k, unsigned* counter, int* order) {
    unsigned long long t0 = global_ns();
    while (global_ns() - t0 < (unsigned long long)(ORDER_CHILDREN - k) * 20000ull) {
    }
    unsigned ticket = atomicAdd(counter, 1u);
    order[ticket] = k;
}
__global__ void stream_writer(uint32_t* cell, uint32_t v) { *cell = v; }
__global__ void stream_reader(const uint32_t* cell, uint32_t* seen) { *seen = *cell; }

__global__ void order_parent(unsigned* counters, int* order, uint32_t* cells, uint32_t* seen, int* launch_errors) {
    int b = blockIdx.x;
    // Thread k launches child k into the implicit stream, which all threads of the block share;
    // the barrier between launches fixes the launch order across threads.
    for (int k = 0; k < ORDER_CHILDREN; ++k) {
        if (threadIdx.x == k) {
            order_child<<<1, 1>>>(k, counters + b, order + b * ORDER_CHILDREN);
            if (cudaGetLastError() != cudaSuccess) atomicAdd(launch_errors, 1);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        cudaStream_t s;  // a named stream: usable by this block only, never passed to another
        if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
            atomicAdd(launch_errors, 1);
            return;
        }
        stream_writer<<<1, 1, 0, s>>>(cells + b, 0xC0DE0000u + b);
        stream_reader<<<1, 1, 0, s>>>(cells + b, seen + b);  // in order after the writer
        if (cudaGetLastError() != cudaSuccess) atomicAdd(launch_errors, 1);
        cudaStreamDestroy(s);  // allowed with work pending: it is released once that work is done
    }
}

// ---- 4. __constant__ and zero-copy memory seen by a child ---------------------------------------
constexpr int CTABLE = 16;
__constant__ uint32_t c_table[CTABLE];

__host__ __device__ inline uint32_t const_value(uint32_t t, int i) { return t * (uint32_t)(i + 1) + 5u; }

__global__ void const_child(const uint32_t* table_ptr, uint32_t* zero_copy, int count) {
    int i = threadIdx.x;
    if (i < count) {
        zero_copy[i] = const_value(c_table[i % CTABLE], i);                     // read directly
        zero_copy[count + i] = const_value(table_ptr[(i + 1) % CTABLE], i);     // through the parent's pointer
    }
}
__global__ void const_parent(uint32_t* zero_copy, int count, int* launch_errors) {
    const uint32_t* p = c_table;  // the address of a __constant__ object, passed on to the child
    const_child<<<1, count>>>(p, zero_copy, count);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(launch_errors, 1);
}

// ---- 5. A __shared__ pointer where only global memory is allowed --------------------------------
__global__ void shared_ptr_child(uint32_t* p) { p[1000] = 1u; }  // through the parent's shared pointer
__global__ void shared_ptr_parent(int mode, int* device_result) {
    __shared__ uint32_t tile[1024];
    tile[threadIdx.x] = threadIdx.x;
    __syncthreads();
    if (threadIdx.x != 0) return;
    cudaError_t e = cudaSuccess;
    if (mode == 0) e = cudaMemsetAsync(tile, 0, 64, 0);  // (a) illegal: not global memory
    else {                                                // (b) undefined: the child cannot see tile
        shared_ptr_child<<<1, 1>>>(tile);
        e = cudaGetLastError();
    }
    *device_result = (int)e;
}

#ifdef CDP1_DEVICE_SYNC
// CDP1 only: a parent waiting for its children. CDP2 (CUDA 12+, all of sm_90) removed the call, and
// nvcc rejects this kernel.
__global__ void cdp1_parent(int* p) {
    order_child<<<1, 1>>>(0, (unsigned*)p, p + 1);
    cudaDeviceSynchronize();
}
#endif

// Runs case `mode` of part 5 in a child process; returns {device-side code, host sync code}.
static void shared_ptr_in_child(int device, int mode, int* device_code, int* host_code) {
    int fd[2];
    *device_code = *host_code = (int)cudaErrorUnknown;
    if (pipe(fd) != 0) return;
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        int msg[2] = {(int)cudaErrorNoDevice, (int)cudaErrorNoDevice};
        int count = 0;
        int* d_res = nullptr;
        if (cudaGetDeviceCount(&count) == cudaSuccess && device < count && cudaSetDevice(device) == cudaSuccess &&
            cudaMalloc(&d_res, sizeof(int)) == cudaSuccess && cudaMemset(d_res, 0xff, sizeof(int)) == cudaSuccess) {
            shared_ptr_parent<<<1, 1024>>>(mode, d_res);
            cudaError_t launch = cudaGetLastError();
            msg[1] = (int)(launch != cudaSuccess ? launch : cudaDeviceSynchronize());
            if (cudaMemcpy(&msg[0], d_res, sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess)
                msg[0] = -1;  // the context is gone: the device-side code cannot be read back
        }
        if (write(fd[1], msg, sizeof msg) != sizeof msg) std::_Exit(3);
        std::_Exit(0);
    }
    close(fd[1]);
    int msg[2];
    if (read(fd[0], msg, sizeof msg) == sizeof msg) {
        *device_code = msg[0];
        *host_code = msg[1];
    }
    close(fd[0]);
    waitpid(pid, nullptr, 0);
}

static std::string code_name(int c) { return c < 0 ? "(unreadable: context lost)" : cudaGetErrorName((cudaError_t)c); }

int main(int argc, char** argv) {
    Args args(argc, argv, "Dynamic parallelism (CDP2): parent/child coherence, fire-and-forget and tail launches, recursion.");
    long long n_arg = args.integer("n", 1 << 20, 1, 1 << 26, "elements (one parent block and one child grid per 256)");
    args.parse_or_exit();
    int n = (int)n_arg;

    // Part 5 first, in child processes forked before this process touches CUDA.
    // Not under a CUDA tool (compute-sanitizer follows child processes and would count their
    // faults, which are the point here): the environment variable tools set says so before CUDA starts.
    int memset_dev = 0, memset_host = 0, launch_dev = 0, launch_host = 0;
    bool tool = cuda_tool_attached();
    if (!tool) {
        shared_ptr_in_child(args.device(), 0, &memset_dev, &memset_host);
        shared_ptr_in_child(args.device(), 1, &launch_dev, &launch_host);
    }

    DeviceInfo dev = select_device(args.device());
    (void)dev;
    Verdict verdict;
    int segs = (n + SEG - 1) / SEG;

    // Room for one pending child per parent block plus the tail launches.
    size_t pending = 0;
    CHECK(cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount));
    if (pending < (size_t)segs + 64) CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, segs + 64));
    size_t pending_now = 0;
    CHECK(cudaDeviceGetLimit(&pending_now, cudaLimitDevRuntimePendingLaunchCount));
    std::printf("cudaLimitDevRuntimePendingLaunchCount: %zu -> %zu (%d parent blocks, one child each)\n", pending,
                pending_now, segs);

    std::vector<uint32_t> in = random_vector<uint32_t>(n, 0, 1u << 30, 31);
    size_t bytes = (size_t)n * sizeof(uint32_t);
    uint32_t *d_in, *d_data, *d_seen, *d_child;
    unsigned long long* d_seg;
    int *d_err, *d_isg;
    CHECK(cudaMalloc(&d_in, bytes));
    CHECK(cudaMalloc(&d_data, bytes));
    CHECK(cudaMalloc(&d_seen, bytes));
    CHECK(cudaMalloc(&d_child, bytes));
    CHECK(cudaMalloc(&d_seg, segs * sizeof(unsigned long long)));
    CHECK(cudaMalloc(&d_err, sizeof(int)));
    CHECK(cudaMalloc(&d_isg, 4 * sizeof(int)));
    CHECK(cudaMemcpy(d_in, in.data(), bytes, cudaMemcpyHostToDevice));
    // Poison every output, so that a child or a tail grid that did not run fails the check.
    CHECK(cudaMemset(d_seen, 0xff, bytes));
    CHECK(cudaMemset(d_child, 0xff, bytes));
    CHECK(cudaMemset(d_seg, 0xff, segs * sizeof(unsigned long long)));
    CHECK(cudaMemset(d_isg, 0xff, 4 * sizeof(int)));
    CHECK(cudaMemset(d_err, 0, sizeof(int)));

    // 1. Parent -> fire-and-forget children -> tail launch.
    parent_launch<<<segs, SEG>>>(d_in, d_data, d_seen, d_child, d_seg, n, d_err, d_isg);
    CHECK_LAUNCH();
    CHECK(cudaDeviceSynchronize());  // on the host this waits for the parent, its children and its tail

    std::vector<uint32_t> want_data(n), want_child(n), seen(n), child(n);
    std::vector<unsigned long long> want_seg(segs, 0), seg(segs);
    for (int i = 0; i < n; ++i) {
        want_data[i] = parent_value(in[i], (uint32_t)(i % SEG));
        want_child[i] = child_value(want_data[i]);
        want_seg[i / SEG] += want_child[i];
    }
    int errors = 0, isg[4];
    CHECK(cudaMemcpy(seen.data(), d_seen, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(child.data(), d_child, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(seg.data(), d_seg, segs * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&errors, d_err, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(isg, d_isg, sizeof isg, cudaMemcpyDeviceToHost));
    std::printf("1. %d parent blocks wrote data[], __syncthreads(), launched %d fire-and-forget children + 1 tail grid"
                " (failed device launches: %d)\n", segs, segs, errors);
    std::printf("   child of block 0 saw data[0..3] = %u %u %u %u (parent wrote %u %u %u %u)\n", seen[0],
                n > 1 ? seen[1] : 0u, n > 2 ? seen[2] : 0u, n > 3 ? seen[3] : 0u, want_data[0],
                n > 1 ? want_data[1] : 0u, n > 2 ? want_data[2] : 0u, n > 3 ? want_data[3] : 0u);
    std::printf("   __isGlobal: cudaMalloc pointer %d, shared-memory pointer %d, local array %d\n", isg[0], isg[1],
                isg[2]);
    verdict.check(errors == 0, "no failed device-side launches");
    verdict.exact("children saw the parent's writes", want_data.data(), seen.data(), n);
    verdict.exact("children's results", want_child.data(), child.data(), n);
    verdict.exact("tail grid's sums of the children", want_seg.data(), seg.data(), segs);
    verdict.check(isg[0] == 1 && isg[1] == 0 && isg[2] == 0 && isg[3] == 3, "__isGlobal: global 1, shared 0, local 0");

    // 2. The recursive sum with tail launches.
    unsigned long long *d_a, *d_b, *d_result;
    int* d_depth;
    CHECK(cudaMalloc(&d_a, segs * sizeof(unsigned long long)));
    CHECK(cudaMalloc(&d_b, segs * sizeof(unsigned long long)));
    CHECK(cudaMalloc(&d_result, sizeof(unsigned long long)));
    CHECK(cudaMalloc(&d_depth, sizeof(int)));
    CHECK(cudaMemset(d_result, 0xff, sizeof(unsigned long long)));
    CHECK(cudaMemset(d_depth, 0xff, sizeof(int)));
    CHECK(cudaMemset(d_err, 0, sizeof(int)));
    const int MAX_LEVELS = 8;  // 256^4 > the largest --n: at most 4 levels
    std::vector<unsigned long long> span(2 * MAX_LEVELS);
    for (int l = 0; l < MAX_LEVELS; ++l) span[2 * l] = ~0ull, span[2 * l + 1] = 0;
    unsigned long long* d_span;
    CHECK(cudaMalloc(&d_span, span.size() * sizeof(unsigned long long)));
    CHECK(cudaMemcpy(d_span, span.data(), span.size() * sizeof(unsigned long long), cudaMemcpyHostToDevice));
    reduce_level<uint32_t><<<segs, SEG>>>(d_in, d_a, d_b, n, d_result, 0, d_depth, d_err, d_span);
    CHECK_LAUNCH();
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(span.data(), d_span, span.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    unsigned long long sum = 0, want_sum = 0;
    int depth = -1, want_depth = 0;
    for (uint32_t v : in) want_sum += v;
    for (int blocks = segs; blocks > 1; blocks = (blocks + SEG - 1) / SEG) ++want_depth;
    CHECK(cudaMemcpy(&sum, d_result, sizeof sum, cudaMemcpyDeviceToHost));
    lab_corrupt(&sum, 1);  // CUDA_LAB_CORRUPT: this check must be able to fail (corrupt.h)
    CHECK(cudaMemcpy(&depth, d_depth, sizeof depth, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&errors, d_err, sizeof(int), cudaMemcpyDeviceToHost));
    std::printf("2. recursive sum of %d elements, each level tail-launching the next: %d tail launches, sum %llu "
                "(CPU %llu)\n", n, depth, sum, want_sum);
    verdict.check(errors == 0, "no failed tail launches");
    verdict.check(depth == want_depth, "recursion depth = levels - 1");
    verdict.check(sum == want_sum, "recursive sum vs CPU");
    // Each level after the whole level before it: its first block started after that level's last
    // block had written its partial sum (global timer). A next level launched fire-and-forget by
    // block 0 can start while other blocks of the level are still running.
    // Every level that ran (or should have) is printed first; the order is judged after the table.
    int shown = std::min(std::max(want_depth, depth) + 1, MAX_LEVELS);
    std::printf("   level  first start us  last end us (from level 0's first start)\n");
    for (int l = 0; l < shown; ++l) {
        if (span[2 * l] == ~0ull) {
            std::printf("   %-5d %15s %12s\n", l, "not run", "-");
            continue;
        }
        std::printf("   %-5d %15.3f %12.3f\n", l, (long long)(span[2 * l] - span[0]) / 1e3,
                    (long long)(span[2 * l + 1] - span[0]) / 1e3);
    }
    bool after = depth == want_depth;
    for (int l = 1; l <= want_depth && l < MAX_LEVELS; ++l)
        if (span[2 * l] == ~0ull || span[2 * l] < span[2 * l - 1]) after = false;
    verdict.check(after, "each level started after the level before had ended");

    // 3. Launch order.
    const int OB = 8;
    unsigned* d_cnt;
    int* d_order;
    uint32_t *d_cells, *d_cseen;
    CHECK(cudaMalloc(&d_cnt, OB * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_order, OB * ORDER_CHILDREN * sizeof(int)));
    CHECK(cudaMalloc(&d_cells, OB * sizeof(uint32_t)));
    CHECK(cudaMalloc(&d_cseen, OB * sizeof(uint32_t)));
    CHECK(cudaMemset(d_cnt, 0, OB * sizeof(unsigned)));
    CHECK(cudaMemset(d_order, 0xff, OB * ORDER_CHILDREN * sizeof(int)));
    CHECK(cudaMemset(d_cseen, 0xff, OB * sizeof(uint32_t)));
    CHECK(cudaMemset(d_err, 0, sizeof(int)));
    order_parent<<<OB, 32>>>(d_cnt, d_order, d_cells, d_cseen, d_err);
    CHECK_LAUNCH();
    CHECK(cudaDeviceSynchronize());
    std::vector<int> order(OB * ORDER_CHILDREN), want_order(OB * ORDER_CHILDREN);
    std::vector<uint32_t> cseen(OB), want_cseen(OB);
    CHECK(cudaMemcpy(order.data(), d_order, order.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(cseen.data(), d_cseen, OB * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&errors, d_err, sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < OB * ORDER_CHILDREN; ++i) want_order[i] = i % ORDER_CHILDREN;
    for (int b = 0; b < OB; ++b) want_cseen[b] = 0xC0DE0000u + b;
    std::printf("3. %d blocks, threads 0..3 each launch a child into the implicit stream (child k waits (4-k) x 20 us):\n"
                "   tickets of block 0: children %d %d %d %d; named stream: the reader saw 0x%08x (writer 0x%08x)\n",
                OB, order[0], order[1], order[2], order[3], cseen[0], want_cseen[0]);
    verdict.check(errors == 0, "no failed launches (order, named stream)");
    verdict.exact("implicit stream: children in launch order", want_order.data(), order.data(), order.size());
    verdict.exact("named stream: reader after writer", want_cseen.data(), cseen.data(), OB);

    // 4. __constant__ and zero-copy memory.
    if (!dev.prop.canMapHostMemory) {
        std::printf("4. skipped: canMapHostMemory is 0 (no zero-copy memory on this GPU)\n");
    } else {
        const int cnt = 200;  // not a multiple of the warp size
        std::vector<uint32_t> table = random_vector<uint32_t>(CTABLE, 0, 0xffffffffu, 77);
        CHECK(cudaMemcpyToSymbol(c_table, table.data(), sizeof(uint32_t) * CTABLE));  // before the launch
        uint32_t* h_zc;
        uint32_t* d_zc;
        CHECK(cudaHostAlloc(&h_zc, 2 * cnt * sizeof(uint32_t), cudaHostAllocMapped));
        CHECK(cudaHostGetDevicePointer(&d_zc, h_zc, 0));
        for (int i = 0; i < 2 * cnt; ++i) h_zc[i] = 0xffffffffu;
        CHECK(cudaMemset(d_err, 0, sizeof(int)));
        const_parent<<<1, 1>>>(d_zc, cnt, d_err);
        CHECK_LAUNCH();
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(&errors, d_err, sizeof(int), cudaMemcpyDeviceToHost));
        std::vector<uint32_t> want_zc(2 * cnt);
        for (int i = 0; i < cnt; ++i) {
            want_zc[i] = const_value(table[i % CTABLE], i);
            want_zc[cnt + i] = const_value(table[(i + 1) % CTABLE], i);
        }
        std::printf("4. a child read the __constant__ table (directly and through the parent's pointer) and wrote\n"
                    "   %d values into mapped host memory: host reads [0] = %u (CPU %u)\n", 2 * cnt, h_zc[0], want_zc[0]);
        verdict.check(errors == 0, "no failed launch (constant / zero-copy)");
        verdict.exact("child: __constant__ -> zero-copy vs CPU", want_zc.data(), h_zc, 2 * cnt);
        CHECK(cudaFreeHost(h_zc));
    }

    // 5. The shared-pointer cases, run in child processes before this process used CUDA.
    if (tool) {
        std::printf("5. skipped: a CUDA tool is attached (the shared-pointer cases fault on purpose)\n");
    } else {
        std::printf("5. a __shared__ pointer (child processes): (a) device-side cudaMemsetAsync returned %s, then the host's\n"
                    "   cudaDeviceSynchronize %s; (b) a child launched with it: launch %s, cudaDeviceSynchronize %s (printed)\n",
                    code_name(memset_dev).c_str(), code_name(memset_host).c_str(), code_name(launch_dev).c_str(),
                    code_name(launch_host).c_str());
        verdict.note(memset_host != (int)cudaErrorNoDevice, "child processes ran on the GPU");  // set-up
        verdict.check(memset_dev != (int)cudaSuccess || memset_host != (int)cudaSuccess,
                      "cudaMemsetAsync on shared memory fails");
    }
    for (void* p : {(void*)d_cnt, (void*)d_order, (void*)d_cells, (void*)d_cseen}) CHECK(cudaFree(p));

    for (void* p : {(void*)d_in, (void*)d_data, (void*)d_seen, (void*)d_child, (void*)d_seg, (void*)d_err,
                    (void*)d_isg, (void*)d_a, (void*)d_b, (void*)d_result, (void*)d_depth, (void*)d_span})
        CHECK(cudaFree(p));
    return verdict.finish();
}
