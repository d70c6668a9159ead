// Nova builtin generator: device helpers shared by every generated kernel. Device code only (no
// torch headers), so candidates compile with NVRTC in well under a second. The generator inlines
// this file into the torch-extension form it writes for delivery.
#pragma once

#ifndef __CUDACC_RTC__
#include <cuda_runtime.h>
#endif
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef INFINITY  // NVRTC has no <math.h>
#define INFINITY __int_as_float(0x7f800000)
#endif

namespace nova {

// ---- conversions between storage types and the float the math runs in ----
__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T>
__device__ __forceinline__ T from_f(float v);
template <>
__device__ __forceinline__ float from_f<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_f<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// ---- activations, written as PyTorch defines them (fp32 math) ----
// The logistic family (sigmoid, SiLU, tanh-GELU) uses __expf and __fdividef: the exponential and
// division approximations torch.compile's Triton kernels use, within a few ulp. The exact expf and
// IEEE division cost about 25 instructions an element: on the H200 swish_bias_clamp took 70.6 us
// with them and 68.9 us with these (docs/perf-notes.md, "pointwise v3"), its largest error against
// eager 4.8e-7. Large |x| is safe: __fdividef(a, inf) is 0, the limit.
__device__ __forceinline__ float sigmoidf_(float x) { return __fdividef(1.0f, 1.0f + __expf(-x)); }
__device__ __forceinline__ float siluf_(float x) { return __fdividef(x, 1.0f + __expf(-x)); }
__device__ __forceinline__ float gelu_erf(float x) {
  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}
// 0.5 * x * (1 + tanh(u)) is x * sigmoid(2u): one exponential and one division, and no
// cancellation in 1 + tanh(u) for negative x.
__device__ __forceinline__ float gelu_tanh(float x) {
  const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);  // sqrt(2/pi) * (...)
  return __fdividef(x, 1.0f + __expf(-2.0f * u));
}
__device__ __forceinline__ float softplusf_(float x, float beta, float threshold) {
  return (x * beta > threshold) ? x : log1pf(expf(x * beta)) / beta;
}
__device__ __forceinline__ float mishf_(float x) { return x * tanhf(softplusf_(x, 1.0f, 20.0f)); }
// SELU with PyTorch's constants: scale * (x > 0 ? x : alpha * (exp(x) - 1)).
__device__ __forceinline__ float seluf_(float x) {
  return 1.05070098735548049342f * (x > 0.0f ? x : 1.67326324235437728482f * expm1f(x));
}
__device__ __forceinline__ float hardswishf_(float x) {
  return x * fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f;
}
__device__ __forceinline__ float hardsigmoidf_(float x) { return fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f; }
__device__ __forceinline__ float hardtanhf_(float x, float lo, float hi) { return fminf(fmaxf(x, lo), hi); }
__device__ __forceinline__ float leaky_reluf_(float x, float slope) { return x > 0.0f ? x : x * slope; }
__device__ __forceinline__ float reluf_(float x) { return x > 0.0f ? x : 0.0f; }
// torch.minimum / maximum propagate NaN: one min.NaN / max.NaN instruction from sm_80 on.
__device__ __forceinline__ float minimumf_(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return (a != a || b != b) ? __int_as_float(0x7fc00000) : fminf(a, b);
#endif
}
__device__ __forceinline__ float maximumf_(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return (a != a || b != b) ? __int_as_float(0x7fc00000) : fmaxf(a, b);
#endif
}
__device__ __forceinline__ float clampf_(float x, float lo, float hi) {
  return minimumf_(maximumf_(x, lo), hi);
}

// ---- memory access ----
// True when every pointer is 16-byte aligned, so float4 loads and stores through them are legal.
// Kernels with 16-byte paths check this once and fall back to scalar code otherwise (a view that
// starts inside a buffer).
template <typename... T>
__device__ __forceinline__ bool aligned16(const T*... p) {
  return ((reinterpret_cast<unsigned long long>(p) | ... | 0ull) & 15ull) == 0;
}

// ---- warp and block reductions ----
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
// max and min propagate NaN, as torch.amax / amin do (fmaxf would drop a NaN held by one lane).
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = maximumf_(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_min(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = minimumf_(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Block-wide reduction through shared memory; every thread gets the result, after one
// __syncthreads. `scratch` holds at least blockDim.x / 32 floats and belongs to this call alone:
// each reduction of a kernel needs its own scratch (a later one would overwrite values an earlier
// one may still be reading). `identity` is the operation's neutral value (0 for a sum, -inf for a
// max). WarpOp is warp_sum, warp_max or warp_min.
template <float (*WarpOp)(float)>
__device__ __forceinline__ float block_reduce(float v, float* scratch, float identity) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  v = WarpOp(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : identity;
  return WarpOp(v);
}

}  // namespace nova
