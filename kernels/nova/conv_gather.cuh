// Nova: the input patches of a 2-D convolution (NCHW, fp32), of a 3-D one (NCDHW,
// ConvNcdhwTableGather), or of one output phase of a transposed convolution (ConvTransposedTableGather,
// at the end), as the W operand of an implicit GEMM (Tf32x3Tile<..., GATHER_B = true>::mainloop_gather
// in gemm_tf32x3.cuh). Device code only (no host headers, no includes):
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

// One axis of a transposed convolution split by output phase. Output o = i * STRIDE - PAD + r * DIL
// takes input i through tap r; the outputs of phase ph (o = o' * STRIDE + ph) take only the taps with
// (ph + PAD - r * DIL) divisible by STRIDE, each from input i = o' + c(ph, r), c = (ph + PAD - r * DIL) /
// STRIDE (exact). So each phase is a plain convolution of the input, with stride 1 and per-tap offsets.
template <int STRIDE, int PAD, int DIL, int TAPS, int OUT>
struct TransposedAxis {
  // Taps of the busiest phase (all of them where the dilation and the stride share a factor).
  static constexpr int busiest() {
    int most = 0;
    for (int ph = 0; ph < STRIDE; ++ph) {
      int n = 0;
      for (int r = 0; r < TAPS; ++r) n += ((ph + PAD - r * DIL) % STRIDE + STRIDE) % STRIDE == 0;
      most = n > most ? n : most;
    }
    return most;
  }
  static constexpr int kMaxTaps = busiest();
  __device__ __forceinline__ static bool takes(int ph, int r) { return ((ph + PAD - r * DIL) % STRIDE + STRIDE) % STRIDE == 0; }
  // Taps of phase ph.
  __device__ __forceinline__ static int taps(int ph) {
    int n = 0;
    for (int r = 0; r < TAPS; ++r) n += takes(ph, r);
    return n;
  }
  // The j-th tap of phase ph (in increasing r).
  __device__ __forceinline__ static int tap(int ph, int j) {
    for (int r = 0; r < TAPS; ++r)
      if (takes(ph, r) && j-- == 0) return r;
    return 0;
  }
  __device__ __forceinline__ static int offset(int ph, int r) { return (ph + PAD - r * DIL) / STRIDE; }
  // Outputs of phase ph: o' = 0 .. outputs(ph) - 1.
  __device__ __forceinline__ static int outputs(int ph) { return ph < OUT ? (OUT - ph + STRIDE - 1) / STRIDE : 0; }
};

// The gather of a transposed convolution (NCDHW; a 2-D one is D = KD = SD = 1, PD = 0) for one output
// phase (pd, ph, pw) at a time: the GEMM of a phase is [cout_g x K] weights (laid out per phase by the
// caller: k = ci * taps + t, t the phase's taps in (depth, height, width) order) times [K x pixels] where
// pixels = images x the phase's output grid (od', oh', ow'), and patch(k, n) = x[img, ci, od' + cd, oh' +
// ch, ow' + cw] with the tap's offsets (cd, ch, cw), zero outside the input. table[k] holds the offset
// from the window's first element and (cd, ch, cw) biased by 512 in 10 bits each; k past the phase's K
// reads 512 planes before the window, outside every input. The caller gives it KPAD * 8 bytes of
// shared memory past the tile's stages, calls fill() with every thread of the block, then
// __syncthreads() before the main loop.
template <int CIN, int D, int H, int W, int KD, int R, int S, int SD, int SH, int SW, int PD, int PH, int PW, int DD,
          int DH, int DW, int OD, int OH, int OW, int KPAD>
struct ConvTransposedTableGather {
  using AxisD = TransposedAxis<SD, PD, DD, KD, OD>;
  using AxisH = TransposedAxis<SH, PH, DH, R, OH>;
  using AxisW = TransposedAxis<SW, PW, DW, S, OW>;
  static constexpr int kPhases = SD * SH * SW;
  static constexpr int kMaxK = CIN * AxisD::kMaxTaps * AxisH::kMaxTaps * AxisW::kMaxTaps;  // the busiest phase
  static constexpr int kNowhere = -65536;  // od0 of a column past the phase's last pixel
  static_assert(KPAD >= kMaxK, "the table covers the busiest phase's K");
  static_assert((SD + PD) / SD < 512 && (SH + PH) / SH < 512 && (SW + PW) / SW < 512 && (KD - 1) * DD / SD < 511 &&
                    (R - 1) * DH / SH < 511 && (S - 1) * DW / SW < 511,
                "the table's 10-bit tap offsets");
  static_assert((OD + SD - 1) / SD <= 512, "k past K reads 512 planes before the window: before every input");
  const float* x;          // the group's channel 0 of image 0
  long long image_stride;  // floats from one image to the next
  int images;
  const int2* table;       // KPAD entries in shared memory
  // The phase, set by phase():
  int pd, ph, pw, td, th, tw;  // its position in the stride, its taps per axis
  int od_n, oh_n, ow_n;        // its output grid
  int k;                       // its K: CIN * td * th * tw
  int pixels;                  // its N: images * od_n * oh_n * ow_n

  // Sets the phase p (0 .. kPhases - 1), pd-major.
  __device__ __forceinline__ void phase(int p) {
    pd = p / (SH * SW);
    ph = p / SW % SH;
    pw = p % SW;
    td = AxisD::taps(pd), th = AxisH::taps(ph), tw = AxisW::taps(pw);
    od_n = AxisD::outputs(pd), oh_n = AxisH::outputs(ph), ow_n = AxisW::outputs(pw);
    k = CIN * td * th * tw;
    pixels = images * od_n * oh_n * ow_n;
  }

  // The phase's tap t (0 .. td * th * tw - 1) as (rd, rh, rw), the weight's own indices.
  __device__ __forceinline__ void tap(int t, int& rd, int& rh, int& rw) const {
    const int jd = t / (th * tw), jh = t / tw % th, jw = t % tw;
    rd = AxisD::tap(pd, jd);
    rh = AxisH::tap(ph, jh);
    rw = AxisW::tap(pw, jw);
  }

  __device__ __forceinline__ void fill(int2* tab) const {
    const int taps = td * th * tw;
    for (int kk = threadIdx.x; kk < KPAD; kk += blockDim.x) {
      if (kk >= k || taps == 0) {
        tab[kk] = make_int2(0, 0);  // (cd, ch, cw) = (-512, -512, -512): before every input
        continue;
      }
      const int ci = kk / taps;
      int rd, rh, rw;
      tap(kk - ci * taps, rd, rh, rw);
      const int cd = AxisD::offset(pd, rd), ch = AxisH::offset(ph, rh), cw = AxisW::offset(pw, rw);
      tab[kk] = make_int2(((ci * D + cd) * H + ch) * W + cw, (cd + 512) << 20 | (ch + 512) << 10 | (cw + 512));
    }
  }

  struct Col {
    const float* origin;  // input element (od', oh', ow') of the column's image (may lie outside)
    int od0, oh0, ow0;    // od0 = kNowhere past the phase's last pixel
  };

  __device__ __forceinline__ Col column(int n) const {
    Col c;
    const int per_image = od_n * oh_n * ow_n;
    const int img = per_image ? n / per_image : 0, q = n - img * per_image;
    const int od = oh_n * ow_n ? q / (oh_n * ow_n) : 0, r = q - od * (oh_n * ow_n);
    const int oh = ow_n ? r / ow_n : 0, ow = r - oh * ow_n;
    c.od0 = n < pixels ? od : kNowhere;
    c.oh0 = oh;
    c.ow0 = ow;
    c.origin = x + (n < pixels ? img * image_stride + ((long long)od * H + oh) * W + ow : 0);
    return c;
  }

  __device__ __forceinline__ bool at(const Col& c, int kk, const float*& p) const {
    const int2 e = table[kk];
    const int id = c.od0 + ((e.y >> 20) & 1023) - 512, ih = c.oh0 + ((e.y >> 10) & 1023) - 512,
              iw = c.ow0 + (e.y & 1023) - 512;
    p = c.origin + e.x;
    return (unsigned)id < (unsigned)D && (unsigned)ih < (unsigned)H && (unsigned)iw < (unsigned)W;
  }

  // Output position of the phase's pixel n: (img, od, oh, ow) in the full output.
  __device__ __forceinline__ void output(int n, int& img, int& od, int& oh, int& ow) const {
    const int per_image = od_n * oh_n * ow_n, q = n - (img = n / per_image) * per_image;
    const int a = q / (oh_n * ow_n), r = q - a * (oh_n * ow_n), b = r / ow_n;
    od = a * SD + pd;
    oh = b * SH + ph;
    ow = (r - b * ow_n) * SW + pw;
  }
};

}  // namespace nova
