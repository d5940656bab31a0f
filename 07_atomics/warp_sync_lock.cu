// warp_sync_lock - a spin lock shared by lanes of the same warp: a deadlock before Volta, correct
// with independent thread scheduling; __syncwarp after the divergence.
//
// Manual: G 4.1 SIMT 架构 (before Volta a warp had one program counter for its 32 threads, so
//         "algorithms that need fine-grained sharing of data guarded by locks or mutexes can easily
//         deadlock, depending on which warp the contending threads come from"; from Volta on,
//         independent thread scheduling keeps a program counter per thread and lets threads of one
//         warp wait for each other; warp-synchronous code must be revisited: __syncwarp).
// Shows:  threads take a lock, update two plain (non-atomic) fields of the data it guards, release
//         it. Thread i's k-th update uses lock (i + k) % locks, so with 8 locks lanes t, t+8, t+16,
//         t+24 of every warp want the same lock at the same time: the holder and the waiters are in
//         one warp. With one program counter per warp the waiters' spin loop would keep the warp
//         and the holder could never reach its release; on Volta+ the scheduler interleaves the
//         diverged lanes and everyone finishes. The acquire is a compare-exchange with
//         memory_order_acquire and the release a store with memory_order_release (cuda::atomic_ref),
//         which order the plain accesses of the critical section. A watchdog (2^24 failed attempts)
//         turns a hang into a reported failure. After the loop the lanes of a warp may still be
//         diverged, as far as the programming model goes: __syncwarp() is what guarantees that they
//         meet before they read each other's shared memory. (This build is not expected to show the
//         bug without it - not run without it on a GPU: nvcc closes the `if (i < n)` region with a
//         convergence barrier, BSYNC, before the shared store, so the warp should be reconverged
//         there anyway; the machine-code claims check that the WARPSYNC is there.)
//         Checks: every lock's count and sum equal the CPU's (no update lost: mutual exclusion held),
//         the warp-level totals add up, the watchdog never fired.
// Build:  make warp_sync_lock   (nvcc -std=c++17 -O3 -arch=native -I../common -o warp_sync_lock warp_sync_lock.cu)
// Run:    ./warp_sync_lock [--threads=2^14] [--iters=4] [--locks=8] [--reps=3]
// Output: acquisitions, time, longest wait, the check lines, PASSED.
#include <cuda/atomic>
#include <algorithm>
#include <cstdint>
#include <vector>
#include "common.cuh"

constexpr int BLOCK = 256;
constexpr long long SPIN_LIMIT = 1LL << 24;  // failed attempts before a thread gives up (a hang otherwise)

struct Guarded {  // the data one lock protects: two fields that must change together
    unsigned long long sum;
    unsigned count;
    unsigned pad;
};

__global__ void locked_updates(int* locks, Guarded* data, int nlocks, const unsigned* vals, int n, int iters,
                               unsigned long long* total, unsigned* failures, unsigned long long* longest_wait) {
    __shared__ unsigned long long lane_sum[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    unsigned long long mine = 0, wait = 0;
    if (i < n) {  // no early return: every lane of the warp must reach the __syncwarp below
        for (int k = 0; k < iters; ++k) {
            int l = (i + k) % nlocks;
            cuda::atomic_ref<int, cuda::thread_scope_device> lock(locks[l]);
            long long spins = 0;
            int expected = 0;
            // Before Volta: the lanes that lose stay in this loop, the warp runs the loop as long as
            // any lane is in it, and the winner in the same warp waits to reconverge after it: the
            // lock is never released. Volta+ lets the winner run on to its release.
            while (!lock.compare_exchange_weak(expected, 1, cuda::memory_order_acquire, cuda::memory_order_relaxed)) {
                expected = 0;
                if (++spins == SPIN_LIMIT) break;
            }
            if (spins == SPIN_LIMIT) {
                atomicAdd(failures, 1u);
                continue;
            }
            unsigned v = vals[i] + k;
            Guarded& d = data[l];  // plain loads and stores: only the lock makes them safe
            d.sum += v;
            d.count += 1;
            lock.store(0, cuda::memory_order_release);
            mine += v;
            if ((unsigned long long)spins > wait) wait = spins;
        }
    }
    lane_sum[threadIdx.x] = mine;
    // The lock loops may leave the lanes of this warp at different points; __syncwarp() waits for all
    // 32 and makes their shared-memory writes visible to each other. Without it nothing guarantees
    // that lane 0 reads a neighbour's slot after the neighbour wrote it (Volta+ does not run a warp in
    // lockstep). Today's SASS has a BSYNC (a reconvergence) that ends the `if` above, so the results
    // are not expected to show the missing __syncwarp (not run so; WARPSYNC.ALL here: tests/sass_claims).
    __syncwarp();
    if (threadIdx.x % 32 == 0) {
        unsigned long long w = 0;
        for (int j = 0; j < 32; ++j) w += lane_sum[threadIdx.x + j];
        atomicAdd(total, w);
    }
    if (wait) atomicMax(longest_wait, wait);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "A spin lock contended by lanes of one warp (independent thread scheduling), __syncwarp.");
    // At most 2^16: a run's time grows faster than the thread count (every waiter spins against the same
    // few locks); 2^20 threads did not finish in 150 s on an H100.
    int n = (int)args.integer("threads", 1 << 14, 1, 1 << 16, "threads");
    int iters = (int)args.integer("iters", 4, 1, 64, "lock acquisitions per thread");
    int nlocks = (int)args.integer("locks", 8, 1, 4096, "locks (< 32: several lanes of each warp share one)");
    int reps = (int)args.integer("reps", 3, 1, 100, "timed repetitions (median reported)");
    args.parse_or_exit();
    DeviceInfo dev = select_device(args.device());
    require_cc(dev, 7, 0, "independent thread scheduling (a lock shared within a warp)");

    std::vector<unsigned> vals = random_vector<unsigned>(n, 0, 1u << 20, 3);
    std::vector<unsigned long long> ref_sum(nlocks, 0);
    std::vector<unsigned> ref_count(nlocks, 0);
    unsigned long long ref_total = 0;
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < iters; ++k) {
            int l = (i + k) % nlocks;
            ref_sum[l] += vals[i] + k;
            ref_count[l] += 1;
            ref_total += vals[i] + k;
        }

    int* d_locks;
    Guarded* d_data;
    unsigned *d_vals, *d_fail;
    unsigned long long *d_total, *d_wait;
    CHECK(cudaMalloc(&d_locks, nlocks * sizeof(int)));
    CHECK(cudaMalloc(&d_data, nlocks * sizeof(Guarded)));
    CHECK(cudaMalloc(&d_vals, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_fail, sizeof(unsigned)));
    CHECK(cudaMalloc(&d_total, sizeof(unsigned long long)));
    CHECK(cudaMalloc(&d_wait, sizeof(unsigned long long)));
    CHECK(cudaMemcpy(d_vals, vals.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_locks, 0, nlocks * sizeof(int)));  // all free; every run releases what it takes
    int blocks = (n + BLOCK - 1) / BLOCK;
    auto launch = [&] {
        CHECK(cudaMemsetAsync(d_data, 0, nlocks * sizeof(Guarded)));
        CHECK(cudaMemsetAsync(d_fail, 0, sizeof(unsigned)));
        CHECK(cudaMemsetAsync(d_total, 0, sizeof(unsigned long long)));
        CHECK(cudaMemsetAsync(d_wait, 0, sizeof(unsigned long long)));
        locked_updates<<<blocks, BLOCK>>>(d_locks, d_data, nlocks, d_vals, n, iters, d_total, d_fail, d_wait);
    };
    launch();
    CHECK_LAUNCH();
    CHECK(cudaDeviceSynchronize());

    std::vector<Guarded> data(nlocks);
    unsigned failures = 0;
    unsigned long long total = 0, wait = 0;
    CHECK(cudaMemcpy(data.data(), d_data, nlocks * sizeof(Guarded), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&failures, d_fail, sizeof failures, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&total, d_total, sizeof total, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&wait, d_wait, sizeof wait, cudaMemcpyDeviceToHost));
    std::vector<unsigned long long> got_sum(nlocks);
    std::vector<unsigned> got_count(nlocks);
    for (int l = 0; l < nlocks; ++l) {
        got_sum[l] = data[l].sum;
        got_count[l] = data[l].count;
    }
    double ms = bench_ms(launch, reps, 1);

    long long acq = (long long)n * iters;
    std::printf("%d threads x %d acquisitions on %d locks (%d lanes of a warp per lock): %lld critical sections\n", n,
                iters, nlocks, std::max(1, 32 / nlocks), acq);
    std::printf("completed in %.3f ms (%.0f ns per critical section; the sections of one lock are serial)\n", ms,
                1e6 * ms / acq);
    std::printf("longest wait: %llu failed attempts (watchdog at %lld)\n", wait, SPIN_LIMIT);
    Verdict verdict;
    verdict.check(failures == 0, "no thread gave up (watchdog)");
    verdict.exact("count per lock", ref_count.data(), got_count.data(), nlocks);
    verdict.exact("sum per lock", ref_sum.data(), got_sum.data(), nlocks);
    verdict.exact("warp totals after __syncwarp", &ref_total, &total, 1);

    CHECK(cudaFree(d_locks));
    CHECK(cudaFree(d_data));
    CHECK(cudaFree(d_vals));
    CHECK(cudaFree(d_fail));
    CHECK(cudaFree(d_total));
    CHECK(cudaFree(d_wait));
    return verdict.finish();
}
