// profiles.h - the GPUs that CUDA_LAB_PROFILE can stand for, each value with its source.
//
// `CUDA_LAB_PROFILE=t4 ./prog` runs prog on the real GPU, but every feature gate and every size
// choice that goes through common/ (DeviceInfo::prop, device_attribute(), mem_get_info(),
// can_access_peer(); device.cuh) sees the attributes below instead: the program then skips, falls
// back or sizes itself as it would on that GPU. What it measures is still the real GPU's.
// Combine a profile with a PTX build of its architecture (make ARCH=compute_75 for t4 and gtx1650,
// ARCH=compute_80 for the others; tools/profile_run.py) so that the kernels also take the code
// paths compiled for it (__CUDA_ARCH__): the profile changes what the host code sees, the build what
// the device code is.
//
// The table is text, parsed by parse_profiles() (device.cuh) and by tests/test_profiles.py.
// Lines:
//   source  ID  URL  description        a published source, cited by ID below
//   profile KEY  the name a learner's deviceQuery prints | where it runs
//   KEY  ATTRIBUTE  VALUE  SOURCE[,SOURCE]  [note]
// SOURCE "unpublished" marks a value no source above gives: the note then says why this value
// was chosen (the conservative one: a feature off, a count low), and its effect.
// ATTRIBUTE names are cudaDeviceProp's fields; peerAccess is cudaDeviceCanAccessPeer's answer
// for any pair. memoryClockRate is in kHz (cudaDevAttrMemoryClockRate; deviceQuery prints MHz),
// the peak DRAM bandwidth = 2 x memoryClockRate x memoryBusWidth / 8.
#pragma once

namespace lab_profiles {
inline constexpr const char* kTable = R"(
source guide-cc  https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#features-and-technical-specifications  CUDA C++ Programming Guide: Technical Specifications per Compute Capability (threads, blocks, registers and shared memory per SM and per block; clusters from 9.0) and Arithmetic Instructions (64 FP32 lanes per SM on 7.5 and 8.0, 128 on 8.6 and 8.9)
source guide-um  https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#system-requirements-for-unified-memory  CUDA C++ Programming Guide: Unified Memory system requirements (Linux, compute capability 6.0+: concurrentManagedAccess 1; pageableMemoryAccess only with HMM or ATS; hostNativeAtomicSupported only over NVLink-C2C/NVLink to the CPU; Windows and WSL: concurrentManagedAccess 0)
source guide-pool https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#stream-ordered-memory-allocator  CUDA C++ Programming Guide: Stream Ordered Memory Allocator (cudaDevAttrMemoryPoolsSupported; supported from CUDA 11.2 on Linux and Windows)
source wsl       https://docs.nvidia.com/cuda/wsl-user-guide/index.html#known-limitations-for-linux-cuda-applications  CUDA on WSL User Guide, WSL 2 Support Constraints: Known Limitations for Linux CUDA Applications (Unified Memory limited to what native Windows has: no concurrent CPU/GPU access to managed memory, no on-demand paging or oversubscription; pinned system memory limited)
source guide-uva https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#unified-virtual-address-space  CUDA C++ Programming Guide: Unified Virtual Address Space (one address space for the host and the devices of compute capability 2.0+ in a 64-bit process; pinned host memory from cudaHostAlloc is then mapped, usable by kernels)
source dq-t4     https://chiemon.github.io/2024/12/25/%E6%98%BE%E5%8D%A1%E4%BF%A1%E6%81%AF.html  deviceQuery output of a Tesla T4 (CUDA 11.0 driver)
source t4-ds     https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/t4-tensor-core-datasheet-951643.pdf  NVIDIA T4 datasheet (2,560 CUDA cores, 16 GB GDDR6, 320+ GB/s, PCIe Gen3 x16, single slot)
source a100-wp   https://images.nvidia.com/aem-dgx/Content/dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf  NVIDIA A100 Tensor Core GPU Architecture whitepaper, table 3 (A100 SXM4 40 GB: 108 SMs, 40 MB L2, 5120-bit HBM2 at 1215 MHz DDR, 1555 GB/s, 164 KB shared memory per SM)
source ada-wp    https://images.nvidia.com/aem-dgx/Content/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf  NVIDIA Ada GPU Architecture whitepaper, appendix table (GeForce RTX 4090: 128 SMs, 16384 CUDA cores, 72 MB L2, 24 GB GDDR6X, 384-bit, 21 Gbps, 1008 GB/s)
source rtx30m    https://www.nvidia.com/en-us/geforce/laptops/30-series/  NVIDIA GeForce RTX 30 Series laptops, specifications (RTX 3060 Laptop GPU: 3840 CUDA cores, 6 GB GDDR6, 192-bit)
source gtx1650   https://www.nvidia.com/en-us/geforce/graphics-cards/gtx-1650/specifications/  NVIDIA GeForce GTX 1650 specifications (896 CUDA cores, 4 GB GDDR5, 128-bit, 8 Gbps)

profile t4  Tesla T4 | a hosted notebook (Linux, one GPU)
t4 major                          7            dq-t4
t4 minor                          5            dq-t4
t4 totalGlobalMem                 15843721216  dq-t4
t4 multiProcessorCount            40           dq-t4
t4 sharedMemPerBlock              49152        dq-t4
t4 sharedMemPerBlockOptin         65536        guide-cc
t4 sharedMemPerMultiprocessor     65536        guide-cc
t4 l2CacheSize                    4194304      dq-t4
t4 maxThreadsPerMultiProcessor    1024         dq-t4
t4 maxBlocksPerMultiProcessor     16           guide-cc
t4 regsPerMultiprocessor          65536        guide-cc
t4 memoryClockRate                5001000      dq-t4
t4 memoryBusWidth                 256          dq-t4
t4 clusterLaunch                  0            guide-cc
t4 managedMemory                  1            guide-um
t4 concurrentManagedAccess        1            guide-um
t4 pageableMemoryAccess           0            unpublished  needs HMM or ATS (guide-um), which a hosted notebook's driver and kernel are not documented to have: 0, the conservative value (system-allocated memory is then not touched by kernels)
t4 pageableMemoryAccessUsesHostPageTables 0    guide-um  ATS only: NVLink-C2C/POWER9 systems, not a PCIe card
t4 hostNativeAtomicSupported      0            guide-um  a PCIe card: no native atomics with the CPU
t4 canMapHostMemory               1            guide-uva  mapped pinned memory on every 64-bit platform with unified addressing
t4 unifiedAddressing              1            guide-uva  a 64-bit process
t4 asyncEngineCount               1            unpublished  the copy-engine count is not in the datasheet: 1, the conservative value (copies in one direction at a time overlap kernels; programs read it and say so)
t4 concurrentKernels              1            guide-cc  every device of compute capability 2.0+
t4 memoryPoolsSupported           1            guide-pool
t4 ipcEventSupported              1            unpublished  Linux supports the IPC API on every device of unified addressing (cudaIpc* reference); 1
t4 peerAccess                     0            unpublished  a hosted notebook gives one GPU: no peer to access

profile rtx3060-laptop-wsl  NVIDIA GeForce RTX 3060 Laptop GPU | a Windows laptop, CUDA under WSL 2
rtx3060-laptop-wsl major                          8            guide-cc  GA106, Ampere GeForce: 8.6
rtx3060-laptop-wsl minor                          6            guide-cc
rtx3060-laptop-wsl totalGlobalMem                 6442450944   rtx30m  6 GB; the driver reports a little less, and Windows' display keeps part of it (mem_get_info() is what a program should size from)
rtx3060-laptop-wsl multiProcessorCount            30           rtx30m  3840 CUDA cores / 128 FP32 lanes per SM on 8.6 (guide-cc)
rtx3060-laptop-wsl sharedMemPerBlock              49152        guide-cc
rtx3060-laptop-wsl sharedMemPerBlockOptin         101376       guide-cc  99 KB
rtx3060-laptop-wsl sharedMemPerMultiprocessor     102400       guide-cc  100 KB
rtx3060-laptop-wsl l2CacheSize                    3145728      unpublished  NVIDIA's pages do not give the laptop part's L2; 3 MB, the GA106 figure of third-party databases: programs size bandwidth buffers at several times L2, so a larger guess is the safe side
rtx3060-laptop-wsl maxThreadsPerMultiProcessor    1536         guide-cc
rtx3060-laptop-wsl maxBlocksPerMultiProcessor     16           guide-cc
rtx3060-laptop-wsl regsPerMultiprocessor          65536        guide-cc
rtx3060-laptop-wsl memoryClockRate                7001000      unpublished  NVIDIA gives the laptop part's memory speed per laptop (12-14 Gbps GDDR6); 14 Gbps = 7001 MHz as deviceQuery prints it
rtx3060-laptop-wsl memoryBusWidth                 192          rtx30m
rtx3060-laptop-wsl clusterLaunch                  0            guide-cc
rtx3060-laptop-wsl managedMemory                  1            wsl  Unified Memory exists with native Windows' feature set
rtx3060-laptop-wsl concurrentManagedAccess        0            wsl,guide-um
rtx3060-laptop-wsl pageableMemoryAccess           0            wsl,guide-um
rtx3060-laptop-wsl pageableMemoryAccessUsesHostPageTables 0    wsl,guide-um
rtx3060-laptop-wsl hostNativeAtomicSupported      0            guide-um  a PCIe GPU
rtx3060-laptop-wsl canMapHostMemory               1            guide-uva,wsl  mapped pinned memory exists; WSL limits how much system memory can be pinned
rtx3060-laptop-wsl unifiedAddressing              1            guide-uva  a 64-bit process
rtx3060-laptop-wsl asyncEngineCount               1            unpublished  not published for the laptop part: 1, the conservative value
rtx3060-laptop-wsl concurrentKernels              1            guide-cc
rtx3060-laptop-wsl memoryPoolsSupported           1            guide-pool
rtx3060-laptop-wsl ipcEventSupported              0            unpublished  earlier CUDA on WSL guides listed the IPC APIs as not supported; whether today's driver has them was not confirmed from the current guide: 0, the conservative value (ipc then skips)
rtx3060-laptop-wsl peerAccess                     0            unpublished  a laptop has one NVIDIA GPU: no peer to access

profile rtx4090  NVIDIA GeForce RTX 4090 | a desktop or lab PC (Linux)
rtx4090 major                          8            guide-cc  AD102, Ada: 8.9
rtx4090 minor                          9            guide-cc
rtx4090 totalGlobalMem                 25769803776  ada-wp  24 GB; the driver reports a little less
rtx4090 multiProcessorCount            128          ada-wp
rtx4090 sharedMemPerBlock              49152        guide-cc
rtx4090 sharedMemPerBlockOptin         101376       guide-cc  99 KB
rtx4090 sharedMemPerMultiprocessor     102400       guide-cc  100 KB
rtx4090 l2CacheSize                    75497472     ada-wp  72 MB
rtx4090 maxThreadsPerMultiProcessor    1536         guide-cc
rtx4090 maxBlocksPerMultiProcessor     24           guide-cc
rtx4090 regsPerMultiprocessor          65536        guide-cc
rtx4090 memoryClockRate                10501000     ada-wp  21 Gbps = 10501 MHz as deviceQuery prints it (2 x 10501 MHz x 48 B = 1008 GB/s)
rtx4090 memoryBusWidth                 384          ada-wp
rtx4090 clusterLaunch                  0            guide-cc
rtx4090 managedMemory                  1            guide-um
rtx4090 concurrentManagedAccess        1            guide-um
rtx4090 pageableMemoryAccess           0            unpublished  HMM needs the open kernel modules and a recent Linux kernel (guide-um); not every lab PC has them: 0, the conservative value
rtx4090 pageableMemoryAccessUsesHostPageTables 0    guide-um  ATS only
rtx4090 hostNativeAtomicSupported      0            guide-um  a PCIe GPU
rtx4090 canMapHostMemory               1            guide-uva  mapped pinned memory on every 64-bit platform with unified addressing
rtx4090 unifiedAddressing              1            guide-uva  a 64-bit process
rtx4090 asyncEngineCount               1            unpublished  not in the whitepaper: 1, the conservative value
rtx4090 concurrentKernels              1            guide-cc
rtx4090 memoryPoolsSupported           1            guide-pool
rtx4090 ipcEventSupported              1            unpublished  Linux: the IPC API on every device of unified addressing; 1
rtx4090 peerAccess                     0            unpublished  a PC with one GPU has no peer: 0

profile a100  NVIDIA A100-SXM4-40GB | a data-center or cloud node (Linux)
a100 major                          8            a100-wp
a100 minor                          0            a100-wp
a100 totalGlobalMem                 42949672960  a100-wp  40 GB; the driver reports a little less
a100 multiProcessorCount            108          a100-wp
a100 sharedMemPerBlock              49152        guide-cc
a100 sharedMemPerBlockOptin         166912       guide-cc  163 KB
a100 sharedMemPerMultiprocessor     167936       guide-cc,a100-wp  164 KB
a100 l2CacheSize                    41943040     a100-wp  40 MB
a100 maxThreadsPerMultiProcessor    2048         guide-cc
a100 maxBlocksPerMultiProcessor     32           guide-cc
a100 regsPerMultiprocessor          65536        guide-cc,a100-wp
a100 memoryClockRate                1215000      a100-wp  1215 MHz DDR (2 x 1215 MHz x 640 B = 1555 GB/s)
a100 memoryBusWidth                 5120         a100-wp
a100 clusterLaunch                  0            guide-cc
a100 managedMemory                  1            guide-um
a100 concurrentManagedAccess        1            guide-um
a100 pageableMemoryAccess           0            unpublished  HMM depends on the node's driver and kernel (guide-um): 0, the conservative value
a100 pageableMemoryAccessUsesHostPageTables 0    guide-um  an x86 node: no ATS
a100 hostNativeAtomicSupported      0            guide-um  an x86 node: the CPU link is PCIe
a100 canMapHostMemory               1            guide-uva  mapped pinned memory on every 64-bit platform with unified addressing
a100 unifiedAddressing              1            guide-uva  a 64-bit process
a100 asyncEngineCount               1            unpublished  not in the whitepaper: 1, the conservative value
a100 concurrentKernels              1            guide-cc
a100 memoryPoolsSupported           1            guide-pool
a100 ipcEventSupported              1            unpublished  Linux: the IPC API on every device of unified addressing; 1
a100 peerAccess                     0            unpublished  the profile is one GPU (a cloud instance of one A100 is common): 0; between the GPUs of one node NVLink gives peer access (a100-wp)

profile gtx1650  NVIDIA GeForce GTX 1650 | a desktop or lab PC (Linux), 4 GB
gtx1650 major                          7            guide-cc  TU117, Turing: 7.5
gtx1650 minor                          5            guide-cc
gtx1650 totalGlobalMem                 4294967296   gtx1650  4 GB; the driver reports a little less, and a display on it keeps part
gtx1650 multiProcessorCount            14           gtx1650  896 CUDA cores / 64 FP32 lanes per SM on 7.5 (guide-cc)
gtx1650 sharedMemPerBlock              49152        guide-cc
gtx1650 sharedMemPerBlockOptin         65536        guide-cc
gtx1650 sharedMemPerMultiprocessor     65536        guide-cc
gtx1650 l2CacheSize                    1048576      unpublished  NVIDIA's page does not give the L2 size; 1 MB (TU117 as third-party databases list it)
gtx1650 maxThreadsPerMultiProcessor    1024         guide-cc
gtx1650 maxBlocksPerMultiProcessor     16           guide-cc
gtx1650 regsPerMultiprocessor          65536        guide-cc
gtx1650 memoryClockRate                4001000      gtx1650  8 Gbps = 4001 MHz as deviceQuery prints it (the GDDR5 board)
gtx1650 memoryBusWidth                 128          gtx1650
gtx1650 clusterLaunch                  0            guide-cc
gtx1650 managedMemory                  1            guide-um
gtx1650 concurrentManagedAccess        1            guide-um
gtx1650 pageableMemoryAccess           0            unpublished  HMM depends on the PC's driver and kernel (guide-um): 0, the conservative value
gtx1650 pageableMemoryAccessUsesHostPageTables 0    guide-um  ATS only
gtx1650 hostNativeAtomicSupported      0            guide-um  a PCIe GPU
gtx1650 canMapHostMemory               1            guide-uva  mapped pinned memory on every 64-bit platform with unified addressing
gtx1650 unifiedAddressing              1            guide-uva  a 64-bit process
gtx1650 asyncEngineCount               1            unpublished  not on NVIDIA's page: 1, the conservative value
gtx1650 concurrentKernels              1            guide-cc
gtx1650 memoryPoolsSupported           1            guide-pool
gtx1650 ipcEventSupported              1            unpublished  Linux: the IPC API on every device of unified addressing; 1
gtx1650 peerAccess                     0            unpublished  a PC with one GPU has no peer: 0
)";
}  // namespace lab_profiles
