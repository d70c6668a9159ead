#include "core/build/nvrtc_compiler.h"

#include <gtest/gtest.h>

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
