#include "core/build/nvrtc_compiler.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "core/env/resource_paths.h"
#include "support/test_paths.h"

namespace nova {
namespace {

const char* kScale = R"(extern "C" __global__ void scale(const float* x, float* y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * s;
})";

TEST(NvrtcCompiler, CompilesForSm90WithoutAGpuAndCachesTheCubin) {
  NvrtcCompiler c(test::scratch_dir("nvrtc_cache"));
  NvrtcResult first = c.compile(kScale, "scale.cu", "sm_90");
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cache_hit);
  // A cubin is an ELF image.
  ASSERT_GE(first.cubin.size(), 4u);
  EXPECT_EQ(first.cubin.substr(1, 3), "ELF");
  NvrtcResult second = c.compile(kScale, "scale.cu", "sm_90");
  ASSERT_TRUE(second.ok);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.cubin, first.cubin);
  // Any change of source, options or architecture is a different entry.
  EXPECT_FALSE(c.compile(std::string(kScale) + "\n", "scale.cu", "sm_90").cache_hit);
  EXPECT_FALSE(c.compile(kScale, "scale.cu", "sm_80").cache_hit);
  EXPECT_FALSE(c.compile(kScale, "scale.cu", "sm_90", {"-DNOVA_X=1"}).cache_hit);
}

// The headers under kernels/ (common.cuh, the tensor-core tile, ...) decide a cubin as much as its source:
// each cache entry's key holds a digest of all of them, so a cubin built against older headers is not
// found after they change.
TEST(NvrtcCompiler, TheCacheKeyHoldsTheKernelsHeaders) {
  const auto dir = test::scratch_dir("nvrtc_cache_headers");
  NvrtcCompiler c(dir);
  ASSERT_TRUE(c.compile(kScale, "scale.cu", "sm_90").ok);
  std::size_t headers = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(kernels_dir()))
    if (e.is_regular_file()) ++headers;
  ASSERT_GE(headers, 5u);  // common.cuh, gemm_tf32x3.cuh, conv_gather.cuh, depthwise.cuh, batch_norm.cuh
  int keys = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".key") continue;
    ++keys;
    const std::string key = test::read_text(e.path());
    EXPECT_NE(key.find("\nheaders "), std::string::npos) << key;
    EXPECT_NE(key.find("(" + std::to_string(headers) + " files)"), std::string::npos) << key;
  }
  EXPECT_EQ(keys, 1);
}

TEST(NvrtcCompiler, ReportsErrorsWithFileAndLine) {
  NvrtcCompiler c(test::scratch_dir("nvrtc_cache_err"));
  NvrtcResult r = c.compile("extern \"C\" __global__ void k(float* y) {\n  y[0] = undefined_name;\n}\n",
                            "broken.cu", "sm_90");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("broken.cu(2)"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("undefined_name"), std::string::npos) << r.log;
}

}  // namespace
}  // namespace nova
