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
// exposed: acc[mi][ni][r] sits at row_of(mi, r), col_of(ni, r). store_rows(smem, m0, n0,
// f(row, col, const float (&v)[4])) stages the tile through shared memory and visits it four
// consecutive columns at a time, for 16-byte stores of rows contiguous along n.
//
// Other operand forms (the tile's caller offsets A, W or B by blockIdx.z for a batched product):
//   mainloop_at(A, lda, W, ldw, K, m0, n0, smem[, keep_a, keep_b])   W [N, K] (k contiguous)
//   mainloop_kn(A, lda, B, ldb, K, m0, n0, smem[, keep_a, keep_b])   B [K, N] (n contiguous), on a
//                                                                     GATHER_B tile (k-major W tile)
//   mainloop_gather(A, lda, M, K, m0, n0, gather, smem)               W(k, n) gathered (convolutions)
// keep_a(row, k) and keep_b(k, n) (tf32x3::KeepUpper / KeepLower, default: keep all) zero operand
// elements as they are read from shared memory: a triangular operand (triu / tril) without a pass
// that writes it out first.
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

// Operand masks for mainloop_at / mainloop_kn: keep(r, c) says whether the operand's element at
// row r, column c of the matrix as the product reads it (A: (m, k); B: (k, n)) is kept or read as 0.
struct NoMask {
  static constexpr bool kAll = true;
  __device__ __forceinline__ bool keep(int, int) const { return true; }
};
// torch.triu(x, DIAG): keeps c - r >= DIAG.
template <int DIAG>
struct KeepUpper {
  static constexpr bool kAll = false;
  __device__ __forceinline__ bool keep(int r, int c) const { return c - r >= DIAG; }
};
// torch.tril(x, DIAG): keeps c - r <= DIAG.
template <int DIAG>
struct KeepLower {
  static constexpr bool kAll = false;
  __device__ __forceinline__ bool keep(int r, int c) const { return c - r <= DIAG; }
};

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
// GATHER_B (a k-major W tile): W is stored k-major in shared memory, [BK][BN + 4], for an operand
// that is not [N, K] in memory: gathered element by element (a convolution's input patches,
// mainloop_gather) or a [K, N] matrix with n contiguous (mainloop_kn, 16-byte copies along n). A
// warp's cp.async stores fill k-rows of consecutive columns, and lane (g, t) reads k-rows 8q+2t and
// 8q+2t+1 at column g, whose banks 8t + g (+4) are distinct because the padded row is 4 banks past a
// multiple of 32.
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

  // The block tile's accumulators through shared memory, for an output whose rows are contiguous
  // along n: after the main loop (which ends with a barrier, so the pipeline's stages are free) each
  // accumulator pair goes to a [BM][BN + 8] staging tile, and after a barrier each thread reads four
  // consecutive columns of one row and calls chunk(row, col, v) with their global position (col a
  // multiple of 4) and values v[0..3]; chunk applies the epilogue and stores the four values with
  // one 16-byte store, so each 8 lanes of a warp write a whole 128-byte line. for_each's stores, one
  // float per lane and instruction, fill every other float of each 32-byte sector they touch.
  // Bank-conflict free both ways: a half-warp's 8-byte writes hit banks 8g + 2t (+1) of the padded
  // rows (72 floats, 8 banks apart), a quarter-warp's 16-byte reads one whole row segment.
  template <class F>
  __device__ __forceinline__ void store_rows(void* smem, int m0, int n0, F&& chunk) const {
    constexpr int kLdC = BN + 8, kChunks = BN / 4, kRowsPerPass = kThreads / kChunks;
    static_assert(BM * kLdC * 4 <= kSmemBytes && kThreads % kChunks == 0 && BM % kRowsPerPass == 0,
                  "the staging tile");
    float* const c = static_cast<float*>(smem);
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
      for (int ni = 0; ni < kNI; ++ni)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          *reinterpret_cast<float2*>(c + (row0 - m0 + mi * 16 + h * 8) * kLdC + col0 - n0 + ni * 8) =
              make_float2(acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]);
    __syncthreads();
    const int cr = threadIdx.x / kChunks, cc = (threadIdx.x % kChunks) * 4;
#pragma unroll
    for (int i = 0; i < BM / kRowsPerPass; ++i) {
      const int r = cr + i * kRowsPerPass;
      const float4 v4 = *reinterpret_cast<const float4*>(c + r * kLdC + cc);
      const float v[4] = {v4.x, v4.y, v4.z, v4.w};
      chunk(m0 + r, n0 + cc, v);
    }
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
  template <class MaskA = tf32x3::NoMask, class MaskB = tf32x3::NoMask>
  __device__ __forceinline__ void mainloop_at(const float* __restrict__ A, int lda,
                                              const float* __restrict__ W, int ldw, int K, int m0, int n0,
                                              void* smem, MaskA keep_a = {}, MaskB keep_b = {}) {
    static_assert(!GATHER_B, "a gathered W tile is loaded by mainloop_gather");
    const unsigned sbase_u = tf32x3::smem_addr(smem);
    const RowLoader<BM> load_a(A, lda, m0, sbase_u, 0);
    const RowLoader<BN> load_w(W, ldw, n0, sbase_u, BM * BK);
    run(K / BK, m0, n0, smem, keep_a, keep_b, [&](int stage, int kt) {
      const unsigned so = (unsigned)(stage * kStageFloats) * 4u;
      load_a.load(so, kt);
      load_w.load(so, kt);
    });
  }

  // Main loop for the block tile at (m0, n0) of A [M, K] (row-major, lda) times B [K, N] stored with n
  // contiguous (ldb floats from one k-row to the next), on the k-major W tile (GATHER_B). M, N and K
  // multiples of the tile; A, B 16-byte aligned, lda and ldb multiples of 4.
  template <class MaskA = tf32x3::NoMask, class MaskB = tf32x3::NoMask>
  __device__ __forceinline__ void mainloop_kn(const float* __restrict__ A, int lda,
                                              const float* __restrict__ B, int ldb, int K, int m0, int n0,
                                              void* smem, MaskA keep_a = {}, MaskB keep_b = {}) {
    static_assert(GATHER_B, "mainloop_kn needs the k-major W tile (GATHER_B)");
    static_assert(kThreads % (BN / 4) == 0 && BK % (kThreads / (BN / 4)) == 0, "k-major loader layout");
    const unsigned sbase_u = tf32x3::smem_addr(smem);
    const RowLoader<BM> load_a(A, lda, m0, sbase_u, 0);
    // B: thread covers the 4 columns 4 * bc of k-rows bk, bk + kBRows, ...
    constexpr int kBChunks = BN / 4, kBRows = kThreads / kBChunks;
    const int bc = threadIdx.x % kBChunks, bk = threadIdx.x / kBChunks;
    const float* gB = B + (long long)bk * ldb + n0 + bc * 4;
    const unsigned sB_st = sbase_u + (unsigned)(BM * BK + bk * kLdB + bc * 4) * 4u;
    run(K / BK, m0, n0, smem, keep_a, keep_b, [&](int stage, int kt) {
      const unsigned so = (unsigned)(stage * kStageFloats) * 4u;
      load_a.load(so, kt);
      const float* pb = gB + (long long)kt * BK * ldb;
#pragma unroll
      for (int j = 0; j < BK / kBRows; ++j)
        tf32x3::cp_async16(sB_st + so + (unsigned)(j * kBRows * kLdB) * 4u, pb + (long long)j * kBRows * ldb);
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
    const RowLoader<BM> load_a(A, lda, m0, sbase_u, 0);
    // The gathering loader: thread covers column wc of k-rows wk, wk + kKRowsPerPass, ...
    const int wc = tid % BN, wk = tid / BN;
    const typename Gather::Col col = gather.column(n0 + wc);
    const unsigned sW_st = sbase_u + (unsigned)(BM * BK + wk * kLdB + wc) * 4u;
    run((K + BK - 1) / BK, m0, n0, smem, NoMask{}, NoMask{}, [&](int stage, int kt) {
      const unsigned so = (unsigned)(stage * kStageFloats) * 4u;
      load_a.load_bounded(so, kt, m0, M, K, A);
#pragma unroll
      for (int j = 0; j < BK / kKRowsPerPass; ++j) {
        const float* p = A;
        const bool in = gather.at(col, kt * BK + wk + j * kKRowsPerPass, p);
        cp_async4_zfill(sW_st + so + (unsigned)(j * kKRowsPerPass * kLdB) * 4u, in ? p : A, in ? 4 : 0);
      }
    });
  }

 private:
  // Copies [ROWS, BK] k-tiles of a row-major matrix (k contiguous, ld floats from row to row) into
  // each stage at float offset `at`, rows unpadded and swizzled (see above): the thread covers the
  // 16-byte chunk lc of rows lr, lr + kRowsPerPass, ... (all with the same r & 3).
  template <int ROWS>
  struct RowLoader {
    const float* g;  // the thread's first chunk in the matrix, at k = 0
    unsigned s;      // its place in stage 0 (shared-memory address)
    long long pass;  // floats from one of the thread's rows to the next
    int lr, lc;

    __device__ __forceinline__ RowLoader(const float* m, int ld, int row0, unsigned sbase, int at) {
      lr = threadIdx.x / kChunksPerRow;
      lc = threadIdx.x % kChunksPerRow;
      const int lswz = ((((lc >> 1) ^ (lr & 3)) << 1) | (lc & 1)) * 4;  // swizzled float offset in the row
      g = m + (long long)(row0 + lr) * ld + lc * 4;
      s = sbase + (unsigned)(at + lr * BK + lswz) * 4u;
      pass = (long long)kRowsPerPass * ld;
    }
    // k-tile kt into the stage at byte offset so.
    __device__ __forceinline__ void load(unsigned so, int kt) const {
#pragma unroll
      for (int i = 0; i < ROWS / kRowsPerPass; ++i)
        tf32x3::cp_async16(s + so + (unsigned)(i * kRowsPerPass * BK) * 4u, g + (long long)kt * BK + i * pass);
    }
    // The same with zeros for rows at or past `rows` (the tile starting at row0) and k at or past K;
    // `any` is a valid address for the copies that read nothing.
    __device__ __forceinline__ void load_bounded(unsigned so, int kt, int row0, int rows, int K,
                                                 const float* any) const {
      const bool chunk_in = kt * BK + lc * 4 < K;
#pragma unroll
      for (int i = 0; i < ROWS / kRowsPerPass; ++i) {
        const bool in = chunk_in && row0 + lr + i * kRowsPerPass < rows;
        tf32x3::cp_async16_zfill(s + so + (unsigned)(i * kRowsPerPass * BK) * 4u,
                                 in ? g + i * pass + (long long)kt * BK : any, in ? 16 : 0);
      }
    }
  };

  // The pipeline over KT k-tiles, each loaded into a stage by load_tile(stage, kt) (one commit
  // group per call), and the tensor-core product of each, for the block tile at (m0, n0); operand
  // elements that keep_a(m, k) or keep_b(k, n) refuse are read as zeros.
  template <class MaskA, class MaskB, class LoadTile>
  __device__ __forceinline__ void run(int KT, int m0, int n0, void* smem, const MaskA& keep_a,
                                      const MaskB& keep_b, LoadTile&& load_tile) {
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
    // The masks, on the fragment of k8-step q of k-tile kt: A's element (row of .x/.y, k = kt*BK +
    // 8q + 2t, + 1); B's (same k, n = col0 - 2t + g + ni*8).
    auto apply_masks = [&](Frag& f, int kt, int q) {
      const int k = kt * BK + 8 * q + 2 * t;
      if constexpr (!MaskA::kAll) {
#pragma unroll
        for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = row0 + mi * 16 + h * 8;
            if (!keep_a.keep(r, k)) f.a[mi][h].x = 0.0f;
            if (!keep_a.keep(r, k + 1)) f.a[mi][h].y = 0.0f;
          }
      }
      if constexpr (!MaskB::kAll) {
#pragma unroll
        for (int ni = 0; ni < kNI; ++ni) {
          const int n = col0 - 2 * t + g + ni * 8;
          if (!keep_b.keep(k, n)) f.b[ni].x = 0.0f;
          if (!keep_b.keep(k + 1, n)) f.b[ni].y = 0.0f;
        }
      }
    };
    auto compute = [&](Frag& f, int kt, int q) {
      if constexpr (!MaskA::kAll || !MaskB::kAll) apply_masks(f, kt, q);
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
        compute(frag[q & 1], kt, q);
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
// Small outputs with a short K (GemmTf32x3Rule without split K): a block per 32x32 tile over the whole K,
// one launch where split K takes two.
using Tf32x3_32x32 = Tf32x3Tile<32, 32, 32, 2, 2, 4, 4>;    //  2x2  16x16  4  128   32768
// With the gathered W operand (an implicit-GEMM convolution: M output channels, N output pixels).
using Tf32x3Gather_128x64 = Tf32x3Tile<128, 64, 32, 2, 2, 4, 2, true>;  //  2x2  64x32  4  128  100352
using Tf32x3Gather_64x128 = Tf32x3Tile<64, 128, 32, 2, 2, 4, 2, true>;  //  2x2  32x64  4  128  100352
// The same with three stages, leaving room for a larger table of K's taps (a 3-D convolution's).
using Tf32x3Gather3_128x64 = Tf32x3Tile<128, 64, 32, 2, 2, 3, 2, true>;  //  2x2  64x32  3  128   75264
using Tf32x3Gather3_64x128 = Tf32x3Tile<64, 128, 32, 2, 2, 3, 2, true>;  //  2x2  32x64  3  128   75264
// With B [K, N] stored n-contiguous (mainloop_kn: x @ w, a batched matmul of plain operands).
using Tf32x3Kn_128x64 = Tf32x3Tile<128, 64, 32, 2, 2, 4, 2, true>;  //  2x2  64x32  4  128  100352
using Tf32x3Kn_64x64 = Tf32x3Tile<64, 64, 32, 2, 2, 4, 3, true>;    //  2x2  32x32  4  128   67584
using Tf32x3Kn_32x32 = Tf32x3Tile<32, 32, 32, 2, 2, 4, 4, true>;    //  2x2  16x16  4  128   34816

}  // namespace nova
