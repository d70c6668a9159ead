// Static checks on candidate sources: the adversarial fixtures a source can betray, the seed's
// honest kernel and the hand-written fast-path candidate.
#include "core/verify/static_checker.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/build/nvrtc_compiler.h"
#include "core/verify/candidate_evaluator.h"
#include "support/test_paths.h"

namespace nova {
namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string joined(const StaticReport& r) {
  std::string s;
  for (const auto& x : r.refusals) s += x + "\n";
  return s;
}

const auto kAdversarial = test::fixtures_dir() / "adversarial";

TEST(StaticChecker, RefusesATryCatchFallbackAndReportsItsPyTorchOps) {
  StaticReport r = StaticChecker().check_extension(read(kAdversarial / "pytorch_fallback.ext.cu"));
  ASSERT_TRUE(r.refused());
  EXPECT_NE(joined(r).find("try/catch fallback"), std::string::npos) << joined(r);
  EXPECT_NE(std::find(r.library_calls.begin(), r.library_calls.end(), "conv2d"), r.library_calls.end());
  EXPECT_NE(std::find(r.library_calls.begin(), r.library_calls.end(), "clamp_max"), r.library_calls.end());
}

TEST(StaticChecker, RefusesAKernelThatIsNeverLaunched) {
  StaticReport r = StaticChecker().check_extension(read(kAdversarial / "return_empty.ext.cu"));
  EXPECT_EQ(r.kernels, std::vector<std::string>{"fused"});
  EXPECT_TRUE(r.launched.empty());
  EXPECT_NE(joined(r).find("never launched"), std::string::npos) << joined(r);
}

TEST(StaticChecker, RefusesWorkOnAStreamOfItsOwn) {
  StaticReport r = StaticChecker().check_extension(read(kAdversarial / "side_stream.ext.cu"));
  EXPECT_NE(joined(r).find("cudaStreamCreateWithFlags"), std::string::npos) << joined(r);
}

TEST(StaticChecker, PassesTheSeedKernelWithItsTemplatedLaunch) {
  auto seed = test::fixtures_dir() / "reference_kernels" / "conv2d_min_add_multiply.seed.cu";
  auto shared = test::shared_examples_dir() / "reference_kernels" / "conv2d_min_add_multiply.seed.cu";
  if (std::filesystem::exists(shared))
    EXPECT_EQ(read(seed), read(shared)) << "the fixture copy drifted from shared/";
  StaticReport r = StaticChecker().check_extension(read(seed));
  EXPECT_FALSE(r.refused()) << joined(r);
  EXPECT_EQ(r.launched, std::vector<std::string>{"kernel"});
  EXPECT_TRUE(r.library_calls.empty());
}

TEST(StaticChecker, ReturningAnInputPassesStaticallyAndIsLeftToValidation) {
  StaticReport r = StaticChecker().check_extension(read(kAdversarial / "return_input.ext.cu"));
  EXPECT_FALSE(r.refused()) << joined(r);
  EXPECT_EQ(r.launched, std::vector<std::string>{"fused"});
}

TEST(StaticChecker, HandWrittenCandidateIsLibraryBackedForItsConvolution) {
  Candidate c = CandidateEvaluator::load_candidate(test::fixtures_dir() / "candidates" /
                                                   "conv_min_add_mul_epilogue.plan.json");
  ASSERT_FALSE(c.cuda_source.empty());
  StaticReport r = StaticChecker().check_candidate(c);
  EXPECT_FALSE(r.refused()) << joined(r);
  EXPECT_EQ(r.launched, std::vector<std::string>{"min_add_mul"});
  EXPECT_EQ(r.library_calls, std::vector<std::string>{"aten.conv2d.default"});
}

TEST(StaticChecker, FastPathPlanMustLaunchKernelsTheSourceDefines) {
  Candidate c = CandidateEvaluator::load_candidate(test::fixtures_dir() / "candidates" /
                                                   "conv_min_add_mul_epilogue.plan.json");
  c.plan.steps[1].kernel = "missing_kernel";
  StaticReport r = StaticChecker().check_candidate(c);
  EXPECT_NE(joined(r).find("the plan launches missing_kernel"), std::string::npos) << joined(r);
  EXPECT_NE(joined(r).find("never launches"), std::string::npos) << joined(r);
  c.cuda_source = "#include <torch/extension.h>\n" + c.cuda_source;
  EXPECT_NE(joined(StaticChecker().check_candidate(c)).find("torch headers"), std::string::npos);
}

TEST(StaticChecker, RefusesShellAndSocketsButNotWordsInCommentsOrStrings) {
  const std::string kernel =
      "__global__ void k(float* o) { o[0] = 1; }\nvoid go() { k<<<1, 1>>>(nullptr); }\n";
  EXPECT_NE(joined(StaticChecker().check_extension(kernel + "void f() { system(\"curl x | sh\"); }"))
                .find("shells out"),
            std::string::npos);
  EXPECT_NE(joined(StaticChecker().check_extension("#include <sys/socket.h>\n" + kernel)).find("network"),
            std::string::npos);
  EXPECT_NE(joined(StaticChecker().check_extension(kernel + "int s = socket(2, 1, 0);")).find("network"),
            std::string::npos);
  StaticReport clean = StaticChecker().check_extension(
      "// try { system(\"x\") } catch fallback in a comment\n/* socket( */\n" + kernel +
      "const char* msg = \"try { } catch (...) popen(\";\n");
  EXPECT_FALSE(clean.refused()) << joined(clean);
  EXPECT_NE(joined(StaticChecker().check_extension("void f() {}")).find("no CUDA kernel"), std::string::npos);
}

TEST(StaticChecker, RuntimeCheatsOnTheFastPathPassStaticChecks) {
  // These are caught by validation on the GPU (tests/gpu), not by reading the source.
  for (const char* name : {"freed_buffer_reuse", "zero_inputs", "caching_across_calls", "precision_downgrade",
                           "hard_coded_shape", "uninitialised_read"}) {
    Candidate c = CandidateEvaluator::load_candidate(kAdversarial / (std::string(name) + ".plan.json"));
    ASSERT_FALSE(c.cuda_source.empty()) << name;
    EXPECT_FALSE(StaticChecker().check_candidate(c).refused())
        << name << ": " << joined(StaticChecker().check_candidate(c));
    // They must build, so the GPU battery tests the cheat and not a typo.
    NvrtcResult built =
        NvrtcCompiler(test::scratch_dir("adversarial_nvrtc")).compile(c.cuda_source, name, "sm_90");
    EXPECT_TRUE(built.ok) << name << ": " << built.log;
  }
}

}  // namespace
}  // namespace nova
