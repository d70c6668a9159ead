// Nova: a depthwise 2-D convolution (NCHW, fp32; groups = input channels, each output channel reading
// one input channel) computed from a band of its input plane held in shared memory. Device code only
// (no host headers, no includes): compiles with NVRTC and nvcc alike.
//
// A block takes BAND output rows of one output plane (image n, output channel co, which reads input
// channel co / MULT): load() copies the input rows the band reaches, the padding as zeros, and the
// channel's R x S weights into shared memory (kSmemFloats floats); after a __syncthreads, compute()
// gives each thread the outputs tid, tid + nthreads, ... of the band, summed over the taps in the
// weight's order, to f(oh, ow, acc).
#pragma once

namespace nova {

template <int H, int W, int R, int S, int SH, int SW, int PH, int PW, int DH, int DW, int OH, int OW, int BAND>
struct DepthwiseBand {
  static constexpr int kInRows = (BAND - 1) * SH + (R - 1) * DH + 1;  // input rows a band reaches
  static constexpr int kInCols = (OW - 1) * SW + (S - 1) * DW + 1;    // input columns a row of outputs reaches
  static constexpr int kBands = (OH + BAND - 1) / BAND;
  static constexpr int kTile = kInRows * kInCols;
  static constexpr int kSmemFloats = kTile + R * S;  // the band's input, then the weights

  // The band's input rows from plane (the input channel's H x W values) and the R x S weights w.
  __device__ __forceinline__ static void load(const float* __restrict__ plane, const float* __restrict__ w, int band,
                                              float* tile, int tid, int nthreads) {
    const int ih0 = band * BAND * SH - PH;
    for (int i = tid; i < kTile; i += nthreads) {
      const int r = i / kInCols, c = i - r * kInCols;
      const int ih = ih0 + r, iw = c - PW;
      tile[i] = (unsigned)ih < (unsigned)H && (unsigned)iw < (unsigned)W ? plane[ih * W + iw] : 0.0f;
    }
    for (int i = tid; i < R * S; i += nthreads) tile[kTile + i] = w[i];
  }

  template <class F>
  __device__ __forceinline__ static void compute(const float* tile, int band, int tid, int nthreads, F&& f) {
    const float* wt = tile + kTile;
    for (int i = tid; i < BAND * OW; i += nthreads) {
      const int r = i / OW, ow = i - r * OW, oh = band * BAND + r;
      if (oh >= OH) return;  // i only grows: the rest of this thread's outputs are past the plane too
      float acc = 0.0f;
#pragma unroll
      for (int kh = 0; kh < R; ++kh)
#pragma unroll
        for (int kw = 0; kw < S; ++kw)
          acc = fmaf(tile[(r * SH + kh * DH) * kInCols + ow * SW + kw * DW], wt[kh * S + kw], acc);
      f(oh, ow, acc);
    }
  }
};

}  // namespace nova
