// Nova: the input patches of a 2-D convolution (NCHW, fp32), or of a 3-D one (NCDHW,
// ConvNcdhwTableGather at the end), as the W operand of an implicit GEMM (Tf32x3Tile<..., GATHER_B =
// true>::mainloop_gather in gemm_tf32x3.cuh). Device code only (no host headers, no includes):
// compiles with NVRTC and nvcc alike.
//
//   out[img, co, oh, ow] = sum_k Wt[co, k] * patch(k, n),   n = (img * OH + oh) * OW + ow,
//   k = (ci * R + r) * S + s (the weight's own order), patch(k, n) = x[img, ci, ih, iw] with
//   ih = oh * SH - PH + r * DH, iw = ow * SW - PW + s * DW, and zero outside the image (padding).
//
// For a grouped convolution the caller points x at the group's first input channel of image 0; CIN
// is the group's input channels, image_stride every channel of an image (C * H * W).
#pragma once

namespace nova {
namespace conv_gather {

// k = (ci * R + r) * S + s -> (ci, r, s).
template <int R, int S>
__device__ __forceinline__ void tap(int k, int& ci, int& r, int& s) {
  ci = k / (R * S);
  const int rs = k - ci * (R * S);
  r = rs / S;
  s = rs - r * S;
}

// n = (img * OH + oh) * OW + ow -> (img, oh, ow).
template <int OH, int OW>
__device__ __forceinline__ void pixel(int n, int& img, int& oh, int& ow) {
  img = n / (OH * OW);
  const int p = n - img * (OH * OW);
  oh = p / OW;
  ow = p - oh * OW;
}

}  // namespace conv_gather

template <int CIN, int H, int W, int R, int S, int SH, int SW, int PH, int PW, int DH, int DW, int OH, int OW>
struct ConvNchwGather {
  static constexpr int kK = CIN * R * S;  // the GEMM's K
  const float* x;                         // the group's channel 0 of image 0
  long long image_stride;                 // floats from one image to the next
  int pixels;                             // the GEMM's N: images * OH * OW

  // One output pixel's column: its image's base, the top-left input position of its window.
  struct Col {
    const float* base;
    int ih0, iw0;
    bool in;  // false past the last pixel
  };

  __device__ __forceinline__ Col column(int n) const {
    Col c;
    c.in = n < pixels;
    int img, oh, ow;
    conv_gather::pixel<OH, OW>(n, img, oh, ow);
    c.base = x + (c.in ? img * image_stride : 0);
    c.ih0 = oh * SH - PH;
    c.iw0 = ow * SW - PW;
    return c;
  }

  // patch(k, n) is at p, or zero (false): padding, k past K, n past the last pixel.
  __device__ __forceinline__ bool at(const Col& c, int k, const float*& p) const {
    int ci, r, s;
    conv_gather::tap<R, S>(k, ci, r, s);
    const int ih = c.ih0 + r * DH, iw = c.iw0 + s * DW;
    p = c.base + ((long long)ci * H + ih) * W + iw;
    return c.in && k < kK && (unsigned)ih < (unsigned)H && (unsigned)iw < (unsigned)W;
  }
};

// The same gather with K's index arithmetic done once per block: table[k] holds, for each k of the
// padded K, the offset of tap (ci, r, s) from a window's top-left input element and the tap's (r *
// DH, s * DW), so each gathered element costs a shared-memory read, two adds and a bounds check
// instead of two divisions and a multiply chain. k past K gets a row offset that no window reaches
// (its element reads as zero), and a column past the last pixel a window that no tap reaches. The
// caller gives it KPAD * 8 bytes of shared memory past the tile's stages, calls fill() with every
// thread of the block, then __syncthreads() before the main loop.
template <int CIN, int H, int W, int R, int S, int SH, int SW, int PH, int PW, int DH, int DW, int OH, int OW,
          int KPAD>
struct ConvNchwTableGather {
  static constexpr int kK = CIN * R * S;  // the GEMM's K
  static constexpr int kNowhere = -65536;  // ih0 of a column past the last pixel: no tap reaches the image
  static_assert(KPAD >= kK && (R - 1) * DH < 32768 && (S - 1) * DW < 32768 && H < 16384 && W < 32768,
                "the table's 16-bit tap offsets");
  const float* x;           // the group's channel 0 of image 0
  long long image_stride;   // floats from one image to the next
  int pixels;               // the GEMM's N: images * OH * OW
  const int2* table;        // KPAD entries in shared memory: {offset, (r * DH) << 16 | (s * DW)}

  __device__ __forceinline__ void fill(int2* t) const {
    for (int k = threadIdx.x; k < KPAD; k += blockDim.x) {
      int ci, r, s;
      conv_gather::tap<R, S>(k, ci, r, s);
      // Past K: a tap 32768 rows above the window, outside every image.
      t[k] = k < kK ? make_int2((ci * H + r * DH) * W + s * DW, (r * DH) << 16 | (s * DW))
                    : make_int2(0, static_cast<int>(0x80000000u));
    }
  }

  struct Col {
    const float* origin;  // the window's top-left input element (may lie outside the image)
    int ih0, iw0;         // its position; ih0 = kNowhere past the last pixel
  };

  __device__ __forceinline__ Col column(int n) const {
    Col c;
    int img, oh, ow;
    conv_gather::pixel<OH, OW>(n, img, oh, ow);
    c.ih0 = n < pixels ? oh * SH - PH : kNowhere;
    c.iw0 = ow * SW - PW;
    c.origin = x + (n < pixels ? img * image_stride + (long long)c.ih0 * W + c.iw0 : 0);
    return c;
  }

  __device__ __forceinline__ bool at(const Col& c, int k, const float*& p) const {
    const int2 e = table[k];
    const int ih = c.ih0 + (e.y >> 16), iw = c.iw0 + (short)(e.y & 0xffff);
    p = c.origin + e.x;
    return (unsigned)ih < (unsigned)H && (unsigned)iw < (unsigned)W;
  }
};

// The table gather of a 3-D convolution (NCDHW): k = ((ci * KD + t) * R + r) * S + s (the weight's
// own order), n = ((img * OD + od) * OH + oh) * OW + ow, and patch(k, n) = x[img, ci, id, ih, iw] with
// id = od * SD - PD + t * DD (and ih, iw as in 2-D), zero outside the volume. table[k] holds the tap's
// offset from the window's first input element and its (t * DD, r * DH, s * DW) in 10 bits each; k
// past K reads 2048 planes before the window, outside every volume. The caller gives it KPAD * 8
// bytes of shared memory past the tile's stages, calls fill() with every thread of the block, then
// __syncthreads() before the main loop.
template <int CIN, int D, int H, int W, int KD, int R, int S, int SD, int SH, int SW, int PD, int PH, int PW,
          int DD, int DH, int DW, int OD, int OH, int OW, int KPAD>
struct ConvNcdhwTableGather {
  static constexpr int kTaps = KD * R * S;
  static constexpr int kK = CIN * kTaps;   // the GEMM's K
  static constexpr int kNowhere = -65536;  // id0 of a column past the last voxel: no tap reaches the volume
  static_assert(KPAD >= kK && (KD - 1) * DD < 1024 && (R - 1) * DH < 1024 && (S - 1) * DW < 1024 && D < 2048,
                "the table's 10-bit tap offsets");
  const float* x;          // the group's channel 0 of image 0
  long long image_stride;  // floats from one image to the next
  int pixels;              // the GEMM's N: images * OD * OH * OW
  const int2* table;       // KPAD entries in shared memory: {offset, (t * DD) << 20 | (r * DH) << 10 | (s * DW)}

  __device__ __forceinline__ void fill(int2* tab) const {
    for (int k = threadIdx.x; k < KPAD; k += blockDim.x) {
      const int ci = k / kTaps, trs = k - ci * kTaps;
      const int t = trs / (R * S), rs = trs - t * (R * S);
      const int r = rs / S, s = rs - r * S;
      tab[k] = k < kK ? make_int2(((ci * D + t * DD) * H + r * DH) * W + s * DW,
                                  (t * DD) << 20 | (r * DH) << 10 | (s * DW))
                      : make_int2(0, static_cast<int>(0x80000000u));
    }
  }

  struct Col {
    const float* origin;  // the window's first input element (may lie outside the volume)
    int id0, ih0, iw0;    // its position; id0 = kNowhere past the last voxel
  };

  __device__ __forceinline__ Col column(int n) const {
    Col c;
    const int img = n / (OD * OH * OW), p = n - img * (OD * OH * OW);
    const int od = p / (OH * OW), q = p - od * (OH * OW);
    const int oh = q / OW, ow = q - oh * OW;
    c.id0 = n < pixels ? od * SD - PD : kNowhere;
    c.ih0 = oh * SH - PH;
    c.iw0 = ow * SW - PW;
    c.origin = x + (n < pixels ? img * image_stride + ((long long)c.id0 * H + c.ih0) * W + c.iw0 : 0);
    return c;
  }

  __device__ __forceinline__ bool at(const Col& c, int k, const float*& p) const {
    const int2 e = table[k];
    const int id = c.id0 + (e.y >> 20), ih = c.ih0 + ((e.y >> 10) & 1023), iw = c.iw0 + (e.y & 1023);
    p = c.origin + e.x;
    return (unsigned)id < (unsigned)D && (unsigned)ih < (unsigned)H && (unsigned)iw < (unsigned)W;
  }
};

}  // namespace nova
