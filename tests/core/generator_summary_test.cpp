// The summary of a generator run on the GPU box (packaging/generator-summary.py), over the results
// recorded on the H200 in device run I (tests/fixtures/generator_run/h200_rev8: every shared example,
// generator revision 8, trimmed to what the summary reads). Per group it ships the fastest candidate
// that passed validation and ships; where none does, eager is kept; then the geometric means.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/worker/child_process.h"
#include "support/test_paths.h"

namespace nova {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::vector<std::string> kModels = {"conv2d_min_add_multiply", "matmul_scaling_residual_add",
                                          "swish_bias_clamp",        "softmax_rows",
                                          "layernorm_gelu",          "linear_relu_bias",
                                          "conv2d_relu_hardswish",   "mlp_block",
                                          "tiny_transformer_block"};

std::string summary_of(const fs::path& run, const std::vector<std::string>& models = kModels) {
  std::vector<std::string> argv = {
      "python3", (fs::path(NOVA_SOURCE_DIR) / "packaging/generator-summary.py").string(), run.string()};
  argv.insert(argv.end(), models.begin(), models.end());
  ProcessResult r = ChildProcess::run(argv, ChildProcess::minimal_env(), 60s);
  EXPECT_EQ(r.status.code, 0) << r.err;
  return r.out;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(GeneratorSummary, ShipsTheFastestCandidateThatPassedAndKeepsEagerWhereNoneDid) {
  std::string out = summary_of(test::fixtures_dir() / "generator_run" / "h200_rev8");
  // The tensor-core alternatives that passed are 1.36-1.68x faster than eager and ship...
  EXPECT_TRUE(has(out, "groups with alternatives (+ rows), the fastest that passed and ships")) << out;
  for (const char* chosen :
       {"linear_relu_bias g0: gemm_tf32x3", "mlp_block g1: gemm_tf32x3",
        "tiny_transformer_block g1: gemm_tf32x3", "tiny_transformer_block g5: gemm_tf32x3",
        "tiny_transformer_block g7: gemm_tf32x3"})
    EXPECT_TRUE(has(out, chosen)) << chosen << "\n" << out;
  // ...those that failed the check against eager (mlp g2, g3, tiny g8) are not timed, and their
  // primaries (eager's own library call) are declined there: eager is kept.
  EXPECT_TRUE(has(out, "mlp_block                       3+ gemm_tf32x3             FAIL")) << out;
  EXPECT_FALSE(has(out, "mlp_block g3: ")) << out;
  EXPECT_TRUE(has(out, "groups: 20 (declined: 5, ships: 15)")) << out;
  EXPECT_TRUE(has(out, "slowest group vs eager: cold 1.00x  wall 1.00x  (target: none below 1.00x: met)"))
      << out;
  EXPECT_TRUE(has(out, "geometric mean vs eager          cold 1.69x  wall 1.71x  (target 1.5x: met)")) << out;
  EXPECT_TRUE(has(out, "geometric mean vs torch.compile  cold 1.22x  wall 1.93x  (target 1.2x: met)")) << out;
  // Run I's benchmarks predate the copy reference: the memory-bound lines compare with 4.25 TB/s only.
  EXPECT_TRUE(has(out, "layernorm_gelu g0: 134.2 MB in 37.44 us cold (dirty L2)")) << out;
  EXPECT_FALSE(has(out, "alongside, a copy")) << out;
}

TEST(GeneratorSummary, ComparesMemoryBoundKernelsWithACopyOfTheSameBytesTimedAlongside) {
  // Device run N (tests/fixtures/generator_run/h200_copyref): the seed conv and the three
  // memory-bound examples, each benchmark with the copy reference in the same process.
  std::string out =
      summary_of(test::fixtures_dir() / "generator_run" / "h200_copyref",
                 {"conv2d_min_add_multiply", "swish_bias_clamp", "softmax_rows", "layernorm_gelu"});
  EXPECT_TRUE(
      has(out,
          "layernorm_gelu g0: 134.2 MB in 37.50 us cold (dirty L2) = 3.58 TB/s = 84.2% of copy (target 85%: "
          "missed)"))
      << out;
  EXPECT_TRUE(has(out,
                  "alongside, a copy of the same 134.2 MB: 36.77 us = 3.65 TB/s = 85.9% of 4.25; the kernel "
                  "at 98.0% of that copy's speed"))
      << out;
  EXPECT_TRUE(has(out,
                  "alongside, a copy of the same 268.4 MB: 69.41 us = 3.87 TB/s = 91.0% of 4.25; the kernel "
                  "at 102.7% of that copy's speed"))
      << out;
  // The seed conv is not one of the memory-bound groups: no bandwidth line for it.
  EXPECT_FALSE(has(out, "conv2d_min_add_multiply g0: ")) << out;
}

TEST(GeneratorSummary, ReadsTheColdFlushOfEachBenchmarkAndTheMemoryBoundGroupsAgainstTheirCopy) {
  // Device run S (ninth session): revision 8 over the 9 shared examples with the clean L2 flush, the
  // copy reference timed alongside every benchmark (tests/fixtures/generator_run/h200_clean).
  std::string out = summary_of(test::fixtures_dir() / "generator_run" / "h200_clean");
  EXPECT_TRUE(has(out, "groups: 20 (declined: 5, ships: 15)")) << out;
  EXPECT_TRUE(has(out, "slowest group vs eager: cold 1.00x  wall 1.00x  (target: none below 1.00x: met)"))
      << out;
  EXPECT_TRUE(has(out, "geometric mean vs eager          cold 1.70x  wall 1.67x  (target 1.5x: met)")) << out;
  EXPECT_TRUE(has(out, "geometric mean vs torch.compile  cold 1.22x  wall 1.94x  (target 1.2x: met)")) << out;
  EXPECT_TRUE(
      has(out,
          "layernorm_gelu g0: 134.2 MB in 33.66 us cold (clean L2) = 3.99 TB/s = 93.8% of copy (target "
          "85%: met); vs torch.compile cold 1.383x (target not slower: met)"))
      << out;
  EXPECT_TRUE(
      has(out,
          "alongside, a copy of the same 134.2 MB: 33.25 us = 4.04 TB/s = 95.0% of 4.25; the kernel at "
          "98.8% of that copy's speed"))
      << out;
  EXPECT_TRUE(has(out, "swish_bias_clamp g0: 268.4 MB in 64.93 us cold (clean L2)")) << out;
  EXPECT_TRUE(has(out, "vs torch.compile cold 1.003x (target not slower: met)")) << out;
  EXPECT_FALSE(has(out, "(dirty L2)")) << out;
}

TEST(GeneratorSummary, WithoutTheAlternativesTheGemmGroupsKeepEagerAndTheTargetIsMissed) {
  // The same run as if generated with --no-alternatives: only the primaries' results.
  fs::path run = test::scratch_dir("generator_summary_primaries") / "run";
  fs::remove_all(run);
  fs::copy(test::fixtures_dir() / "generator_run" / "h200_rev8", run, fs::copy_options::recursive);
  int removed = 0;
  for (const auto& e : fs::recursive_directory_iterator(run))
    if (e.path().filename().string().find(".gemm_tf32x3.") != std::string::npos) ++removed;
  for (const auto& m : kModels)
    for (const auto& e : fs::directory_iterator(run / m))
      if (e.path().filename().string().find(".gemm_tf32x3.") != std::string::npos) fs::remove(e.path());
  for (const auto& e : fs::directory_iterator(run))
    if (e.path().filename().string().find(".gemm_tf32x3.") != std::string::npos) fs::remove(e.path());
  EXPECT_EQ(removed, 8 + 8 + 5);  // 8 alternatives, their validations, and 5 benches (3 failed)
  std::string out = summary_of(run);
  EXPECT_FALSE(has(out, "groups with alternatives")) << out;
  // linear_relu_bias's library form ships (1.00x cold, 1.03x wall); the other linear groups keep eager.
  EXPECT_TRUE(has(out, "groups: 20 (declined: 9, ships: 11)")) << out;
  EXPECT_TRUE(has(out, "geometric mean vs eager          cold 1.53x  wall 1.53x  (target 1.5x: met)")) << out;
  EXPECT_TRUE(has(out, "geometric mean vs torch.compile  cold 1.11x  wall 1.77x  (target 1.2x: missed)"))
      << out;
}

}  // namespace
}  // namespace nova
