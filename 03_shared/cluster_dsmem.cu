// cluster_dsmem - thread block clusters and distributed shared memory (Hopper, sm_90+).
//
// Manual: beyond the manual (its documents stop at Volta/Ampere). It extends G 5.2.1 应用程序层次
//         (threads of one block share data through shared memory, threads of different blocks only
//         through global memory) and N 5.4 利用Shared Memory优化程序.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o cluster_dsmem cluster_dsmem.cu
// Shows:  on sm_90 up to 8 blocks (portable limit) can be launched as a cluster: they run at the
//         same time on one GPC, and each can read, write and atomically update the shared memory of
//         the others (distributed shared memory, DSMEM) through cooperative_groups::this_cluster():
//         map_shared_rank(ptr, rank) turns a pointer into block `rank`'s copy of the same variable,
//         cluster.sync() is a barrier over all blocks of the cluster. Use: a histogram with more bins
//         than one block's shared memory holds well. The bins are split across the blocks of a
//         cluster (block r owns bins [r*B, (r+1)*B)); every thread adds into whichever block owns
//         the bin. Cluster size 1 is the classic per-block privatized histogram; global atomics
//         are the baseline. The cluster size is chosen at launch with cudaLaunchKernelEx and
//         cudaLaunchAttributeClusterDimension. Exact CPU match for every version.
// Build:  make cluster_dsmem   Run: ./cluster_dsmem [--n=2^26] [--bins=32768] [--reps=20]
// Output: per version: blocks per cluster, shared KB per block, max active clusters, ms, GB/s,
//         speed-up over global atomics; then PASSED. Before sm_90: SKIPPED (exit 77).
#include <cooperative_groups.h>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>
#include "common.cuh"
#include "results.cuh"

namespace cg = cooperative_groups;

constexpr int kBlock = 512;

void histogram_cpu(const int* data, long long n, unsigned* bins, int nbins) {
    std::fill(bins, bins + nbins, 0u);
    for (long long i = 0; i < n; ++i) ++bins[data[i]];
}

// Baseline: every element is an atomic on global memory (resolved in L2).
__global__ void histogram_global(const int* data, long long n, unsigned* bins) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        atomicAdd(&bins[data[i]], 1u);
}

// One histogram per cluster, its bins spread over the cluster's blocks' shared memory.
__global__ void histogram_cluster(const int* data, long long n, unsigned* bins, int nbins, int bins_per_block) {
#if __CUDA_ARCH__ >= 900  // clusters exist from sm_90; older targets compile an empty kernel (never launched)
    extern __shared__ unsigned part[];  // this block's share: bins_per_block counters
    cg::cluster_group cluster = cg::this_cluster();
    for (int i = threadIdx.x; i < bins_per_block; i += blockDim.x) part[i] = 0;
    // All blocks must have zeroed their share (and be running) before anyone adds into it.
    cluster.sync();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        int b = data[i];
        unsigned* owner = cluster.map_shared_rank(part, b / bins_per_block);  // maybe another SM's shared memory
        atomicAdd(owner + b % bins_per_block, 1u);
    }
    // A block's shared memory disappears when it exits: wait until nobody adds into it anymore.
    cluster.sync();
    int first = (int)cluster.block_rank() * bins_per_block;
    for (int i = threadIdx.x; i < bins_per_block && first + i < nbins; i += blockDim.x)
        if (part[i]) atomicAdd(&bins[first + i], part[i]);
#else
    (void)data, (void)n, (void)bins, (void)nbins, (void)bins_per_block;
#endif
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Histogram whose bins are split across the shared memory of a thread block cluster.");
    long long n = args.integer("n", 1LL << 26, 1, 1LL << 30, "number of input elements");
    int nbins = (int)args.integer("bins", 32768, 1, 1 << 18, "number of histogram bins");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "cluster_dsmem", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    require_cc(dev, 9, 0, "thread block clusters");
    // The device's 9.0 is not enough: built for compute_75 (make ARCH=compute_75) the driver
    // JIT-compiles the kernel's PTX for this GPU, but that PTX holds the empty body that
    // `#if __CUDA_ARCH__ >= 900` leaves below sm_90. The kernel's ptxVersion says which code it
    // has: the manual's G 3.1 (binary and PTX compatibility, JIT).
    require_kernel_arch((const void*)histogram_cluster, 90, "cluster_dsmem's kernels", "thread block clusters");
    int cluster_launch = device_attribute(cudaDevAttrClusterLaunch, dev.id);
    if (!cluster_launch) skip("this device does not support cluster launch (cudaDevAttrClusterLaunch = 0)");

    size_t bytes = n * sizeof(int);
    std::printf("n = %lld ints (%.1f MB), %d bins (%d KB of counters), %d threads per block\n", n, bytes / 1e6, nbins,
                nbins * 4 / 1024, kBlock);
    std::vector<int> data = random_vector<int>(n, 0, nbins - 1, 31);
    std::vector<unsigned> ref(nbins), got(nbins);
    histogram_cpu(data.data(), n, ref.data(), nbins);

    int* d_data;
    unsigned* d_bins;
    CHECK(cudaMalloc(&d_data, bytes));
    CHECK(cudaMalloc(&d_bins, nbins * sizeof(unsigned)));
    CHECK(cudaMemcpy(d_data, data.data(), bytes, cudaMemcpyHostToDevice));
    size_t optin = dev.smem_optin();  // what both the profile's GPU and this one accept (device.cuh)
    CHECK(cudaFuncSetAttribute(histogram_cluster, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)optin));

    // One launch configuration per cluster size; the grid is as many clusters as fit on the GPU at
    // once (cudaOccupancyMaxActiveClusters), each walking the input grid-stride, so all are resident.
    // Every version starts from zeroed bins (the kernels accumulate); while timing the bins keep
    // accumulating: only the checked run is compared.
    auto check = [&](Verdict& verdict, const std::string& name) {
        CHECK(cudaMemcpy(got.data(), d_bins, nbins * sizeof(unsigned), cudaMemcpyDeviceToHost));
        verdict.exact(name, ref.data(), got.data(), nbins);
    };
    auto zero = [&] { CHECK(cudaMemset(d_bins, 0, nbins * sizeof(unsigned))); };
    table.param("n", n);
    table.param("bins", nbins);
    int grid_g = dev.real.multiProcessorCount * (dev.real.maxThreadsPerMultiProcessor / kBlock);  // one wave here
    table.add("global atomics", [&] { histogram_global<<<grid_g, kBlock>>>(d_data, n, d_bins); }, (double)bytes, check,
              zero);
    std::vector<cudaLaunchConfig_t> cfgs(4);
    std::vector<cudaLaunchAttribute> attrs(4);
    std::vector<int> per_block(4), ran_clusters(4);
    for (int k = 0; k < 4; ++k) {
        int csize = 1 << k;
        per_block[k] = (nbins + csize - 1) / csize;
        size_t smem = per_block[k] * sizeof(unsigned);
        std::string name = csize == 1 ? "per-block shared (1 block)" : "cluster DSMEM (" + std::to_string(csize) + " blocks)";
        attrs[k].id = cudaLaunchAttributeClusterDimension;
        attrs[k].val.clusterDim.x = csize;
        attrs[k].val.clusterDim.y = 1;
        attrs[k].val.clusterDim.z = 1;
        cudaLaunchConfig_t& cfg = cfgs[k];
        cfg = {};
        cfg.blockDim = dim3(kBlock);
        cfg.dynamicSmemBytes = smem;
        cfg.attrs = &attrs[k];
        cfg.numAttrs = 1;
        cfg.gridDim = dim3(csize);
        int clusters = 0;
        if (smem <= optin) CHECK(cudaOccupancyMaxActiveClusters(&clusters, histogram_cluster, &cfg));
        if (clusters == 0) {
            std::printf("%-28s does not fit: %zu KB per block (limit %zu KB)\n", name.c_str(), smem / 1024,
                        optin / 1024);
            continue;
        }
        cfg.gridDim = dim3(clusters * csize);
        ran_clusters[k] = clusters;
        table.add(name, [&, k] {
            CHECK(cudaLaunchKernelEx(&cfgs[k], histogram_cluster, (const int*)d_data, n, d_bins, nbins, per_block[k]));
        }, (double)bytes, check, zero).param("blocks", csize);
    }
    // The launch shape of each cluster size as columns; "-" for global atomics.
    auto shape = [&](const Results::Version& v, int what) {
        for (int k = 0; k < 4; ++k)
            if (ran_clusters[k] && v.row.size() && v.row[0].second == std::to_string(1 << k))
                return what == 0 ? (double)(1 << k) : what == 1 ? per_block[k] * 4 / 1024.0 : (double)ran_clusters[k];
        return std::nan("");
    };
    table.column("blocks", "blocks_per_cluster", [&](const Results::Version& v) { return shape(v, 0); }, "%.0f");
    table.column("KB/block", "kb_per_block", [&](const Results::Version& v) { return shape(v, 1); }, "%.1f");
    table.column("clusters", "clusters", [&](const Results::Version& v) { return shape(v, 2); }, "%.0f");
    table.speedup_over("global atomics");
    Verdict verdict;
    table.run(verdict, reps);
    int ran = (int)table.versions().size() - 1;
    verdict.check(ran > 0, "at least one cluster size fits");

    CHECK(cudaFree(d_data));
    CHECK(cudaFree(d_bins));
    return verdict.finish();
}
