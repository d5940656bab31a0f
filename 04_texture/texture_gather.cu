// texture_gather - tex2Dgather: one component of the four texels that bilinear filtering would use.
//
// Manual: G 3.2.12.1.7 纹理收集(Texture Gather).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o texture_gather texture_gather.cu
// Shows:  tex2Dgather(tex, x, y, comp) has tex2D's arguments plus comp = 0..3 and returns component
//         comp of the 2x2 bilinear footprint, in the order x = T[i0,j1], y = T[i1,j1], z = T[i1,j0],
//         w = T[i0,j0] (counter-clockwise from the lower left, as in Direct3D/OpenGL gather).
//         1) The guide's example: texels (253,20,31,255) (250,25,29,254) (249,16,37,253)
//            (251,22,30,250) gathered with comp = 2 give (31,29,37,30).
//         2) The guide's rounding case: the footprint is chosen from x - 0.5 with only 8 fractional
//            bits, so at x = 2.49805 (x - 0.5 = 1.99805, closer to 2 than to 1 + 255/256) gather
//            returns columns 2 and 3, not 1 and 2. Component 0 of each texel holds its column, so
//            the returned values ARE the column indices.
//         3) Many random coordinates, every comp, against a CPU model of that rounding.
// Build:  make texture_gather    Run: ./texture_gather [--width=64] [--height=48] [--n=2^20]
// Output: the example's four gathers, the rounding case next to x = 2.49, the sweep's checks, PASSED.
#include <cmath>
#include <vector>
#include "common.cuh"

// CPU model of the footprint: x - 0.5 rounded to 1/256 texel (8-bit fraction), then floor.
// Returns false for an exact tie (fraction exactly 1/512), whose rounding the guide does not specify.
bool footprint_cpu(float c, int n, int* i0, int* i1) {
    double k = ((double)c - 0.5) * 256.0;  // exact: float times a power of two
    if (k - std::floor(k) == 0.5) return false;
    long long q = (long long)std::floor(k + 0.5);                      // rounded to 1/256
    long long i = q >= 0 ? q / 256 : -((-q + 255) / 256);             // floor(q / 256)
    *i0 = (int)std::min<long long>(std::max<long long>(i, 0), n - 1);  // clamp addressing
    *i1 = (int)std::min<long long>(std::max<long long>(i + 1, 0), n - 1);
    return true;
}

uchar4 gather_cpu(const std::vector<uchar4>& t, int w, int i0, int i1, int j0, int j1, int comp) {
    auto c = [&](int i, int j) { const uchar4& v = t[(size_t)j * w + i]; return comp == 0 ? v.x : comp == 1 ? v.y : comp == 2 ? v.z : v.w; };
    return make_uchar4(c(i0, j1), c(i1, j1), c(i1, j0), c(i0, j0));
}

// comp is part of the instruction (tld4.r/g/b/a), so it is a template parameter.
template <int COMP>
__global__ void gather(cudaTextureObject_t tex, const float* xs, const float* ys, uchar4* out, int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) out[k] = tex2Dgather<uchar4>(tex, xs[k], ys[k], COMP);
}

// Runs the gather for one comp on the host-given coordinates; returns the results.
std::vector<uchar4> run_gather(int comp, cudaTextureObject_t tex, const std::vector<float>& xs, const std::vector<float>& ys) {
    int n = (int)xs.size();
    float *d_x, *d_y;
    uchar4* d_out;
    CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CHECK(cudaMalloc(&d_y, n * sizeof(float)));
    CHECK(cudaMalloc(&d_out, n * sizeof(uchar4)));
    CHECK(cudaMemcpy(d_x, xs.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_y, ys.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_out, 0xee, n * sizeof(uchar4)));
    dim3 g((n + 255) / 256), b(256);
    if (comp == 0) gather<0><<<g, b>>>(tex, d_x, d_y, d_out, n);
    if (comp == 1) gather<1><<<g, b>>>(tex, d_x, d_y, d_out, n);
    if (comp == 2) gather<2><<<g, b>>>(tex, d_x, d_y, d_out, n);
    if (comp == 3) gather<3><<<g, b>>>(tex, d_x, d_y, d_out, n);
    CHECK_LAUNCH();
    std::vector<uchar4> out(n);
    CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(uchar4), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_y));
    CHECK(cudaFree(d_out));
    return out;
}

bool same(uchar4 a, uchar4 b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }

int main(int argc, char** argv) {
    Args args(argc, argv, "tex2Dgather: the guide's example, its 8-bit rounding case, and a random sweep.");
    int w = (int)args.integer("width", 64, 8, 4096, "texture width (>= 8)");
    int h = (int)args.integer("height", 48, 8, 4096, "texture height (>= 8)");
    int n = (int)args.integer("n", 1 << 20, 1, 1 << 24, "random coordinates in the sweep");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    if (w > dev.prop.maxTexture2DGather[0] || h > dev.prop.maxTexture2DGather[1])
        skip("texture larger than this GPU's maxTexture2DGather");
    std::printf("uchar4 texture %d x %d, texel (i, j) = (i mod 256, j mod 256, random, random)\n", w, h);

    // Texel (i, j): column and row in components 0 and 1, random bytes in 2 and 3.
    std::vector<unsigned char> rnd = random_vector<unsigned char>(2 * (size_t)w * h, 0, 255, 5);
    std::vector<uchar4> t((size_t)w * h);
    for (int j = 0; j < h; ++j)
        for (int i = 0; i < w; ++i) {
            size_t k = (size_t)j * w + i;
            t[k] = make_uchar4(i & 255, j & 255, rnd[2 * k], rnd[2 * k + 1]);
        }
    // The guide's four texels, placed as the footprint of (5.0, 3.0): i0 = 4, i1 = 5, j0 = 2, j1 = 3.
    t[3 * w + 4] = make_uchar4(253, 20, 31, 255);  // x: (i0, j1)
    t[3 * w + 5] = make_uchar4(250, 25, 29, 254);  // y: (i1, j1)
    t[2 * w + 5] = make_uchar4(249, 16, 37, 253);  // z: (i1, j0)
    t[2 * w + 4] = make_uchar4(251, 22, 30, 250);  // w: (i0, j0)

    // Gather needs an array made with cudaArrayTextureGather (its size limit is below tex2D's).
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<uchar4>();
    cudaArray_t arr;
    CHECK(cudaMallocArray(&arr, &desc, w, h, cudaArrayTextureGather));
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, t.data(), w * sizeof(uchar4), w * sizeof(uchar4), h, cudaMemcpyHostToDevice));
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td{};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;  // gather returns raw texels; integer texels cannot be filtered
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    cudaTextureObject_t tex;
    CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));
    Verdict verdict;

    // 1) The guide's example: the same coordinate with comp = 0..3.
    const uchar4 want[4] = {{253, 250, 249, 251}, {20, 25, 16, 22}, {31, 29, 37, 30}, {255, 254, 253, 250}};
    for (int comp = 0; comp < 4; ++comp) {
        uchar4 g = run_gather(comp, tex, {5.0f}, {3.0f})[0];
        std::printf("tex2Dgather(5.0, 3.0, comp=%d) = (%3d, %3d, %3d, %3d)%s\n", comp, g.x, g.y, g.z, g.w,
                    comp == 2 ? "   <- guide: (31, 29, 37, 30)" : "");
        verdict.check(same(g, want[comp]), "guide example, comp " + std::to_string(comp));
    }

    // 2) The rounding case. Component 0 holds the column index, so the result shows the columns used.
    std::vector<uchar4> r = run_gather(0, tex, {2.49805f, 2.49f}, {1.0f, 1.0f});
    std::printf("x = %.5f: columns (%d, %d, %d, %d)  x - 0.5 = 1.99805 rounds to 2 -> columns 2, 3 (guide)\n",
                2.49805f, r[0].x, r[0].y, r[0].z, r[0].w);
    std::printf("x = %.5f: columns (%d, %d, %d, %d)  x - 0.5 = 1.99 -> columns 1, 2\n", 2.49f, r[1].x, r[1].y,
                r[1].z, r[1].w);
    verdict.check(same(r[0], make_uchar4(2, 3, 3, 2)), "x = 2.49805 uses columns 2 and 3");
    verdict.check(same(r[1], make_uchar4(1, 2, 2, 1)), "x = 2.49 uses columns 1 and 2");

    // 3) Sweep: random coordinates 1 texel beyond each edge, all comps, vs the CPU rounding model.
    std::vector<float> xs = random_vector<float>(n, -1.f, w + 1.f, 6), ys = random_vector<float>(n, -1.f, h + 1.f, 7);
    std::vector<int> fp(4 * (size_t)n);
    std::vector<char> ok(n);
    long long ties = 0, rounded_up = 0;
    for (int k = 0; k < n; ++k) {
        ok[k] = footprint_cpu(xs[k], w, &fp[4 * k], &fp[4 * k + 1]) && footprint_cpu(ys[k], h, &fp[4 * k + 2], &fp[4 * k + 3]);
        ties += !ok[k];
        int naive = (int)std::floor(xs[k] - 0.5);  // footprint without the 8-bit rounding
        if (ok[k] && naive >= 0 && naive + 1 < w && naive != fp[4 * k]) ++rounded_up;
    }
    for (int comp = 0; comp < 4; ++comp) {
        std::vector<uchar4> got = run_gather(comp, tex, xs, ys);
        std::vector<unsigned char> e, g;
        for (int k = 0; k < n; ++k) {
            if (!ok[k]) continue;
            uchar4 c = gather_cpu(t, w, fp[4 * k], fp[4 * k + 1], fp[4 * k + 2], fp[4 * k + 3], comp);
            e.insert(e.end(), {c.x, c.y, c.z, c.w});
            g.insert(g.end(), {got[k].x, got[k].y, got[k].z, got[k].w});
        }
        verdict.exact("sweep, comp " + std::to_string(comp), e.data(), g.data(), e.size());
    }
    std::printf("sweep: %d coordinates (%lld exact ties not checked); %lld of them in the last 1/512 texel\n"
                "       before a texel centre, where rounding moves the footprint one column right\n",
                n, ties, rounded_up);

    CHECK(cudaDestroyTextureObject(tex));
    CHECK(cudaFreeArray(arr));
    return verdict.finish();
}
