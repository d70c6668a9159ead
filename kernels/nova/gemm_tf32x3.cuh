// Nova: fp32-accurate GEMM on tensor cores through the 3xTF32 split (sm_80+, tuned for H200).
// Device code only (no host headers): compiles with NVRTC and nvcc alike.
//
//   C[m, n] = sum_k A[m, k] * W[n, k]        (torch.nn.functional.linear, before bias)
//   A: row-major [M, K] (lda = K), W: row-major [N, K] (ldw = K), C: row-major [M, N].
//
// Every operand value x is split into big = x rounded to TF32 and small = x - big; each
// product is accumulated as a_small*b_big + a_big*b_small, then a_big*b_big, into fp32
// accumulators (small*small dropped; CUTLASS calls this OpMultiplyAddFastF32). Errors are those
// of an fp32 SGEMM (about 2^-22 relative per product, fp32 accumulation).
//
// Requirements (the caller checks them on the host): M % BM == 0, N % BN == 0, K % BK == 0,
// A and W 16-byte aligned and lda, ldw multiples of 4 (cp.async moves 16 bytes).
//
// Usage (a generated kernel; Cfg is one of the aliases at the end of this file):
//
//   using Cfg = nova::Tf32x3_128x64;
//   extern "C" __global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
//   my_kernel(const float* A, const float* W, const float* bias, float* out, int M, int N, int K) {
//     extern __shared__ float4 smem[];
//     Cfg t;
//     t.mainloop(A, W, M, N, K, smem);            // block tile (blockIdx.y*BM, blockIdx.x*BN)
//     t.for_each([&](int row, int col, float v) { out[(size_t)row * N + col] = v + bias[col]; });
//   }
//   launch:
//     grid  = dim3(N / Cfg::kBN, M / Cfg::kBM), block = dim3(Cfg::kThreads)
//     smem  = Cfg::kSmemBytes = kStages * (kBM + kBN) * kBK * 4 bytes; above 48 KiB the host must
//             raise the limit first: cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
//             bytes) or cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes).
//
// for_each(f(row, col, v)) visits every accumulator once with its global (row, col); it only reads
// the accumulators, and any elementwise epilogue goes in the lambda. The explicit map is also
// exposed: acc[mi][ni][r] sits at row_of(mi, r), col_of(ni, r).
#pragma once

namespace nova {
namespace tf32x3 {

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
// The same with zeros written past the first src_bytes (0 or 16): a tile's rows past the matrix.
__device__ __forceinline__ void cp_async16_zfill(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
// One float, or a zero where src_bytes is 0 (a gathered element in the padding).
__device__ __forceinline__ void cp_async4_zfill(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Split x = big + small for 3xTF32: big = x rounded to TF32 (to nearest, ties away from zero, as
// cvt.rna.tf32.f32, done in integer arithmetic), small = x - big (exact) passed as is: the mma reads
// the top 19 bits of a tf32 operand and ignores the low 13, so small is truncated (|error| < 2^-21
// |x|), far below the fp32 accumulation error of any K >= 64. Measured on the H200 (docs/perf-notes.md,
// sixth session): as accurate as rounding small too, and faster; the integer rounding was about 10%
// faster than the cvt instruction.
__device__ __forceinline__ void split(float x, unsigned& big, unsigned& small) {
  big = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
  small = __float_as_uint(x - __uint_as_float(big));
}

// D += A * B, m16n8k8, A row-major (4 regs), B col-major (2 regs), fp32 accumulators.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// D = A * B (zero accumulator input).
__device__ __forceinline__ void mma_tf32_z(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%10,%10,%10};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(0.0f));
}

}  // namespace tf32x3

// Block tile BM x BN, k-tile BK (32 or 64), WARPS_M x WARPS_N warps (warp tile (BM/WARPS_M) x
// (BN/WARPS_N), multiples of 16 x 8), STAGES-deep cp.async pipeline. MIN_BLOCKS is only the value
// a kernel should pass to __launch_bounds__ (kMinBlocks).
//
// Shared memory, per stage: A tile [BM][BK] then the W tile, rows unpadded. A row is BK/8 segments
// of 8 floats (32 bytes); segment q of row r is stored at segment q ^ (r & 3). Lane (g = lane/4,
// t = lane%4) reads a k8-step's fragment of a row with one 8-byte load: k-step q holds k = 8q ..
// 8q+7 and lane t's mma k-slots {t, t+4} take k = 8q+2t, 8q+2t+1 (the same permutation for A and W,
// which the dot product does not see). Each half-warp of such a load touches rows g = 0..3 (or
// 4..7), one distinct segment each: 32 distinct banks. Each 8-lane group of cp.async stores fills
// one 128-byte row: 32 distinct banks.
//
// GATHER_B (an implicit GEMM, mainloop_gather): W is not a matrix in memory but gathered element by
// element (a convolution's input patches), and its tile is stored k-major, [BK][BN + 4]: a warp's
// cp.async stores fill one k-row (consecutive columns, 32 distinct banks), and lane (g, t) reads
// k-rows 8q+2t and 8q+2t+1 at column g, whose banks 8t + g (+4) are distinct because the padded row
// is 4 banks past a multiple of 32.
template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES, int MIN_BLOCKS = 1, bool GATHER_B = false>
struct Tf32x3Tile {
  static constexpr int kBM = BM, kBN = BN, kBK = BK, kStages = STAGES, kMinBlocks = MIN_BLOCKS;
  static constexpr int kFlush = 4;  // k8-steps summed into one partial (see run())
  static constexpr int kThreads = WARPS_M * WARPS_N * 32;
  static constexpr int kWTM = BM / WARPS_M, kWTN = BN / WARPS_N;  // warp tile
  static constexpr int kMI = kWTM / 16, kNI = kWTN / 8;           // mma tiles per warp
  static constexpr int kSteps = BK / 8;                           // k8-steps per k-tile
  static constexpr int kLdB = BN + 4;                             // GATHER_B: floats per k-row of W
  static constexpr int kStageFloats = BM * BK + (GATHER_B ? BK * kLdB : BN * BK);
  static constexpr int kSmemBytes = STAGES * kStageFloats * 4;
  static constexpr int kChunksPerRow = BK / 4;                   // 16-byte chunks per smem row
  static constexpr int kRowsPerPass = kThreads / kChunksPerRow;  // rows one cp.async pass covers
  static constexpr int kKRowsPerPass = GATHER_B ? kThreads / BN : 1;  // GATHER_B: k-rows per pass

  static_assert(BK == 32 || BK == 64, "BK must be 32 or 64 (the swizzle assumes 128-byte multiples)");
  static_assert(kWTM % 16 == 0 && kWTN % 8 == 0 && BM % WARPS_M == 0 && BN % WARPS_N == 0, "warp tile");
  static_assert(kThreads % kChunksPerRow == 0 && kRowsPerPass % 4 == 0, "loader layout");
  static_assert(BM % kRowsPerPass == 0 && (GATHER_B || BN % kRowsPerPass == 0), "tile rows vs threads");
  static_assert(!GATHER_B || (kThreads % BN == 0 && BK % kKRowsPerPass == 0), "gathering loader layout");
  static_assert(STAGES >= 2, "at least two stages");
  static_assert(kSteps % kFlush == 0, "the partial sums must divide the k-tile");

  float acc[kMI][kNI][4];
  int row0;  // global row of acc[0][0][0]: m0 + warp_m * kWTM + lane / 4
  int col0;  // global col of acc[0][0][0]: n0 + warp_n * kWTN + 2 * (lane % 4)

  // Global position of accumulator acc[mi][ni][r] (r = 0..3).
  __device__ __forceinline__ int row_of(int mi, int r) const { return row0 + mi * 16 + (r >> 1) * 8; }
  __device__ __forceinline__ int col_of(int ni, int r) const { return col0 + ni * 8 + (r & 1); }

  template <class F>
  __device__ __forceinline__ void for_each(F&& f) const {
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
      for (int ni = 0; ni < kNI; ++ni)
#pragma unroll
        for (int r = 0; r < 4; ++r) f(row_of(mi, r), col_of(ni, r), acc[mi][ni][r]);
  }

  // Main loop for the block tile at (blockIdx.y * BM, blockIdx.x * BN), lda = ldw = K.
  __device__ __forceinline__ void mainloop(const float* __restrict__ A, const float* __restrict__ W, int M,
                                           int N, int K, void* smem) {
    (void)M;
    (void)N;
    mainloop_at(A, K, W, K, K, blockIdx.y * BM, blockIdx.x * BN, smem);
  }

  // Main loop for the block tile at (m0, n0) with explicit leading dimensions (in floats).
  // Ends with a __syncthreads, so smem may be reused by the epilogue.
  __device__ __forceinline__ void mainloop_at(const float* __restrict__ A, int lda,
                                              const float* __restrict__ W, int ldw, int K, int m0, int n0,
                                              void* smem) {
    static_assert(!GATHER_B, "a gathered W tile is loaded by mainloop_gather");
    using namespace tf32x3;
    const int tid = threadIdx.x;
    const unsigned sbase_u = smem_addr(smem);
    // ---- loader: thread covers chunk lc of rows lr, lr + kRowsPerPass, ... (same r & 3) ----
    const int lr = tid / kChunksPerRow, lc = tid % kChunksPerRow;
    const int lswz = ((((lc >> 1) ^ (lr & 3)) << 1) | (lc & 1)) * 4;  // swizzled float offset in the row
    const float* gA = A + (long long)(m0 + lr) * lda + lc * 4;
    const float* gW = W + (long long)(n0 + lr) * ldw + lc * 4;
    const unsigned sA_st = sbase_u + (unsigned)(lr * BK + lswz) * 4u;
    const unsigned sW_st = sA_st + (unsigned)(BM * BK) * 4u;
    const long long a_pass = (long long)kRowsPerPass * lda, w_pass = (long long)kRowsPerPass * ldw;
    run(K / BK, m0, n0, smem, [&](int stage, int kt) {
      const unsigned so = (unsigned)(stage * kStageFloats) * 4u;
      const float* pa = gA + (long long)kt * BK;
      const float* pw = gW + (long long)kt * BK;
#pragma unroll
      for (int i = 0; i < BM / kRowsPerPass; ++i)
        cp_async16(sA_st + so + (unsigned)(i * kRowsPerPass * BK) * 4u, pa + i * a_pass);
#pragma unroll
      for (int i = 0; i < BN / kRowsPerPass; ++i)
        cp_async16(sW_st + so + (unsigned)(i * kRowsPerPass * BK) * 4u, pw + i * w_pass);
    });
  }

  // Main loop of an implicit GEMM (GATHER_B) for the block tile at (m0, n0): A is [M, K] row-major
  // (lda, a multiple of 4, 16-byte aligned), W(k, n) is gathered through `gather`. Rows of A at or
  // past M and k at or past K read as zeros, so M, N and K need not be multiples of the tile (the
  // caller skips accumulators at or past M and N). Gather provides:
  //   Col column(int n) const;                          // per-column state, computed once
  //   bool at(const Col&, int k, const float*& p) const; // false: W(k, n) is zero (padding, k >= K)
  template <class Gather>
  __device__ __forceinline__ void mainloop_gather(const float* __restrict__ A, int lda, int M, int K, int m0,
                                                  int n0, const Gather& gather, void* smem) {
    static_assert(GATHER_B, "mainloop_gather needs the k-major W tile (GATHER_B)");
    using namespace tf32x3;
    const int tid = threadIdx.x;
    const unsigned sbase_u = smem_addr(smem);
    const int lr = tid / kChunksPerRow, lc = tid % kChunksPerRow;
    const int lswz = ((((lc >> 1) ^ (lr & 3)) << 1) | (lc & 1)) * 4;
    const float* gA = A + (long long)(m0 + lr) * lda + lc * 4;
    const unsigned sA_st = sbase_u + (unsigned)(lr * BK + lswz) * 4u;
    // The gathering loader: thread covers column wc of k-rows wk, wk + kKRowsPerPass, ...
    const int wc = tid % BN, wk = tid / BN;
    const typename Gather::Col col = gather.column(n0 + wc);
    const unsigned sW_st = sbase_u + (unsigned)(BM * BK + wk * kLdB + wc) * 4u;
    run((K + BK - 1) / BK, m0, n0, smem, [&](int stage, int kt) {
      const unsigned so = (unsigned)(stage * kStageFloats) * 4u;
      const bool chunk_in = kt * BK + lc * 4 < K;
#pragma unroll
      for (int i = 0; i < BM / kRowsPerPass; ++i) {
        const bool in = chunk_in && m0 + lr + i * kRowsPerPass < M;
        cp_async16_zfill(sA_st + so + (unsigned)(i * kRowsPerPass * BK) * 4u,
                         in ? gA + (long long)i * kRowsPerPass * lda + (long long)kt * BK : A, in ? 16 : 0);
      }
#pragma unroll
      for (int j = 0; j < BK / kKRowsPerPass; ++j) {
        const float* p = A;
        const bool in = gather.at(col, kt * BK + wk + j * kKRowsPerPass, p);
        cp_async4_zfill(sW_st + so + (unsigned)(j * kKRowsPerPass * kLdB) * 4u, in ? p : A, in ? 4 : 0);
      }
    });
  }

 private:
  // The pipeline over KT k-tiles, each loaded into a stage by load_tile(stage, kt) (one commit
  // group per call), and the tensor-core product of each, for the block tile at (m0, n0).
  template <class LoadTile>
  __device__ __forceinline__ void run(int KT, int m0, int n0, void* smem, LoadTile&& load_tile) {
    using namespace tf32x3;
    const int tid = threadIdx.x;
    const int lane = tid & 31, warp = tid >> 5;
    const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
    const int g = lane >> 2, t = lane & 3;
    row0 = m0 + warp_m * kWTM + g;
    col0 = n0 + warp_n * kWTN + 2 * t;

#pragma unroll
    for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
      for (int ni = 0; ni < kNI; ++ni)
#pragma unroll
        for (int r = 0; r < 4; ++r) acc[mi][ni][r] = 0.0f;

    float* const sbase = static_cast<float*>(smem);

    // ---- fragment reader: k8-step q of a stage; every row this lane reads has r & 3 == g & 3 ----
    const float* const fA = sbase + (warp_m * kWTM + g) * BK + 2 * t;
    const float* const fW = GATHER_B ? sbase + BM * BK + 2 * t * kLdB + warp_n * kWTN + g
                                     : sbase + BM * BK + (warp_n * kWTN + g) * BK + 2 * t;
    const int q3 = g & 3;
    struct Frag {
      float2 a[kMI][2];  // rows g, g+8 of m-tile mi: .x = k-slot t, .y = k-slot t+4
      float2 b[kNI];     // row (n) g of n-tile ni:   .x = k-slot t, .y = k-slot t+4
    };
    auto load_frag = [&](Frag& f, int stage, int q) {
      const int off = stage * kStageFloats + 8 * (q ^ q3);
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          f.a[mi][h] = *reinterpret_cast<const float2*>(fA + off + (mi * 16 + h * 8) * BK);
      if constexpr (GATHER_B) {
        const int woff = stage * kStageFloats + 8 * q * kLdB;  // k-rows 8q + 2t and 8q + 2t + 1
#pragma unroll
        for (int ni = 0; ni < kNI; ++ni) f.b[ni] = make_float2(fW[woff + ni * 8], fW[woff + kLdB + ni * 8]);
      } else {
#pragma unroll
        for (int ni = 0; ni < kNI; ++ni) f.b[ni] = *reinterpret_cast<const float2*>(fW + off + ni * 8 * BK);
      }
    };

    // One k8-step. Per (mi, ni): a_small*b_big, a_big*b_small, then a_big*b_big. The tensor cores
    // add with truncation, so a long chain of mma into one accumulator drifts by about an ulp of
    // the accumulator per mma, always toward zero: the error grows linearly with K (6-48x cuBLAS's
    // on the H200). So the 3 * kFlush mma of kFlush consecutive k-steps go into a partial sum
    // started from zero (truncation relative to that small partial only), which is then added to
    // the accumulator with a round-to-nearest FADD: errors like an fp32 SGEMM's.
    float part[kMI][kNI][4];
    auto compute = [&](const Frag& f, int q) {
      unsigned ab[kMI][4], as[kMI][4], bb[kNI][2], bs[kNI][2];
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi) {
        split(f.a[mi][0].x, ab[mi][0], as[mi][0]);  // (g,   t)
        split(f.a[mi][1].x, ab[mi][1], as[mi][1]);  // (g+8, t)
        split(f.a[mi][0].y, ab[mi][2], as[mi][2]);  // (g,   t+4)
        split(f.a[mi][1].y, ab[mi][3], as[mi][3]);  // (g+8, t+4)
      }
#pragma unroll
      for (int ni = 0; ni < kNI; ++ni) {
        split(f.b[ni].x, bb[ni][0], bs[ni][0]);  // (k t,   n g)
        split(f.b[ni].y, bb[ni][1], bs[ni][1]);  // (k t+4, n g)
      }
      const bool first = q % kFlush == 0, last = (q + 1) % kFlush == 0;
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
        for (int ni = 0; ni < kNI; ++ni) {
          if (first)
            mma_tf32_z(part[mi][ni], as[mi], bb[ni]);
          else
            mma_tf32(part[mi][ni], as[mi], bb[ni]);
        }
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
        for (int ni = 0; ni < kNI; ++ni) mma_tf32(part[mi][ni], ab[mi], bs[ni]);
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
        for (int ni = 0; ni < kNI; ++ni) {
          mma_tf32(part[mi][ni], ab[mi], bb[ni]);
          if (last) {
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[mi][ni][r] += part[mi][ni][r];
          }
        }
    };

    // ---- prologue: tiles 0 .. STAGES-2 in flight (one commit group each, empty past the end) ----
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < KT) load_tile(s, s);
      cp_async_commit();
    }
    cp_async_wait<STAGES - 2>();
    __syncthreads();

    Frag frag[2];
    int rd = 0, wr = STAGES - 1;
    load_frag(frag[0], 0, 0);

#pragma unroll 1
    for (int kt = 0; kt < KT; ++kt) {
#pragma unroll
      for (int q = 0; q < kSteps; ++q) {
        if (q == kSteps - 1) {
          // Tile kt+1 landed (for every thread), and every warp is done reading stage (kt-1).
          cp_async_wait<STAGES - 2>();
          __syncthreads();
          rd = (rd + 1 == STAGES) ? 0 : rd + 1;
        }
        load_frag(frag[(q + 1) & 1], rd, (q + 1) % kSteps);  // past the last tile: stale smem, unused
        if (q == 0) {
          // Into the stage read during iteration kt-1 (all reads done: the barrier above).
          if (kt + STAGES - 1 < KT) load_tile(wr, kt + STAGES - 1);
          cp_async_commit();
          wr = (wr + 1 == STAGES) ? 0 : wr + 1;
        }
        compute(frag[q & 1], q);
      }
    }
    cp_async_wait<0>();
    __syncthreads();
  }
};

// Configurations (measured on the H200: docs/perf-notes.md, sixth session).
//   name               block     warps  warp tile  stages  threads  smem bytes
using Tf32x3_128x64 = Tf32x3Tile<128, 64, 32, 2, 2, 4, 2>;  //  2x2  64x32  4  128   98304
using Tf32x3_64x64 = Tf32x3Tile<64, 64, 32, 2, 2, 4, 3>;    //  2x2  32x32  4  128   65536
// With the gathered W operand (an implicit-GEMM convolution: M output channels, N output pixels).
using Tf32x3Gather_128x64 = Tf32x3Tile<128, 64, 32, 2, 2, 4, 2, true>;  //  2x2  64x32  4  128  100352
using Tf32x3Gather_64x128 = Tf32x3Tile<64, 128, 32, 2, 2, 4, 2, true>;  //  2x2  32x64  4  128  100352

}  // namespace nova
