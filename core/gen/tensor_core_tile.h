#pragma once
// A tile configuration of kernels/nova/gemm_tf32x3.cuh (one of the aliases at its end), as the
// tensor-core rules (GemmTf32x3Rule, ConvTf32x3Rule) name it in the kernels they write and size their
// launches by it.
namespace nova {

struct TensorCoreTile {
  const char* alias;  // e.g. "nova::Tf32x3_128x64"
  int bm, bn, threads, min_blocks, smem_bytes;
};

// The GEMM tiles (GemmTf32x3Rule, GemmRowReduceRule). W [N, K] (k contiguous):
inline constexpr TensorCoreTile kTf32x3_128x64{"nova::Tf32x3_128x64", 128, 64, 128, 2, 98304};
inline constexpr TensorCoreTile kTf32x3_64x64{"nova::Tf32x3_64x64", 64, 64, 128, 3, 65536};
inline constexpr TensorCoreTile kTf32x3_32x32{"nova::Tf32x3_32x32", 32, 32, 128, 4, 32768};
// B [K, N] (n contiguous): the k-major W tile, loaded 16 bytes along n.
inline constexpr TensorCoreTile kTf32x3Kn_128x64{"nova::Tf32x3Kn_128x64", 128, 64, 128, 2, 100352};
inline constexpr TensorCoreTile kTf32x3Kn_64x64{"nova::Tf32x3Kn_64x64", 64, 64, 128, 3, 67584};
inline constexpr TensorCoreTile kTf32x3Kn_32x32{"nova::Tf32x3Kn_32x32", 32, 32, 128, 4, 34816};

}  // namespace nova
