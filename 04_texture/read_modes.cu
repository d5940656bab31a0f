// read_modes - what a texture fetch returns for 8- and 16-bit integer texels read as normalized
//              floats, and for 16-bit floating-point (half) texels.
//
// Manual: G 3.2.12.1 纹理内存 (读取模式 / read mode: cudaReadModeNormalizedFloat), G 3.2.12.1.3 16位浮点类型纹理;
//         T "Using texture memory in CUDA" (读取模式: 返回[-1,1] (以签字), [0,1] 未签字).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o read_modes read_modes.cu
// Shows:  with cudaReadModeNormalizedFloat the texture unit converts 8/16-bit integers to float on the
//         fly: the unsigned range maps to [0.0, 1.0] (0xff -> 1.0, v -> v / 255), the signed range to
//         [-1.0, 1.0] (127 -> 1.0, v -> v / 127, and -128 -> -1.0 so that the result stays in range).
//         cudaReadModeElementType returns the integers unchanged. A half texture (channel descriptor
//         from cudaCreateChannelDescHalf) is promoted to 32-bit float on fetch, exactly. Every 8- and
//         16-bit value is tried (shuffled), plus random and special half values.
// Build:  make read_modes        Run: ./read_modes [--n=65536]
// Output: a table of sample conversions per format, the checks, PASSED.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>
#include <cuda_fp16.h>
#include "common.cuh"

template <class T>
__global__ void fetch_all(T* out, int n, cudaTextureObject_t tex) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<T>(tex, i);
}

// Fetches every element of `in` through a texture object on linear memory with the given read mode;
// Out is the type the fetch returns (float for normalized/half, the element type otherwise).
template <class In, class Out>
std::vector<Out> fetch(const std::vector<In>& in, cudaChannelFormatDesc ch, cudaTextureReadMode mode) {
    int n = (int)in.size();
    In* d_in;
    Out* d_out;
    CHECK(cudaMalloc(&d_in, n * sizeof(In)));
    CHECK(cudaMalloc(&d_out, n * sizeof(Out)));
    check_texture_alignment(d_in, "d_in");
    CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(In), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_out, 0xff, n * sizeof(Out)));  // NaN / all ones: an unwritten element fails
    cudaResourceDesc res;
    std::memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = d_in;
    res.res.linear.desc = ch;
    res.res.linear.sizeInBytes = n * sizeof(In);
    cudaTextureDesc td;
    std::memset(&td, 0, sizeof td);
    td.readMode = mode;  // the read mode applies to linear memory too (filter/address modes do not)
    cudaTextureObject_t tex = 0;
    CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));
    fetch_all<Out><<<(n + 255) / 256, 256>>>(d_out, n, tex);
    CHECK_LAUNCH();
    std::vector<Out> out(n);
    CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(Out), cudaMemcpyDeviceToHost));
    CHECK(cudaDestroyTextureObject(tex));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return out;
}

// Every value of an integer type, in a seeded random order (so an indexing error shows as a wrong value).
template <class T>
std::vector<T> all_values(uint32_t seed) {
    std::vector<T> v;
    for (long long x = std::numeric_limits<T>::min(); x <= std::numeric_limits<T>::max(); ++x) v.push_back((T)x);
    std::shuffle(v.begin(), v.end(), std::mt19937(seed));
    return v;
}

// CPU reference for cudaReadModeNormalizedFloat: v / (2^bits - 1) unsigned, v / (2^(bits-1) - 1)
// signed, clamped at -1 (the most negative value has no positive partner).
template <class T>
float normalized_cpu(T v) {
    double scale = std::numeric_limits<T>::max();
    return (float)std::max((double)v / scale, -1.0);
}

// One table row: the fetched value for a few chosen inputs.
template <class In, class Out>
void print_row(const char* fmt, const char* mode, const std::vector<In>& in, const std::vector<Out>& out,
               std::initializer_list<long long> show) {
    std::map<long long, Out> got;
    for (size_t i = 0; i < in.size(); ++i) got[(long long)in[i]] = out[i];
    std::string s;
    char buf[48];
    for (long long v : show) {
        std::snprintf(buf, sizeof buf, "  %lld -> %.6g", v, (double)got[v]);
        s += buf;
    }
    std::printf("%-7s %-16s%s\n", fmt, mode, s.c_str());
}

// Checks a normalized-float read: the documented end points exactly, every value within 1 ulp of the
// correctly rounded quotient (the unit may round the last bit of v / 255 its own way).
template <class T>
void check_normalized(Verdict& verdict, const char* name, const std::vector<T>& in, const std::vector<float>& out) {
    std::vector<float> ref(in.size()), end_ref, end_got;
    size_t bit_exact = 0;
    for (size_t i = 0; i < in.size(); ++i) {
        ref[i] = normalized_cpu(in[i]);
        bit_exact += ref[i] == out[i];
        if (ref[i] == 0.f || std::fabs(ref[i]) == 1.f) {  // 0, max; signed types also -max and min
            end_ref.push_back(ref[i]);
            end_got.push_back(out[i]);
        }
    }
    verdict.exact(std::string(name) + " end points (0, +-1)", end_ref.data(), end_got.data(), end_ref.size());
    verdict.close(std::string(name) + " all values, 1 ulp", ref.data(), out.data(), in.size(), 0.0, 1.2e-7);
    std::printf("      (%zu of %zu bit-identical to v / %.0f)\n", bit_exact, in.size(), (double)std::numeric_limits<T>::max());
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Shows texture read modes: 8/16-bit integers as normalized floats, half-float textures.");
    int n = (int)args.integer("n", 1 << 16, 1, 1 << 24, "number of random half values to fetch");
    args.parse_or_exit();

    select_device(args.device());
    Verdict verdict;
    std::printf("%-7s %-16s  value -> fetched\n", "texel", "read mode");

    // 8-bit unsigned, element type: the integers come back as they are.
    auto u8 = all_values<uint8_t>(1);
    auto u8_raw = fetch<uint8_t, uint8_t>(u8, cudaCreateChannelDesc<uint8_t>(), cudaReadModeElementType);
    print_row("uint8", "ElementType", u8, u8_raw, {0, 128, 255});
    verdict.exact("uint8 ElementType unchanged", u8.data(), u8_raw.data(), u8.size());

    auto u8_f = fetch<uint8_t, float>(u8, cudaCreateChannelDesc<uint8_t>(), cudaReadModeNormalizedFloat);
    print_row("uint8", "NormalizedFloat", u8, u8_f, {0, 128, 255});
    check_normalized(verdict, "uint8", u8, u8_f);

    auto s8 = all_values<int8_t>(2);
    auto s8_f = fetch<int8_t, float>(s8, cudaCreateChannelDesc<int8_t>(), cudaReadModeNormalizedFloat);
    print_row("int8", "NormalizedFloat", s8, s8_f, {-128, -127, 0, 127});
    check_normalized(verdict, "int8", s8, s8_f);

    auto u16 = all_values<uint16_t>(3);
    auto u16_f = fetch<uint16_t, float>(u16, cudaCreateChannelDesc<uint16_t>(), cudaReadModeNormalizedFloat);
    print_row("uint16", "NormalizedFloat", u16, u16_f, {0, 32768, 65535});
    check_normalized(verdict, "uint16", u16, u16_f);

    auto s16 = all_values<int16_t>(4);
    auto s16_f = fetch<int16_t, float>(s16, cudaCreateChannelDesc<int16_t>(), cudaReadModeNormalizedFloat);
    print_row("int16", "NormalizedFloat", s16, s16_f, {-32768, -32767, 0, 32767});
    check_normalized(verdict, "int16", s16, s16_f);

    // Half: random values plus the edges of the format. G 3.2.12.1.3 says the half <-> float intrinsics
    // are device-only; since CUDA 9 cuda_fp16.h provides them on the host too, so no OpenEXR is needed.
    std::vector<float> hv = random_vector<float>(n, -1000.f, 1000.f, 5);
    const float specials[] = {0.f, -0.f, 1.f, 65504.f, -65504.f, 5.9604645e-8f /* 2^-24 */, INFINITY, -INFINITY};
    for (int i = 0; i < 8 && i < n; ++i) hv[i] = specials[i];
    std::vector<uint16_t> h_bits(n);
    std::vector<float> h_ref(n);
    for (int i = 0; i < n; ++i) {
        __half h = __float2half_rn(hv[i]);
        std::memcpy(&h_bits[i], &h, 2);
        h_ref[i] = __half2float(h);  // promotion half -> float is exact
    }
    auto h_f = fetch<uint16_t, float>(h_bits, cudaCreateChannelDescHalf(), cudaReadModeElementType);
    std::printf("%-7s %-16s  65504 -> %g  2^-24 -> %.6g  inf -> %g  (first %d values are these specials)\n", "half",
                "ElementType", h_f[std::min(3, n - 1)], h_f[std::min(5, n - 1)], h_f[std::min(6, n - 1)], std::min(n, 8));
    verdict.exact("half promoted to float exactly", h_ref.data(), h_f.data(), n);

    return verdict.finish();
}
