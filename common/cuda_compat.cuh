// cuda_compat.cuh - the runtime calls whose signature or existence differs between CUDA 12.x and
// 13.x, one small wrapper each, switched on CUDART_VERSION (12020 = 12.2, 13000 = 13.0).
//
// The programs call these wrappers, not the runtime functions, so that one source builds with every
// toolkit the README promises; each program's opening comment and its chapter README still show
// the manual's form and both current forms. `make test-toolkits` (tools/toolkit_check.py) compiles
// the whole tree against the oldest and newest 12.x runtime headers and the newest 13.x: a call
// added in its CUDA 13 form outside this header fails it.
//
// What differs (from the runtime headers, cuda_runtime_api.h of each version):
//   graph edges      13.0: cudaGraphAddDependencies / cudaGraphGetEdges take a cudaGraphEdgeData*
//                    argument. 12.3-12.9: that form is named ..._v2, the plain names have no edge
//                    data. 12.0-12.2: no edge data at all (only the plain form).
//   prefetch/advise  13.0: cudaMemPrefetchAsync(ptr, bytes, cudaMemLocation, flags, stream) and
//                    cudaMemAdvise(ptr, bytes, advice, cudaMemLocation). 12.2-12.9: those are
//                    cudaMemPrefetchAsync_v2 / cudaMemAdvise_v2 (cuda_runtime.h also maps the
//                    C++ overloads to them); the plain names take an int device (cudaCpuDeviceId
//                    for the host). 12.0-12.1: only the int-device forms, and cudaMemLocationType
//                    has no Host value, so only a device location can be passed there.
//   range attributes cudaMemRangeGetAttribute is the same everywhere; the attribute
//                    cudaMemRangeAttributePreferredLocationType (used by um_advise) exists from
//                    12.2; CUDA 13 keeps the older cudaMemRangeAttributePreferredLocation too.
//   library API      cudaLibrary_t, cudaLibraryLoadData, cudaLibraryGetKernel, cudaLibraryUnload
//                    and launching a cudaKernel_t with cudaLaunchKernel: runtime API from 12.8.
//                    Before that the same is done with the driver API's module calls
//                    (cuModuleLoadData, cuModuleGetFunction, cuLaunchKernel), reached through
//                    cudaGetDriverEntryPoint so that the program is still not linked to libcuda.so
//                    (a program linked to it does not start on a machine without the driver).
#pragma once
#include <cuda_runtime.h>
#if CUDART_VERSION < 12080 || defined(CUDA_LAB_DRIVER_API_ROUTE)
#include <cuda.h>  // types and prototypes only (CUmodule, CUfunction, CUresult); no -lcuda
#endif

namespace compat {

// ---- graph edges ------------------------------------------------------------------------------

// Adds n plain edges from[i] -> to[i] (no edge data: full dependencies, as in CUDA 12.2 and older).
inline cudaError_t graph_add_dependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                          size_t n) {
#if CUDART_VERSION >= 13000
    return cudaGraphAddDependencies(g, from, to, nullptr, n);  // null edge data: plain edges
#else
    return cudaGraphAddDependencies(g, from, to, n);  // 12.x: the plain form has no edge data
#endif
}

// The edges of g: with from / to null only *n is written (the count); else up to *n edges.
inline cudaError_t graph_get_edges(cudaGraph_t g, cudaGraphNode_t* from, cudaGraphNode_t* to, size_t* n) {
#if CUDART_VERSION >= 13000
    return cudaGraphGetEdges(g, from, to, nullptr, n);  // null edge data: not asked for
#else
    return cudaGraphGetEdges(g, from, to, n);
#endif
}

// ---- unified memory: prefetch and advise with a cudaMemLocation --------------------------------

inline cudaMemLocation device_location(int device) {
    cudaMemLocation loc{};
    loc.type = cudaMemLocationTypeDevice;
    loc.id = device;
    return loc;
}

#if CUDART_VERSION >= 12020
inline cudaMemLocation host_location() {  // cudaMemLocationTypeHost: 12.2 and newer
    cudaMemLocation loc{};
    loc.type = cudaMemLocationTypeHost;  // id is ignored
    loc.id = 0;
    return loc;
}
#endif

#if CUDART_VERSION < 12020
// 12.0-12.1: the int-device forms; a cudaMemLocation there can only name a device.
inline int location_to_device(cudaMemLocation loc) {
    return loc.type == cudaMemLocationTypeDevice ? loc.id : cudaInvalidDeviceId;
}
#endif

inline cudaError_t mem_prefetch_async(const void* ptr, size_t bytes, cudaMemLocation loc, cudaStream_t stream = 0) {
#if CUDART_VERSION >= 13000
    return cudaMemPrefetchAsync(ptr, bytes, loc, 0, stream);  // flags: 0 (none defined yet)
#elif CUDART_VERSION >= 12020
    return cudaMemPrefetchAsync_v2(ptr, bytes, loc, 0, stream);
#else
    return cudaMemPrefetchAsync(ptr, bytes, location_to_device(loc), stream);
#endif
}

inline cudaError_t mem_advise(const void* ptr, size_t bytes, cudaMemoryAdvise advice, cudaMemLocation loc) {
#if CUDART_VERSION >= 13000
    return cudaMemAdvise(ptr, bytes, advice, loc);
#elif CUDART_VERSION >= 12020
    return cudaMemAdvise_v2(ptr, bytes, advice, loc);
#else
    return cudaMemAdvise(ptr, bytes, advice, location_to_device(loc));
#endif
}

// ---- loading device code at run time (cubin or PTX bytes) and launching a kernel from it -------

// CUDA_LAB_DRIVER_API_ROUTE (a -D flag) takes the pre-12.8 route on any toolkit: it is how that
// route is run on a GPU machine whose toolkit is newer (tools/gpu_check.sh builds nvrtc_saxpy so).
#if CUDART_VERSION >= 12080 && !defined(CUDA_LAB_DRIVER_API_ROUTE)
// 12.8 and newer: the runtime's library API; cudaLaunchKernel accepts the cudaKernel_t.
struct LoadedKernel {
    cudaLibrary_t library = nullptr;
    cudaKernel_t kernel = nullptr;
};

inline cudaError_t load_kernel(LoadedKernel* k, const void* image, const char* name) {
    cudaError_t e = cudaLibraryLoadData(&k->library, image, nullptr, nullptr, 0, nullptr, nullptr, 0);
    return e != cudaSuccess ? e : cudaLibraryGetKernel(&k->kernel, k->library, name);
}

inline cudaError_t launch_loaded(const LoadedKernel& k, dim3 grid, dim3 block, void** args, size_t smem = 0,
                                 cudaStream_t stream = 0) {
    return cudaLaunchKernel((const void*)k.kernel, grid, block, args, smem, stream);
}

inline cudaError_t unload_kernel(LoadedKernel& k) { return cudaLibraryUnload(k.library); }
#else
// Before 12.8: the driver API's module calls. Their addresses come from the runtime
// (cudaGetDriverEntryPoint, CUDA 11.3+), which found the driver when it started, so nothing
// links -lcuda. They act on the current context: the runtime's primary context, current once
// any runtime call has touched the device (the caller has allocated memory before loading).
struct LoadedKernel {
    CUmodule module = nullptr;
    CUfunction function = nullptr;
};

template <class Fn>
inline cudaError_t driver_entry(const char* symbol, Fn** fn) {
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050  // cudaGetDriverEntryPoint is deprecated from 12.5 on: ask for this toolkit's ABI
    cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, reinterpret_cast<void**>(fn), CUDART_VERSION,
                                                     cudaEnableDefault, &found);
#else
    cudaError_t e = cudaGetDriverEntryPoint(symbol, reinterpret_cast<void**>(fn), cudaEnableDefault, &found);
#endif
    return e != cudaSuccess ? e : found == cudaDriverEntryPointSuccess ? cudaSuccess : cudaErrorSymbolNotFound;
}

// CUresult and cudaError_t share the numbers of the errors these calls return (e.g. 200 invalid
// image, 218 invalid PTX, 500 not found), so a CUresult is passed on as the same cudaError_t.
inline cudaError_t from_driver(CUresult r) { return static_cast<cudaError_t>(r); }

inline cudaError_t load_kernel(LoadedKernel* k, const void* image, const char* name) {
    decltype(&cuModuleLoadData) load = nullptr;
    decltype(&cuModuleGetFunction) get = nullptr;
    cudaError_t e = driver_entry("cuModuleLoadData", &load);
    if (e == cudaSuccess) e = driver_entry("cuModuleGetFunction", &get);
    if (e == cudaSuccess) e = from_driver(load(&k->module, image));
    return e != cudaSuccess ? e : from_driver(get(&k->function, k->module, name));
}

inline cudaError_t launch_loaded(const LoadedKernel& k, dim3 grid, dim3 block, void** args, size_t smem = 0,
                                 cudaStream_t stream = 0) {
    decltype(&cuLaunchKernel) launch = nullptr;
    cudaError_t e = driver_entry("cuLaunchKernel", &launch);
    if (e != cudaSuccess) return e;
    // cudaStream_t and CUstream are the same handle type.
    return from_driver(launch(k.function, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned)smem,
                              reinterpret_cast<CUstream>(stream), args, nullptr));
}

inline cudaError_t unload_kernel(LoadedKernel& k) {
    decltype(&cuModuleUnload) unload = nullptr;
    cudaError_t e = driver_entry("cuModuleUnload", &unload);
    return e != cudaSuccess ? e : from_driver(unload(k.module));
}
#endif

}  // namespace compat
