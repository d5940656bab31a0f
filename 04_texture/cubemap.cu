// cubemap - cubemap and layered cubemap textures and surfaces, and the guide's face-selection table.
//
// Manual: G 3.2.12.1.5 立方体纹理(Cubemap Textures), G 3.2.12.1.6 分层的立方体纹理内存(Cubemap Layered
//         Textures), G 3.2.12.2.3 立方体表面内存, G 3.2.12.2.4 立方体分层表面内存.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o cubemap cubemap.cu
// Shows:  a cubemap is a CUDA array of 6 square layers (cudaMalloc3DArray with cudaArrayCubemap) that
//         texCubemap(tex, x, y, z) addresses with a DIRECTION: the coordinate of largest magnitude m
//         picks the face, and (s/m + 1)/2, (t/m + 1)/2 pick the texel, with s, t from the guide's table
//         (implemented on the CPU below). Every texel holds a code of (cubemap, face, column, row), so
//         one fetch tells which face and texel the hardware chose. Surfaces see the same array as
//         layers: surfCubemapwrite/read take the face index, surfCubemapLayeredwrite/read take
//         layer * 6 + face (the guide's example: index 2 * 6 + 3 is the 4th face of the 3rd cubemap).
// Build:  make cubemap     Run: ./cubemap [--size=64] [--layers=4] [--n=2^20]
// Output: one sample direction per face with the face/texel the guide's table assigns to it (the
//         checks compare the GPU's fetch with that for every direction), the counts checked, PASSED.
#include <algorithm>
#include <cmath>
#include <vector>
#include "common.cuh"

// Texel code: cubemap index (layer) * 6 + face in the high bits, then row j and column i (size <= 2048).
__host__ __device__ inline unsigned code(int layer, int face, int i, int j) {
    return ((unsigned)(layer * 6 + face) << 22) | ((unsigned)j << 11) | (unsigned)i;
}

// CPU reference: the guide's table (G 3.2.12.1.5). Returns false when the direction lies so close to
// a face edge or a texel boundary that float rounding in the hardware may legitimately go either way.
bool cube_lookup_cpu(double x, double y, double z, int size, int* face, int* i, int* j) {
    double ax = std::fabs(x), ay = std::fabs(y), az = std::fabs(z), m, s, t;
    if (ax > ay && ax > az) {
        if (x > 0) *face = 0, m = x, s = -z, t = -y;
        else       *face = 1, m = -x, s = z, t = -y;
    } else if (ay > ax && ay > az) {
        if (y > 0) *face = 2, m = y, s = x, t = z;
        else       *face = 3, m = -y, s = x, t = -z;
    } else {
        if (z > 0) *face = 4, m = z, s = x, t = -y;
        else       *face = 5, m = -z, s = -x, t = -y;
    }
    double sorted[3] = {ax, ay, az};
    std::sort(sorted, sorted + 3);  // sorted[2] == m, sorted[1] == the runner-up
    double second = sorted[1];
    double u = (s / m + 1) / 2 * size, v = (t / m + 1) / 2 * size;  // texel units, normalized * size
    *i = std::min(std::max((int)std::floor(u), 0), size - 1);
    *j = std::min(std::max((int)std::floor(v), 0), size - 1);
    const double margin = 1e-2;  // texels
    bool near_edge = m - second < 1e-4 * m;
    bool near_boundary = std::fabs(u - std::round(u)) < margin || std::fabs(v - std::round(v)) < margin;
    return !near_edge && !near_boundary;
}

// Fills a cubemap through its surface: face = layer of the array, x in BYTES (column * 4).
__global__ void fill_cubemap_surface(cudaSurfaceObject_t surf, int size) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y, face = blockIdx.z;
    if (i < size && j < size) surfCubemapwrite(code(0, face, i, j), surf, i * 4, j, face);
}

// Reads every texel back through the surface of a cubemap (layerfaces == 6) or a layered cubemap
// (index layer * 6 + face).
__global__ void read_cubemap_surface(cudaSurfaceObject_t surf, int size, bool layered, unsigned* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y, lf = blockIdx.z;
    if (i >= size || j >= size) return;
    unsigned v = layered ? surfCubemapLayeredread<unsigned>(surf, i * 4, j, lf) : surfCubemapread<unsigned>(surf, i * 4, j, lf);
    out[((size_t)lf * size + j) * size + i] = v;
}

// One texCubemap / texCubemapLayered fetch per direction.
__global__ void fetch_cubemap(cudaTextureObject_t tex, const float3* dirs, const int* layers, unsigned* out, int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    float3 d = dirs[k];
    out[k] = layers ? texCubemapLayered<unsigned>(tex, d.x, d.y, d.z, layers[k]) : texCubemap<unsigned>(tex, d.x, d.y, d.z);
}

cudaTextureObject_t make_cube_texture(cudaArray_t arr) {
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td{};
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;  // integer texels: the fetched code must be one texel, unfiltered
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 1;  // the face coordinates (s/m+1)/2 are normalized by construction
    cudaTextureObject_t tex;
    CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));
    return tex;
}

// Fetches `dirs` (and `layers` if not empty) on the GPU and compares with the CPU table; returns the
// number of directions checked (the others lie on a face edge or texel boundary).
int check_directions(Verdict& verdict, const char* what, cudaTextureObject_t tex, const std::vector<float3>& dirs,
                     const std::vector<int>& layers, int size) {
    int n = (int)dirs.size();
    float3* d_dirs;
    int* d_layers = nullptr;
    unsigned* d_out;
    CHECK(cudaMalloc(&d_dirs, n * sizeof(float3)));
    CHECK(cudaMalloc(&d_out, n * sizeof(unsigned)));
    CHECK(cudaMemcpy(d_dirs, dirs.data(), n * sizeof(float3), cudaMemcpyHostToDevice));
    if (!layers.empty()) {
        CHECK(cudaMalloc(&d_layers, n * sizeof(int)));
        CHECK(cudaMemcpy(d_layers, layers.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    }
    CHECK(cudaMemset(d_out, 0xff, n * sizeof(unsigned)));  // not a valid code
    fetch_cubemap<<<(n + 255) / 256, 256>>>(tex, d_dirs, d_layers, d_out, n);
    CHECK_LAUNCH();
    std::vector<unsigned> got(n), exp, sel;
    CHECK(cudaMemcpy(got.data(), d_out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (int k = 0; k < n; ++k) {
        int face, i, j;
        if (!cube_lookup_cpu(dirs[k].x, dirs[k].y, dirs[k].z, size, &face, &i, &j)) continue;
        exp.push_back(code(layers.empty() ? 0 : layers[k], face, i, j));
        sel.push_back(got[k]);
    }
    verdict.exact(what, exp.data(), sel.data(), exp.size());
    CHECK(cudaFree(d_dirs));
    CHECK(cudaFree(d_out));
    if (d_layers) CHECK(cudaFree(d_layers));
    return (int)exp.size();
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Cubemap and layered cubemap textures/surfaces; face selection vs the guide's table.");
    int size = (int)args.integer("size", 64, 1, 2048, "face width = height in texels");
    int layers = (int)args.integer("layers", 4, 1, 64, "cubemaps in the layered cubemap");
    int n = (int)args.integer("n", 1 << 20, 1, 1 << 26, "random directions per texture");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    if (size > dev.prop.maxTextureCubemap || size > dev.prop.maxTextureCubemapLayered[0] ||
        6 * layers > dev.prop.maxTextureCubemapLayered[1])
        skip("cubemap larger than this GPU's maxTextureCubemap(Layered)");
    std::printf("cubemap %d x %d x 6 faces; layered cubemap of %d cubemaps; %d random directions each\n", size, size,
                layers, n);
    Verdict verdict;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<unsigned>();
    size_t face_texels = (size_t)size * size;
    dim3 block(16, 16), grid((size + 15) / 16, (size + 15) / 16, 6);

    // 1. Cubemap: written through surfCubemapwrite, copied back as 6 plain layers (face order = layer
    //    order), read back through surfCubemapread, then fetched by direction with texCubemap.
    cudaArray_t cube;
    CHECK(cudaMalloc3DArray(&cube, &desc, make_cudaExtent(size, size, 6), cudaArrayCubemap | cudaArraySurfaceLoadStore));
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = cube;
    cudaSurfaceObject_t cube_surf;
    CHECK(cudaCreateSurfaceObject(&cube_surf, &res));
    fill_cubemap_surface<<<grid, block>>>(cube_surf, size);
    CHECK_LAUNCH();

    std::vector<unsigned> expect(6 * face_texels), host(6 * face_texels, 0xffffffffu);
    for (int f = 0; f < 6; ++f)
        for (int j = 0; j < size; ++j)
            for (int i = 0; i < size; ++i) expect[(f * face_texels) + (size_t)j * size + i] = code(0, f, i, j);
    cudaMemcpy3DParms cp{};
    cp.srcArray = cube;
    cp.dstPtr = make_cudaPitchedPtr(host.data(), size * sizeof(unsigned), size, size);
    cp.extent = make_cudaExtent(size, size, 6);
    cp.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&cp));
    verdict.exact("surfCubemapwrite -> memcpy3D layers", expect.data(), host.data(), expect.size());

    unsigned* d_all;
    CHECK(cudaMalloc(&d_all, 6 * layers * face_texels * sizeof(unsigned)));
    CHECK(cudaMemset(d_all, 0xff, 6 * layers * face_texels * sizeof(unsigned)));
    read_cubemap_surface<<<grid, block>>>(cube_surf, size, false, d_all);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(host.data(), d_all, 6 * face_texels * sizeof(unsigned), cudaMemcpyDeviceToHost));
    verdict.exact("surfCubemapread", expect.data(), host.data(), expect.size());

    // Directions through the centre of every texel of every face: the table inverted (m = 1).
    cudaTextureObject_t cube_tex = make_cube_texture(cube);
    std::vector<float3> centers;
    for (int f = 0; f < 6; ++f)
        for (int j = 0; j < size; ++j)
            for (int i = 0; i < size; ++i) {
                float s = 2.f * (i + 0.5f) / size - 1.f, t = 2.f * (j + 0.5f) / size - 1.f;
                const float3 d[6] = {{1, -t, -s}, {-1, -t, s}, {s, 1, t}, {s, -1, -t}, {s, -t, 1}, {-s, -t, -1}};
                centers.push_back(d[f]);
            }
    int nc = check_directions(verdict, "texCubemap, every texel centre", cube_tex, centers, {}, size);
    std::printf("  face  direction (x, y, z)        -> texel (i, j) of face, per the table\n");
    for (int f = 0; f < 6; ++f) {
        float3 d = centers[f * face_texels + (size_t)(size / 3) * size + size / 5];
        int face, i, j;
        cube_lookup_cpu(d.x, d.y, d.z, size, &face, &i, &j);
        std::printf("  %d     (%6.3f, %6.3f, %6.3f)  -> face %d texel (%d, %d)\n", f, d.x, d.y, d.z, face, i, j);
    }

    // Random directions (uniform in a cube, so each face is equally likely).
    std::vector<float> r = random_vector<float>(3 * (size_t)n, -1.f, 1.f, 11);
    std::vector<float3> dirs(n);
    for (int k = 0; k < n; ++k) dirs[k] = make_float3(r[3 * k], r[3 * k + 1], r[3 * k + 2]);
    int nr = check_directions(verdict, "texCubemap, random directions", cube_tex, dirs, {}, size);
    std::printf("  checked %d texel centres and %d of %d random directions (the rest lie within 1e-2\n"
                "  texel of a texel boundary or face edge, where float rounding may go either way)\n",
                nc, nr, n);

    // 2. Layered cubemap: depth = 6 * layers, filled from the host as plain layers, read through
    //    surfCubemapLayeredread (index layer * 6 + face), fetched with texCubemapLayered.
    cudaArray_t lcube;
    CHECK(cudaMalloc3DArray(&lcube, &desc, make_cudaExtent(size, size, 6 * layers),
                            cudaArrayCubemap | cudaArrayLayered | cudaArraySurfaceLoadStore));
    std::vector<unsigned> lexpect(6 * layers * face_texels), lhost(lexpect.size(), 0xffffffffu);
    for (int l = 0; l < layers; ++l)
        for (int f = 0; f < 6; ++f)
            for (int j = 0; j < size; ++j)
                for (int i = 0; i < size; ++i) lexpect[((size_t)(l * 6 + f) * size + j) * size + i] = code(l, f, i, j);
    cudaMemcpy3DParms lp{};
    lp.srcPtr = make_cudaPitchedPtr(lexpect.data(), size * sizeof(unsigned), size, size);
    lp.dstArray = lcube;
    lp.extent = make_cudaExtent(size, size, 6 * layers);
    lp.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&lp));
    res.res.array.array = lcube;
    cudaSurfaceObject_t lcube_surf;
    CHECK(cudaCreateSurfaceObject(&lcube_surf, &res));
    read_cubemap_surface<<<dim3(grid.x, grid.y, 6 * layers), block>>>(lcube_surf, size, true, d_all);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(lhost.data(), d_all, lhost.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    verdict.exact("surfCubemapLayeredread", lexpect.data(), lhost.data(), lexpect.size());
    if (layers >= 3) {  // the guide's example index
        unsigned v = lhost[(size_t)(2 * 6 + 3) * face_texels];
        std::printf("  layerface index 2*6+3 = 15 holds cubemap %u, face %u\n", (v >> 22) / 6, (v >> 22) % 6);
        verdict.check((v >> 22) / 6 == 2 && (v >> 22) % 6 == 3, "index 2*6+3 = cubemap 2, face 3");
    }

    cudaTextureObject_t lcube_tex = make_cube_texture(lcube);
    std::vector<int> which = random_vector<int>(n, 0, layers - 1, 12);
    int nl = check_directions(verdict, "texCubemapLayered, random", lcube_tex, dirs, which, size);
    std::printf("  checked %d of %d random (direction, cubemap) pairs\n", nl, n);

    CHECK(cudaDestroyTextureObject(cube_tex));
    CHECK(cudaDestroyTextureObject(lcube_tex));
    CHECK(cudaDestroySurfaceObject(cube_surf));
    CHECK(cudaDestroySurfaceObject(lcube_surf));
    CHECK(cudaFreeArray(cube));
    CHECK(cudaFreeArray(lcube));
    CHECK(cudaFree(d_all));
    return verdict.finish();
}
