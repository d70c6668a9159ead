// kernelguard (core/llm/kernel_guard.h) run for real with the setup venv's Python, where
// packaging/requirements.txt installs it: a known hack is refused with its rule named, a plain kernel
// passes, and an interpreter without kernelguard says so instead of passing.
#include "core/llm/kernel_guard.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/env/resource_paths.h"
#include "support/test_paths.h"

namespace nova {
namespace {

TEST(LlmKernelGuard, AKnownHackIsRefusedWithItsRuleAndAPlainKernelPasses) {
  KernelGuard guard(default_python());
  KernelGuardVerdict hack = guard.check(
      "import builtins\nbuiltins.print = lambda *a, **k: None\n"
      "extern \"C\" __global__ void k(float* o) { o[0] = 1.f; }\n");
  ASSERT_TRUE(hack.ran) << hack.not_run;
  EXPECT_TRUE(hack.should_filter);
  EXPECT_EQ(hack.classification, "hacked");
  ASSERT_FALSE(hack.patterns.empty());
  EXPECT_NE(hack.patterns[0].find("FAKE_BENCHMARK_EMIT"), std::string::npos) << hack.patterns[0];
  EXPECT_NE(hack.describe().find("refused"), std::string::npos) << hack.describe();

  std::ifstream in(test::fixtures_dir() / "llm" / "faster.md");
  ASSERT_TRUE(in) << "missing fixture faster.md";
  std::stringstream text;
  text << in.rdbuf();
  KernelGuardVerdict plain = guard.check(text.str());
  ASSERT_TRUE(plain.ran) << plain.not_run;
  EXPECT_FALSE(plain.should_filter) << plain.describe();
}

TEST(LlmKernelGuard, AnInterpreterWithoutItSaysSo) {
  KernelGuardVerdict v = KernelGuard("/nonexistent/python3").check("__global__ void k() {}");
  EXPECT_FALSE(v.ran);
  EXPECT_FALSE(v.should_filter);
  EXPECT_NE(v.describe().find("kernelguard not run"), std::string::npos) << v.describe();
}

}  // namespace
}  // namespace nova
