#include "ui/editor/cuda_lexer.h"

#include <QColor>
#include <QFont>
#include <QFontDatabase>

#include <string>

namespace nova::ui {

namespace {

constexpr const char* kCudaKeywords =
    "__global__ __device__ __host__ __shared__ __constant__ __managed__ __restrict__ __forceinline__ "
    "__noinline__ __launch_bounds__ __grid_constant__ __align__ __cluster_dims__";

std::string cuda_builtins() {
  std::string words =
      "threadIdx blockIdx blockDim gridDim warpSize dim3 __syncthreads __syncwarp __threadfence "
      "__threadfence_block __shfl_sync __shfl_up_sync __shfl_down_sync __shfl_xor_sync __ballot_sync "
      "__any_sync __all_sync __activemask __ldg __fmaf_rn __expf __logf __fdividef __popc __clz atomicAdd "
      "atomicSub atomicMax atomicMin atomicCAS atomicExch __half __half2 half half2 __nv_bfloat16 "
      "__nv_bfloat162 __float2half __half2float";
  for (const char* base : {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "longlong",
                           "ulonglong", "float", "double"})
    for (int n = 1; n <= 4; ++n) words += " " + std::string(base) + std::to_string(n);
  return words;
}

}  // namespace

CudaLexer::CudaLexer(QObject* parent) : QsciLexerCPP(parent) {
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  setDefaultFont(mono);
  setFont(mono);
  setColor(QColor("#1f3fa8"), Keyword);
  setColor(QColor("#00796b"), KeywordSet2);
  setColor(QColor("#6a737d"), Comment);
  setColor(QColor("#6a737d"), CommentLine);
  setColor(QColor("#a31515"), DoubleQuotedString);
  setColor(QColor("#098658"), Number);
  setColor(QColor("#8a4baf"), PreProcessor);
  QFont bold = mono;
  bold.setBold(true);
  setFont(bold, Keyword);
}

const char* CudaLexer::keywords(int set) const {
  if (set == 1) {
    static const std::string words = std::string(QsciLexerCPP::keywords(1)) + " " + kCudaKeywords;
    return words.c_str();
  }
  if (set == 2) {
    static const std::string words = cuda_builtins();
    return words.c_str();
  }
  return QsciLexerCPP::keywords(set);
}

}  // namespace nova::ui
