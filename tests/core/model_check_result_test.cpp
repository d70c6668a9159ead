// The whole-model check's typed result (core/verify/model_check_result.h): ratios and their 95%
// intervals recomputed from the raw samples, what is flagged for review (a large gap to the Amdahl
// estimate, kernels that never ran, torch.compile of ModelNew slower than ModelNew), and the JSON
// round trip the project stores. Also the package folder checks of `nova check-package`.
#include "core/verify/model_check_result.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/build/package_installer.h"
#include "core/cli/model_check_table.h"
#include "core/project/project_store.h"
#include "core/session/project_session.h"
#include "support/test_paths.h"

namespace nova {
namespace {
using nlohmann::json;

// n samples around `median` with a 1% spread (seeded).
std::vector<double> samples(double median, int n = 40, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> d(median, median * 0.01);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(d(rng));
  return out;
}

json measurement(const std::string& variant, const std::string& mode, double median, unsigned seed) {
  return {{"variant", variant}, {"mode", mode}, {"metric", mode == "wall" ? "wall_us" : "gpu_us"},
          {"samples", samples(median, 40, seed)}};
}

// What model_check.py answers, with the medians given per variant (cold, wall).
json answer(double amdahl, long kernel_calls) {
  json ms = json::array();
  unsigned seed = 1;
  for (const auto& [variant, cold, wall] : std::vector<std::tuple<std::string, double, double>>{
           {"eager", 100, 120}, {"compile", 80, 90}, {"optimized", 50, 60}, {"optimized+compile", 55, 58}}) {
    ms.push_back(measurement(variant, "cold", cold, seed++));
    ms.push_back(measurement(variant, "wall", wall, seed++));
  }
  return {{"package", "nova_demo"},
          {"package_version", "0.1.0"},
          {"manifest", {{"figures", {{"amdahl_vs_eager", amdahl}}}}},
          {"validation",
           {{"passed", true},
            {"trials", json::array({{{"seed", 1234}, {"ok", true}}})},
            {"flags", json::array()},
            {"failures", json::array()},
            {"calls", {{"group_0", {{"kernel", kernel_calls}, {"fallback", kernel_calls == 0 ? 6 : 0}}}}}}},
          {"benchmark", {{"measurements", ms}, {"errors", json::object()}, {"method", {{"interleaved", true}}}}},
          {"environment", {{"gpu", "test"}}},
          {"elapsed_s", 12.5}};
}

TEST(ModelCheckResult, RatiosAndIntervalsComeFromTheSamples) {
  ModelCheckResult r = answer(2.0, 6).get<ModelCheckResult>();
  const ModelRatio* cold = r.ratio("cold", "optimized", "eager");
  ASSERT_TRUE(cold && cold->interval);
  EXPECT_NEAR(cold->value, 2.0, 0.05);
  EXPECT_TRUE(cold->interval->above_one());
  EXPECT_TRUE(cold->interval->paired);
  const ModelRatio* wall = r.ratio("wall", "optimized", "compile");
  ASSERT_TRUE(wall);
  EXPECT_NEAR(wall->value, 1.5, 0.05);
  ASSERT_TRUE(r.amdahl_estimate);
  EXPECT_DOUBLE_EQ(*r.amdahl_estimate, 2.0);
  // Cold: torch.compile of ModelNew (55 us) is slower than ModelNew alone (50 us), beyond the noise.
  ASSERT_EQ(r.review.size(), 1u);
  EXPECT_NE(r.review[0].find("torch.compile of ModelNew is slower than ModelNew alone (cold"), std::string::npos)
      << r.review[0];
  // The stored form reads back the same.
  EXPECT_EQ(json(r).get<ModelCheckResult>(), r);
}

TEST(ModelCheckResult, AGapToTheEstimateAndKernelsThatNeverRanAreFlaggedWithTheCause) {
  ModelCheckResult r = answer(3.0, 0).get<ModelCheckResult>();
  bool gap = false, never = false, none = false;
  for (const auto& line : r.review) {
    gap = gap || (line.find("below the Amdahl estimate of 3.00x") != std::string::npos &&
                  line.find("likely causes") != std::string::npos);
    never = never || line.find("group_0 never ran its kernels (6 calls") != std::string::npos;
    none = none || line.find("no call ran the package's kernels") != std::string::npos;
  }
  EXPECT_TRUE(gap && never && none) << json(r.review).dump(2);
}

TEST(ModelCheckResult, AFailedValidationHasNoBenchmarkAndSaysWhy) {
  json a = answer(2.0, 6);
  a["validation"]["passed"] = false;
  a["validation"]["failures"] = {"output 0: max abs error 0.5 exceeds tolerance 0.0001"};
  a["benchmark"] = nullptr;
  ModelCheckResult r = a.get<ModelCheckResult>();
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(r.measurements.empty());
  EXPECT_TRUE(r.ratios.empty());
  EXPECT_EQ(r.failures.front(), "output 0: max abs error 0.5 exceeds tolerance 0.0001");
  EXPECT_EQ(json(r).get<ModelCheckResult>(), r);
}

TEST(ModelCheckResult, TheProjectStoresEachCheckAndReadsItBackTyped) {
  const auto dir = test::scratch_dir("model_check_store");
  ProjectStore store = ProjectStore::create(dir / "project");
  ModelCheckResult r = answer(2.0, 6).get<ModelCheckResult>();
  store.add_model_check({0, r.package, (dir / "pkg").string(), r.passed, json(r).dump(), ""});
  r.passed = false;
  store.add_model_check({0, r.package, (dir / "pkg").string(), r.passed, json(r).dump(), ""});
  auto records = store.model_checks();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_TRUE(records[0].passed);
  EXPECT_FALSE(records[1].passed);
  EXPECT_EQ(records[1].package, "nova_demo");
  EXPECT_FALSE(records[1].created_at.empty());
  EXPECT_EQ(json::parse(records[1].json).get<ModelCheckResult>(), r);
}

TEST(PackageCheckInput, APackageFolderIsRecognisedAndItsHashIgnoresBuildOutput) {
  const auto dir = test::scratch_dir("package_check_input");
  EXPECT_THROW(ProjectSession::package_name_in(dir / "missing"), std::invalid_argument);
  EXPECT_THROW(ProjectSession::package_name_in(dir), std::invalid_argument);
  EXPECT_THROW(PackageInstaller::content_hash(dir), std::runtime_error);
  std::filesystem::create_directories(dir / "nova_demo");
  std::ofstream(dir / "setup.py") << "from setuptools import setup\n";
  std::ofstream(dir / "nova_demo" / "package.json") << "{}";
  std::ofstream(dir / "nova_demo" / "_ops.py") << "# ops\n";
  EXPECT_EQ(ProjectSession::package_name_in(dir), "nova_demo");
  const std::string before = PackageInstaller::content_hash(dir);
  // What pip leaves behind does not change the package's identity; an edit of its sources does.
  std::filesystem::create_directories(dir / "build" / "temp");
  std::ofstream(dir / "build" / "temp" / "group_0.o") << "object";
  std::filesystem::create_directories(dir / "nova_demo.egg-info");
  std::ofstream(dir / "nova_demo.egg-info" / "PKG-INFO") << "x";
  std::ofstream(dir / "nova_demo" / "_C.cpython-311-x86_64-linux-gnu.so") << "lib";
  EXPECT_EQ(PackageInstaller::content_hash(dir), before);
  std::ofstream(dir / "nova_demo" / "_ops.py") << "# ops, edited\n";
  EXPECT_NE(PackageInstaller::content_hash(dir), before);
}


json read_recorded(const std::string& model) {
  const auto path = test::fixtures_dir() / "deliver" / "h200_session16" / (model + ".check.json");
  std::ifstream in(path);
  EXPECT_TRUE(in) << "missing fixture " << path;
  return in ? json::parse(in) : json::object();
}

// `nova check-package --out` on the H200 (device run of session 16, packaging/deliver-gpu.sh): six
// shared examples, each package built, validated and timed against eager and torch.compile.
TEST(ModelCheckResult, RecordedH200ChecksMatchTheAmdahlEstimateWhereTheKernelsRan) {
  for (const std::string model : {"mlp_block", "matmul_scaling_residual_add", "swish_bias_clamp", "softmax_rows",
                                  "layernorm_gelu"}) {
    SCOPED_TRACE(model);
    ModelCheckResult r = read_recorded(model).get<ModelCheckResult>();
    ASSERT_TRUE(r.passed);
    for (const auto& [op, c] : r.calls) EXPECT_TRUE(c.kernel > 0 && c.fallback == 0) << op;
    const ModelRatio* cold = r.ratio("cold", "optimized", "eager");
    ASSERT_TRUE(cold && cold->interval && r.amdahl_estimate);
    EXPECT_TRUE(cold->interval->above_one());
    // Where every group ran its kernels, the whole model's GPU time is what the groups predicted.
    EXPECT_NEAR(cold->value / *r.amdahl_estimate, 1.0, 0.05) << cold->text() << " vs " << *r.amdahl_estimate;
  }
}

TEST(ModelCheckResult, RecordedH200CheckWhoseKernelsNeverRanSaysWhy) {
  // conv2d_min_add_multiply: its group reads torch.tensor(constant_value), which export lifts as a
  // CPU constant; the shape guard (CUDA tensors only) sent every call to PyTorch.
  ModelCheckResult r = read_recorded("conv2d_min_add_multiply").get<ModelCheckResult>();
  const std::string review = json(r.review).dump();
  EXPECT_NE(review.find("group_0 never ran its kernels"), std::string::npos) << review;
  EXPECT_NE(review.find("below the Amdahl estimate"), std::string::npos) << review;
  EXPECT_FALSE(r.ratio("cold", "optimized", "eager")->interval->above_one());
}

TEST(ModelCheckResult, RecordedH200ChecksFasterOnTheGpuButSlowerOnTheHostAreExplained) {
  for (const std::string model : {"matmul_scaling_residual_add", "layernorm_gelu"}) {
    SCOPED_TRACE(model);
    ModelCheckResult r = read_recorded(model).get<ModelCheckResult>();
    const std::string review = json(r.review).dump();
    EXPECT_NE(review.find("faster on the GPU (cold"), std::string::npos) << review;
    EXPECT_NE(review.find("bound by host time"), std::string::npos) << review;
  }
  ModelCheckResult fast = read_recorded("mlp_block").get<ModelCheckResult>();
  EXPECT_EQ(json(fast.review).dump().find("bound by host time"), std::string::npos);
}

ModelCheckResult read_session18(const std::string& model) {
  const auto path = test::fixtures_dir() / "deliver" / "h100_session18" / (model + ".check.json");
  std::ifstream in(path);
  EXPECT_TRUE(in) << "missing fixture " << path;
  return (in ? json::parse(in) : json::object()).get<ModelCheckResult>();
}

// Session 18 on an H100 (packaging/gpu-session.sh): the two whole-model checks the lease reached.
// conv2d_min_add_multiply's kernels now run (the lifted 0-dim constant is moved to the inputs' device),
// and torch.compile of ModelNew no longer costs GPU time (one graph with the ops in it): its cold time is
// ModelNew's, within the noise or better.
TEST(ModelCheckResult, RecordedSession18ChecksRunTheKernelsAndCompiledModelNewKeepsTheirGpuTime) {
  for (const std::string model : {"conv2d_min_add_multiply", "matmul_scaling_residual_add"}) {
    SCOPED_TRACE(model);
    ModelCheckResult r = read_session18(model);
    ASSERT_TRUE(r.passed);
    EXPECT_EQ(r.environment.value("gpu", std::string()), "NVIDIA H100 80GB HBM3");
    ASSERT_FALSE(r.calls.empty());
    for (const auto& [op, c] : r.calls) EXPECT_TRUE(c.kernel > 0 && c.fallback == 0) << op;
    const ModelRatio* cold = r.ratio("cold", "optimized", "eager");
    ASSERT_TRUE(cold && cold->interval && r.amdahl_estimate);
    EXPECT_TRUE(cold->interval->above_one());
    EXPECT_NEAR(cold->value / *r.amdahl_estimate, 1.0, 0.15) << cold->text() << " vs " << *r.amdahl_estimate;
    const ModelRatio* compiled = r.ratio("cold", "optimized+compile", "optimized");
    ASSERT_TRUE(compiled && compiled->interval);
    EXPECT_GE(compiled->interval->high, 1.0) << compiled->text();
    // Host-bound at this size: faster on the GPU, slower per call, and the review says so.
    EXPECT_NE(json(r.review).dump().find("bound by host time"), std::string::npos);
  }
}

// Energy per call per variant (model_check.py's NVML readings) round-trips through the stored JSON; a
// variant without a reading says why, and a check recorded before energy was measured says that.
TEST(ModelCheckResult, EnergyPerCallRoundTripsAndAMissingReadingSaysWhy) {
  std::ifstream in(test::fixtures_dir() / "deliver" / "h100_session21" / "mlp_block.check.json");
  ASSERT_TRUE(in) << "missing fixture";
  json j = json::parse(in);
  const ModelCheckResult before = j.get<ModelCheckResult>();
  EXPECT_FALSE(before.energy_mj("eager"));
  EXPECT_EQ(before.energy_missing("eager"), "this check was recorded before nova check-package measured energy");
  j["benchmark"]["energy"] = {{"eager", {{"available", true}, {"mj_per_call", 412.5}, {"calls", 220}}},
                              {"optimized", {{"available", true}, {"mj_per_call", 268.0}, {"calls", 340}}},
                              {"compile", {{"available", false}, {"reason", "NVML has no energy counter for this GPU"}}}};
  const ModelCheckResult r = j.get<ModelCheckResult>();
  ASSERT_TRUE(r.energy_mj("eager") && r.energy_mj("optimized"));
  EXPECT_DOUBLE_EQ(*r.energy_mj("eager"), 412.5);
  EXPECT_DOUBLE_EQ(*r.energy_mj("optimized"), 268.0);
  EXPECT_FALSE(r.energy_mj("compile"));
  EXPECT_EQ(r.energy_missing("compile"), "NVML: NVML has no energy counter for this GPU");
  EXPECT_EQ(r.energy_missing("optimized+compile"), "no energy reading of optimized+compile");
  const ModelCheckResult back = json(r).get<ModelCheckResult>();
  EXPECT_EQ(back, r);
  EXPECT_DOUBLE_EQ(*back.energy_mj("optimized"), 268.0);
}

// The nine shared examples' whole-model checks of one recorded run (tests/fixtures/deliver/RUN): every
// group call ran the kernels, every model is faster than eager cold and wall beyond the noise, and the
// review does not call any of them host-bound. Returns the checks read, by model, and the geometric mean
// of each (mode, subject, baseline) ratio over the nine.
struct RecordedChecks {
  std::map<std::string, ModelCheckResult> by_model;
  std::map<std::tuple<std::string, std::string, std::string>, double> geomean;
};
RecordedChecks expect_every_shared_example_faster(const std::string& run) {
  RecordedChecks out;
  auto& log_sum = out.geomean;
  int n = 0;
  for (const std::string model : {"conv2d_min_add_multiply", "matmul_scaling_residual_add", "swish_bias_clamp",
                                  "softmax_rows", "layernorm_gelu", "linear_relu_bias", "conv2d_relu_hardswish",
                                  "mlp_block", "tiny_transformer_block"}) {
    SCOPED_TRACE(run + " " + model);
    const auto path = test::fixtures_dir() / "deliver" / run / (model + ".check.json");
    std::ifstream in(path);
    EXPECT_TRUE(in) << "missing fixture " << path;
    if (!in) continue;
    const ModelCheckResult& r = out.by_model[model] = json::parse(in).get<ModelCheckResult>();
    EXPECT_TRUE(r.passed);
    EXPECT_EQ(r.environment.value("gpu", std::string()), "NVIDIA H100 80GB HBM3");
    EXPECT_FALSE(r.calls.empty());
    for (const auto& [op, c] : r.calls) EXPECT_TRUE(c.kernel > 0 && c.fallback == 0) << op;
    for (const std::string mode : {"cold", "wall"}) {
      const ModelRatio* vs_eager = r.ratio(mode, "optimized", "eager");
      EXPECT_TRUE(vs_eager && vs_eager->interval && vs_eager->interval->above_one())
          << mode << " " << (vs_eager ? vs_eager->text() : "missing");
    }
    for (const auto& q : r.ratios) log_sum[{q.mode, q.subject, q.baseline}] += std::log(q.value);
    EXPECT_EQ(json(r.review).dump().find("bound by host time"), std::string::npos) << json(r.review).dump();
    ++n;
  }
  EXPECT_EQ(n, 9);
  for (auto& [key, sum] : log_sum) sum = std::exp(sum / std::max(n, 1));
  return out;
}

// Session 19 on an H100, with the package's lean host path (the guard decided at capture, the graph below
// autograd, the ops' twins without an autograd formula): every shared example's whole-model check. Every
// group call ran the kernels (tiny_transformer_block's attention group too, on a contiguous copy), every
// model is faster than eager cold and wall beyond the noise, and the wall geometric mean is >= 1.5x.
TEST(ModelCheckResult, RecordedSession19EverySharedExampleIsFasterThanEagerColdAndWall) {
  const auto geomean = expect_every_shared_example_faster("h100_session19").geomean;
  EXPECT_GE(geomean.at({"wall", "optimized", "eager"}), 1.5);
}

// Session 21 on an H100: the same checks in the one lease that also ran `nova optimize` over every model
// (packaging/gpu-session.sh), so the packages ship that run's selections. Issue #22's targets that the run
// meets: geometric means of at least 1.5x eager (wall) and 1.1x torch.compile; mlp_block and
// tiny_transformer_block each faster than torch.compile of the original, cold and wall. The one it does not
// meet is kept visible: torch.compile of ModelNew ties ModelNew on the GPU (cold) but is slower per call
// (wall) on every model, most on the two smallest (about 0.35x: torch.compile's own host cost per call
// against ModelNew's short host path), and each check's review says so.
TEST(ModelCheckResult, RecordedSession21MeetsTheWholeModelTargetsButCompiledModelNewCostsHostTime) {
  const RecordedChecks checks = expect_every_shared_example_faster("h100_session21");
  const auto& geomean = checks.geomean;
  EXPECT_GE(geomean.at({"wall", "optimized", "eager"}), 1.5);
  EXPECT_GE(geomean.at({"cold", "optimized", "compile"}), 1.1);
  EXPECT_GE(geomean.at({"wall", "optimized", "compile"}), 1.1);
  EXPECT_NEAR(geomean.at({"cold", "optimized+compile", "optimized"}), 1.0, 0.02);
  EXPECT_LT(geomean.at({"wall", "optimized+compile", "optimized"}), 1.0);
  for (const std::string model : {"mlp_block", "tiny_transformer_block"}) {
    SCOPED_TRACE(model);
    ASSERT_TRUE(checks.by_model.count(model));
    const ModelCheckResult& r = checks.by_model.at(model);
    for (const std::string mode : {"cold", "wall"}) {
      const ModelRatio* vs_compile = r.ratio(mode, "optimized", "compile");
      ASSERT_TRUE(vs_compile && vs_compile->interval);
      EXPECT_TRUE(vs_compile->interval->above_one()) << mode << " " << vs_compile->text();
    }
    const ModelRatio* compiled_wall = r.ratio("wall", "optimized+compile", "optimized");
    ASSERT_TRUE(compiled_wall && compiled_wall->interval);
    if (compiled_wall->interval->high < 1.0) {
      EXPECT_NE(json(r.review).dump().find("torch.compile of ModelNew is slower"), std::string::npos);
    }
  }
}

// Session 22 on an H100: the same nine checks with energy per call (NVML's energy counter over a loop of at
// least 0.3 s per variant), from the project stores of session 21 (matmul_scaling_residual_add ships the
// LLM search's v7 there, so its figures moved: 2.71x cold against 2.06x). Every variant has a reading;
// ModelNew takes less energy per call than eager on every model, and the eight models that ship the same
// versions as in session 21 repeat its cold ratio against eager within 2%.
TEST(ModelCheckResult, RecordedSession22MeasuresEnergyPerCallAndRepeatsSession21) {
  const RecordedChecks s22 = expect_every_shared_example_faster("h100_session22");
  const RecordedChecks s21 = expect_every_shared_example_faster("h100_session21");
  EXPECT_GE(s22.geomean.at({"wall", "optimized", "eager"}), 1.5);
  EXPECT_GE(s22.geomean.at({"cold", "optimized", "compile"}), 1.1);
  ASSERT_EQ(s22.by_model.size(), 9u);
  for (const auto& [model, r] : s22.by_model) {
    SCOPED_TRACE(model);
    for (const std::string variant : {"eager", "compile", "optimized", "optimized+compile"}) {
      const auto mj = r.energy_mj(variant);
      EXPECT_TRUE(mj && *mj > 0.0) << variant << ": " << r.energy_missing(variant);
    }
    ASSERT_TRUE(r.energy_mj("eager") && r.energy_mj("optimized"));
    EXPECT_LT(*r.energy_mj("optimized"), *r.energy_mj("eager"));
    if (model == "matmul_scaling_residual_add") continue;
    const ModelRatio* now = r.ratio("cold", "optimized", "eager");
    const ModelRatio* before = s21.by_model.at(model).ratio("cold", "optimized", "eager");
    ASSERT_TRUE(now && before);
    EXPECT_NEAR(now->value / before->value, 1.0, 0.02) << now->text() << " vs " << before->text();
  }
}

// A model's whole-model cold ratio against eager within `tolerance` of an earlier run's.
void expect_cold_repeats(const ModelCheckResult& now_check, const ModelCheckResult& then_check, double tolerance) {
  const ModelRatio* now = now_check.ratio("cold", "optimized", "eager");
  const ModelRatio* then = then_check.ratio("cold", "optimized", "eager");
  ASSERT_TRUE(now && then);
  EXPECT_NEAR(now->value / then->value, 1.0, tolerance) << now->text() << " vs " << then->text();
}

// Session 23 on an H100: the nine checks again, now with the GPU time split each check profiles
// (torch.profiler over 20 warm calls of the Model captured with each group's nodes in a named range, of the
// Model as it is, and of ModelNew). Every shipped group has time before and after; the bars add up (the
// groups plus the rest make the total); the ranges do not change what runs (the captured Model's total is
// within 5% of the Model's own); ModelNew's profiled total is below the Model's. The GPU side repeats
// session 22 (cold ratio against eager within 2%, the same versions ship); the host was slower per call
// this run (each variant's enqueue time 1.2-3.2x session 22's), which moves the wall figures, not the cold.
TEST(ModelCheckResult, RecordedSession23ProfilesTheGpuTimeSplitAndRepeatsSession22OnTheGpu) {
  const RecordedChecks s23 = expect_every_shared_example_faster("h100_session23");
  const RecordedChecks s22 = expect_every_shared_example_faster("h100_session22");
  ASSERT_EQ(s23.by_model.size(), 9u);
  for (const auto& [model, r] : s23.by_model) {
    SCOPED_TRACE(model);
    const json& split = r.gpu_split;
    ASSERT_TRUE(split.contains("before") && split.contains("after") && split.contains("before_plain"))
        << split.dump().substr(0, 300);
    EXPECT_EQ(split.value("iters", 0), 20);
    std::vector<int> shipped;
    for (const auto& g : r.manifest.at("groups"))
      if (g.value("ships", false)) shipped.push_back(g.at("id").get<int>());
    EXPECT_EQ(split.at("shipped_groups").get<std::vector<int>>(), shipped);
    for (const std::string side : {"before", "after", "before_plain"}) {
      const json& s = split.at(side);
      double sum = s.value("outside_us", 0.0);
      for (const auto& [g, us] : s.at("groups").items()) sum += us.get<double>();
      EXPECT_NEAR(sum, s.at("total_us").get<double>(), 1e-6 * s.at("total_us").get<double>()) << side;
    }
    const double before = split["before"]["total_us"], plain = split["before_plain"]["total_us"];
    const double after = split["after"]["total_us"];
    EXPECT_NEAR(before / plain, 1.0, 0.05);
    EXPECT_LT(after, plain);
    for (int g : shipped) {
      const std::string key = std::to_string(g);
      ASSERT_TRUE(split["before"]["groups"].contains(key) && split["after"]["groups"].contains(key)) << key;
      EXPECT_GT(split["after"]["groups"][key].get<double>(), 0.0) << key;
    }
    expect_cold_repeats(r, s22.by_model.at(model), 0.02);
  }
  // A check stores its split and reads it back unchanged.
  const ModelCheckResult& mlp = s23.by_model.at("mlp_block");
  EXPECT_EQ(json(mlp).get<ModelCheckResult>().gpu_split, mlp.gpu_split);
}

// The last line of a recorded client run of the package's pytest (deliver/SESSION/MODEL.pytest.txt) starts
// with `summary` and names no failure.
void expect_package_tests_passed(const std::string& session, const std::string& model, const std::string& summary) {
  SCOPED_TRACE(model);
  const auto path = test::fixtures_dir() / "deliver" / session / (model + ".pytest.txt");
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing fixture " << path;
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  EXPECT_EQ(last.rfind(summary, 0), 0u) << last;
  EXPECT_EQ(last.find("failed"), std::string::npos) << last;
}

// torch.compile of the optimized model is no slower than the optimized model alone, cold (a tie at worst).
void expect_compiled_ties_cold(const ModelCheckResult& r) {
  const ModelRatio* compiled = r.ratio("cold", "optimized+compile", "optimized");
  ASSERT_TRUE(compiled);
  EXPECT_GT(compiled->value, 0.98) << compiled->text();
}

// tiny_transformer_block and mlp_block are faster than torch.compile of the original, cold and wall, beyond the noise.
void expect_transformer_and_mlp_faster_than_compile(const RecordedChecks& checks) {
  for (const std::string model : {"tiny_transformer_block", "mlp_block"})
    for (const std::string mode : {"cold", "wall"}) {
      SCOPED_TRACE(model + " " + mode);
      const ModelRatio* vs_compile = checks.by_model.at(model).ratio(mode, "optimized", "compile");
      ASSERT_TRUE(vs_compile && vs_compile->interval);
      EXPECT_TRUE(vs_compile->interval->above_one()) << vs_compile->text();
    }
}

// The geometric means over the nine models of the optimized model against eager and torch.compile, cold and wall.
void expect_geomeans_at_least(const RecordedChecks& checks, double cold_eager, double wall_eager, double cold_compile,
                              double wall_compile) {
  EXPECT_GT(checks.geomean.at({"cold", "optimized", "eager"}), cold_eager);
  EXPECT_GT(checks.geomean.at({"wall", "optimized", "eager"}), wall_eager);
  EXPECT_GT(checks.geomean.at({"cold", "optimized", "compile"}), cold_compile);
  EXPECT_GT(checks.geomean.at({"wall", "optimized", "compile"}), wall_compile);
}

// The client's path for the three models of a session (fresh venv, pip install, the package's pytest), with the
// counts of sessions 27 on.
void expect_client_path_passed(const std::string& session) {
  for (const auto& [model, summary] : std::vector<std::pair<std::string, std::string>>{
           {"conv2d_min_add_multiply", "23 passed, "},
           {"mlp_block", "46 passed, 1 skipped in "},
           {"tiny_transformer_block", "78 passed, 1 skipped in "}})
    expect_package_tests_passed(session, model, summary);
}

// A recorded run of the nine whole models (deliver/RUN) against an earlier one: every model faster than eager,
// the geometric means at least 2.3x eager cold and wall, 1.4x torch.compile cold and 1.7x wall, tiny_transformer_block
// and mlp_block faster than torch.compile, each cold ratio within `cold_tolerance` of the earlier run's, and
// torch.compile of the optimized model tying it cold. Returns the run's checks.
RecordedChecks expect_run_repeats(const std::string& run, const std::string& earlier, double cold_tolerance) {
  RecordedChecks now = expect_every_shared_example_faster(run);
  const RecordedChecks before = expect_every_shared_example_faster(earlier);
  EXPECT_EQ(now.by_model.size(), 9u);
  expect_geomeans_at_least(now, 2.3, 2.3, 1.4, 1.7);
  expect_transformer_and_mlp_faster_than_compile(now);
  for (const auto& [model, r] : now.by_model) {
    SCOPED_TRACE(model);
    if (before.by_model.count(model)) expect_cold_repeats(r, before.by_model.at(model), cold_tolerance);
    expect_compiled_ties_cold(r);
  }
  return now;
}

// Session 24 (another H100 lease, the same stores): every shared example faster than eager, cold and wall,
// each cold ratio within 5% of session 23's (eight within 1%; matmul_scaling_residual_add 2.79x against
// 2.70x); torch.compile of the optimized model ties it cold.
TEST(ModelCheckResult, RecordedSession24RepeatsSession23OnTheGpu) {
  const RecordedChecks s24 = expect_every_shared_example_faster("h100_session24");
  const RecordedChecks s23 = expect_every_shared_example_faster("h100_session23");
  ASSERT_EQ(s24.by_model.size(), 9u);
  for (const auto& [model, r] : s24.by_model) {
    SCOPED_TRACE(model);
    expect_cold_repeats(r, s23.by_model.at(model), 0.05);
    expect_compiled_ties_cold(r);
  }
  for (const auto& [model, summary] : std::vector<std::pair<std::string, std::string>>{
           {"conv2d_min_add_multiply", "23 passed, "},
           {"mlp_block", "46 passed, 1 skipped in "},
           {"tiny_transformer_block", "70 passed, 1 skipped in "}})
    expect_package_tests_passed("h100_session24", model, summary);
}

// Session 27 (an H100, the shared examples optimized afresh by this build's builtin generator, no LLM version):
// every shared example faster than eager, cold and wall; over the nine 2.38x eager cold and 2.35x wall, 1.47x
// torch.compile cold. tiny_transformer_block, whose attention products now ship on tensor cores with staged
// stores, is faster than in session 24 (1.77x against 1.58x cold), and it and mlp_block are faster than
// torch.compile of the original on both sides. torch.compile of the optimized model ties it cold (0.99-1.01x).
// The client's path: the package's pytest passed in a fresh venv for the three models.
TEST(ModelCheckResult, RecordedSession27FreshStoresOnTheGpu) {
  const RecordedChecks s27 = expect_every_shared_example_faster("h100_session27");
  const RecordedChecks s24 = expect_every_shared_example_faster("h100_session24");
  ASSERT_EQ(s27.by_model.size(), 9u);
  expect_geomeans_at_least(s27, 2.3, 2.3, 1.4, 1.7);
  expect_transformer_and_mlp_faster_than_compile(s27);
  const ModelRatio* tiny = s27.by_model.at("tiny_transformer_block").ratio("cold", "optimized", "eager");
  const ModelRatio* tiny24 = s24.by_model.at("tiny_transformer_block").ratio("cold", "optimized", "eager");
  ASSERT_TRUE(tiny && tiny->interval && tiny24 && tiny24->interval);
  EXPECT_GT(tiny->interval->low, tiny24->interval->high) << tiny->text() << " against " << tiny24->text();
  for (const auto& [model, r] : s27.by_model) {
    SCOPED_TRACE(model);
    expect_compiled_ties_cold(r);
  }
  expect_client_path_passed("h100_session27");
}

// Session 29 (an H100, the shared examples optimized afresh by this build, after session 28's changes: the
// NaN-propagating warp max, atomic reference writes, the headers in the NVRTC cache key): the nine whole models
// repeat session 27 cold within 4% (matmul_scaling_residual_add 2.07x against 2.00x, the rest within 1%); over the
// nine 2.40x eager cold, 2.37x wall, 1.48x torch.compile cold, 1.85x wall. torch.compile of the optimized model
// still ties it cold (0.997-1.018x) and is slower in wall. The client's path: the package's pytest passed in a
// fresh venv for the three models, with the same counts as session 27.
TEST(ModelCheckResult, RecordedSession29RepeatsSession27OnTheCurrentBuild) {
  expect_run_repeats("h100_session29", "h100_session27", 0.04);
  expect_client_path_passed("h100_session29");
}

// The calls a wall round of a recorded check made back to back ("30 rounds of N back-to-back calls").
int wall_round_calls(const ModelCheckResult& r) {
  const std::string text = r.bench_method.value("wall", std::string());
  const auto of = text.find(" of ");
  return of == std::string::npos ? 0 : std::atoi(text.c_str() + of + 4);
}

// Session 33 (an H100, the shared examples optimized afresh, wall rounds of at least 10 calls and about 10 ms):
// the nine whole models repeat session 29 cold within 3%; over the nine 2.38x eager cold, 2.45x wall, 1.47x
// torch.compile cold, 1.79x wall. With rounds of 10 calls or more (session 29: 3 for mlp_block and
// tiny_transformer_block), torch.compile of the optimized model is within 2% of the optimized model in wall
// time for the seven models whose GPU time per call is 44 us or more (session 29: 0.95x for
// tiny_transformer_block, 0.72x for layernorm_gelu); the two whose call is about 12 us of GPU time stay far
// slower compiled (0.31x, 0.34x): torch.compile's own host time per call is about twice their GPU time. The
// client's path ran for all nine: a fresh venv, `pip install --no-build-isolation`, the package's pytest passed,
// its benchmark.py ran and wrote its ratios.
TEST(ModelCheckResult, RecordedSession33EverySharedExampleOnTheClientsPath) {
  const RecordedChecks s33 = expect_run_repeats("h100_session33", "h100_session29", 0.03);
  ASSERT_EQ(s33.by_model.size(), 9u);
  for (const auto& [model, r] : s33.by_model) {
    SCOPED_TRACE(model);
    EXPECT_GE(wall_round_calls(r), 10) << r.bench_method.dump();
    const ModelRatio* compiled = r.ratio("wall", "optimized+compile", "optimized");
    ASSERT_TRUE(compiled);
    const bool short_call = model == "conv2d_min_add_multiply" || model == "matmul_scaling_residual_add";
    if (short_call)
      EXPECT_LT(compiled->value, 0.5) << compiled->text();
    else
      EXPECT_GT(compiled->value, 0.98) << compiled->text();
  }
  EXPECT_EQ(wall_round_calls(expect_every_shared_example_faster("h100_session29").by_model.at("mlp_block")), 3);
  for (const auto& [model, summary] : std::vector<std::pair<std::string, std::string>>{
           {"conv2d_min_add_multiply", "23 passed, "},
           {"matmul_scaling_residual_add", "23 passed in "},
           {"swish_bias_clamp", "22 passed, 1 skipped in "},
           {"softmax_rows", "22 passed, 1 skipped in "},
           {"layernorm_gelu", "22 passed, 1 skipped in "},
           {"linear_relu_bias", "22 passed, 1 skipped in "},
           {"conv2d_relu_hardswish", "22 passed, 1 skipped in "},
           {"mlp_block", "46 passed, 1 skipped in "},
           {"tiny_transformer_block", "78 passed, 1 skipped in "}}) {
    expect_package_tests_passed("h100_session33", model, summary);
    // The package's own benchmark.py ran on the GPU and wrote each ratio against eager with its interval.
    const auto path = test::fixtures_dir() / "deliver" / "h100_session33" / (model + ".bench.json");
    std::ifstream in(path);
    ASSERT_TRUE(in) << "missing fixture " << path;
    const json bench = json::parse(in);
    for (const std::string key : {"optimized/eager/cold", "optimized/eager/wall"}) {
      const auto ratio = bench.at("ratios").at(key).get<std::vector<double>>();
      ASSERT_EQ(ratio.size(), 3u) << key;
      EXPECT_TRUE(ratio[1] <= ratio[0] && ratio[0] <= ratio[2]) << key;
      EXPECT_GT(ratio[1], 1.0) << model << " " << key;
    }
  }
}

// The client's path in session 23 (fresh venv, `pip install --no-build-isolation`, the package's own pytest):
// conv2d_relu_hardswish, whose conv weight gradient failed in session 22 on cuDNN's run-to-run spread, passes
// with that spread allowed, and so do mlp_block and tiny_transformer_block.
TEST(ModelCheckResult, RecordedSession23ClientPathPackageTestsPass) {
  for (const auto& [model, passed] : std::vector<std::pair<std::string, int>>{
           {"conv2d_relu_hardswish", 22}, {"mlp_block", 46}, {"tiny_transformer_block", 70}})
    expect_package_tests_passed("h100_session23", model, fmt::format("{} passed, 1 skipped in ", passed));
}

// What `nova check-package` prints of the split: each shipped group before and after, the rest of the call
// (tiny_transformer_block's groups 3 and 4 stay PyTorch), the totals, the Model's own total; a failed
// profile says why; a check without one prints nothing of it.
TEST(ModelCheckTable, PrintsTheGpuTimeSplitOfTheRecordedCheck) {
  const auto path = test::fixtures_dir() / "deliver" / "h100_session23" / "tiny_transformer_block.check.json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing fixture " << path;
  ModelCheckResult r = json::parse(in).get<ModelCheckResult>();
  const json& split = r.gpu_split;
  std::string text = ModelCheckTable::format(r);
  EXPECT_NE(text.find("GPU time per call by fusion group (torch.profiler, 20 warm calls; kernel durations)"), std::string::npos);
  EXPECT_NE(text.find(fmt::format("{:<48} {:>12.2f} {:>12.2f}", "group 8 (ships)", split["before"]["groups"]["8"].get<double>(),
                                  split["after"]["groups"]["8"].get<double>())),
            std::string::npos) << text;
  EXPECT_EQ(text.find("group 3 (ships)"), std::string::npos);
  const double rest_before = split["before"]["groups"]["3"].get<double>() + split["before"]["groups"]["4"].get<double>() +
                             split["before"]["outside_us"].get<double>();
  EXPECT_NE(text.find(fmt::format("{:<48} {:>12.2f} {:>12.2f}", "the rest (groups left to PyTorch, outside groups)",
                                  rest_before, split["after"]["outside_us"].get<double>())),
            std::string::npos) << text;
  EXPECT_NE(text.find(fmt::format("{:<48} {:>12.2f} {:>12.2f}", "total", split["before"]["total_us"].get<double>(),
                                  split["after"]["total_us"].get<double>())),
            std::string::npos) << text;
  r.gpu_split = {{"error", "RuntimeError: no CUPTI"}};
  EXPECT_NE(ModelCheckTable::format(r).find("GPU time by fusion group: not profiled: RuntimeError: no CUPTI"), std::string::npos);
  r.gpu_split = json::object();
  EXPECT_EQ(ModelCheckTable::format(r).find("GPU time"), std::string::npos);
}

}  // namespace
}  // namespace nova
