#pragma once
// What Nova's device headers (kernels/nova/*.cuh) use of CUDA's vocabulary, defined for the host, so a test
// can compile a header's index arithmetic as plain C++ and check it against a definition: the function
// qualifiers as nothing (or inline), int2 and float2, and one thread of one-thread blocks (threadIdx.x = 0,
// blockDim.x = 1: a loop over threadIdx.x .. by blockDim.x covers everything in one call).
#ifndef __device__
#define __device__
#endif
#ifndef __forceinline__
#define __forceinline__ inline
#endif
#ifndef __restrict__
#define __restrict__
#endif

struct int2 {
  int x, y;
};
inline int2 make_int2(int x, int y) { return {x, y}; }
struct float2 {
  float x, y;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
static const struct {
  int x = 0;
} threadIdx;
static const struct {
  int x = 1;
} blockDim;
