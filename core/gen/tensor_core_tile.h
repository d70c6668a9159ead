#pragma once
// A tile configuration of kernels/nova/gemm_tf32x3.cuh (one of the aliases at its end), as the
// tensor-core rules (GemmTf32x3Rule, ConvTf32x3Rule) name it in the kernels they write and size their
// launches by it.
namespace nova {

struct TensorCoreTile {
  const char* alias;  // e.g. "nova::Tf32x3_128x64"
  int bm, bn, threads, min_blocks, smem_bytes;
};

}  // namespace nova
