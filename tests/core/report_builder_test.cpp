// The client report (core/report) on projects built from results recorded on the H200: every figure
// names the stored result it came from, ratios and intervals are the recorded samples' (RatioInterval),
// energy only where the benchmark measured it, whole-model speedups only from a side-by-side check
// ("not measured" otherwise, Amdahl's estimate marked as one), and what the report cannot state is
// listed (different GPUs, a result without its environment); a project with nothing validated is
// refused; a report cancelled while rendering leaves nothing. Then `nova report` end to end with the real
// worker: HTML, PDF and JSON moved into place, the JSON valid against its schema (checked by the worker
// before rendering), the PDF's pages drawn to PNG with pdftoppm for a person to look at; bad input leaves
// nothing.
#include <atomic>
#include <deque>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/llm/llm_search_store.h"
#include "core/report/report_builder.h"
#include "core/report/report_error.h"
#include "core/report/report_writer.h"
#include "core/jobs/worker_run_error.h"
#include "core/session/project_session.h"
#include "core/verify/benchmark_verdict.h"
#include "core/verify/model_check_result.h"
#include "core/worker/child_process.h"
#include "support/graph_fixtures.h"
#include "support/recorded_results.h"
#include "support/test_paths.h"

using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace nova {
namespace {
using json = nlohmann::json;

json read_json(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("missing fixture " + p.string());
  return json::parse(in);
}
json recorded_validation() {
  return read_json(test::fixtures_dir() / "generator_run" / "h200_clean" / "matmul_scaling_residual_add_g0.validate.json");
}
// A full validation answer recorded on the H200 (mlp_block g1, with its trials, checks and method), as a
// pass.
json full_validation() { return test::recorded_validation(true); }
json recorded_bench() { return read_json(test::fixtures_dir() / "bench" / "matmul_scaling_residual_add_g0.h200.json"); }

// Answers each evaluate with the next recorded {validation, benchmark} pair; render_report, like a worker
// busy typesetting, until the call is cancelled.
class RecordedAnswers : public WorkerRunner {
 public:
  explicit RecordedAnswers(std::deque<json> answers) : answers_(std::move(answers)) {}
  std::atomic<bool> rendering{false};
  json run(const std::string& cmd, const json&, const WorkerCall& call) override {
    if (cmd == "render_report") {
      rendering = true;
      const auto until = std::chrono::steady_clock::now() + 60s;
      while (!call.cancel.cancelled() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
      throw WorkerRunError(WorkerRunError::Kind::Cancelled, "cancelled while rendering");
    }
    if (cmd != "evaluate" || answers_.empty()) throw std::runtime_error("unexpected command " + cmd);
    json a = answers_.front();
    answers_.pop_front();
    return a;
  }

 private:
  std::deque<json> answers_;
};

struct ReportFixture : ::testing::Test {
  fs::path dir = test::scratch_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::string stem = "matmul_scaling_residual_add";  // the shared example and its recorded graph
  fs::path model;
  std::unique_ptr<ProjectSession> session;
  RecordedAnswers* recorded = nullptr;
  std::vector<std::int64_t> versions;

  void SetUp() override {
    model = dir / (stem + ".py");
    fs::copy_file(test::shared_examples_dir() / (stem + ".py"), model);
  }
  // The recorded graph, the builtin generator's versions, and each answer evaluated on one version
  // (the primary first, then user edits of it).
  void build(std::deque<json> answers) {
    SessionOptions o;
    o.model = model;
    o.project = dir / "project";
    o.python = "python3";  // never started: the runner answers from recordings
    const std::size_t n = answers.size();
    auto runner = std::make_unique<RecordedAnswers>(std::move(answers));
    recorded = runner.get();
    session = std::make_unique<ProjectSession>(o, std::move(runner));
    ModelGraph graph = test::graph_fixture(stem);
    graph.model_path = model.string();
    session->import_graph(graph);
    JobInfo gen = session->wait(session->generate());
    ASSERT_EQ(gen.state, JobState::Succeeded) << gen.error;
    versions.push_back(gen.result["primary"][0].get<std::int64_t>());
    for (std::size_t i = 1; i < n; ++i)
      versions.push_back(session->store().add_user_edit(versions[0], session->store().version(versions[0]).source + "\n// edit " + std::to_string(i)));
    for (std::size_t i = 0; i < n; ++i) {
      JobInfo eval = session->wait(session->evaluate(versions[i]));
      ASSERT_EQ(eval.state, JobState::Succeeded) << eval.error;
    }
  }
  ReportData report() {
    return ReportBuilder::build(session->store(), {model.string(), session->model_unchanged(), "test", "", "2026-12-05T00:00:00Z"});
  }
  // The ids of the stored results of `version`, by kind.
  std::map<std::string, std::int64_t> result_ids(std::int64_t version) {
    std::map<std::string, std::int64_t> ids;
    for (const auto& r : session->store().results(version)) ids[r.kind] = r.id;
    return ids;
  }
};

json pair(json validation, json bench) { return {{"validation", std::move(validation)}, {"benchmark", std::move(bench)}}; }

// Every figure object (one with "text" and "missing") in `j`, with its path.
void figures(const json& j, const std::string& path, std::vector<std::pair<std::string, json>>& out) {
  if (j.is_object()) {
    if (j.contains("text") && j.contains("missing") && j.contains("value")) out.emplace_back(path, j);
    for (const auto& [k, v] : j.items()) figures(v, path + "/" + k, out);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) figures(j[i], path + "/" + std::to_string(i), out);
  }
}

TEST_F(ReportFixture, EveryFigureNamesTheStoredResultItCameFromOrSaysWhyItIsMissing) {
  build({pair(recorded_validation(), recorded_bench())});
  const ReportData data = report();
  const json j = data;
  const auto ids = result_ids(versions[0]);
  const std::string bench_source = fmt::format("result {}", ids.at("benchmark"));
  const std::set<std::string> stored = {fmt::format("result {}", ids.at("validation")), bench_source};
  std::vector<std::pair<std::string, json>> all;
  figures(j, "", all);
  ASSERT_GT(all.size(), 20u);
  int measured = 0;
  for (const auto& [path, f] : all) {
    if (f["value"].is_null()) {
      EXPECT_EQ(f["text"], "not measured") << path;
      EXPECT_FALSE(f["missing"].get<std::string>().empty()) << path;
      continue;
    }
    ++measured;
    const std::string source = f["source"];
    if (source.rfind("estimate from ", 0) == 0)
      EXPECT_EQ(source, "estimate from " + bench_source) << path;
    else
      EXPECT_TRUE(stored.count(source)) << path << " names " << source;
  }
  EXPECT_GT(measured, 10);
  // Every timing and every raw sample series names its result too.
  for (const auto& t : j["groups"][0]["timings"]) EXPECT_EQ(t["source"], bench_source);
  ASSERT_FALSE(j["samples"].empty());
  for (const auto& s : j["samples"]) {
    EXPECT_EQ(s["source"], bench_source);
    EXPECT_FALSE(s["samples"].empty());
  }
}

TEST_F(ReportFixture, GroupFiguresAreTheRecordedRunsRatiosIntervalsAndEnergy) {
  const json bench = recorded_bench();
  const json validation = full_validation();
  build({pair(validation, bench)});
  const ReportData data = report();
  ASSERT_EQ(data.groups.size(), 1u);
  const ReportGroup& g = data.groups[0];
  // The same figures as the stored benchmark's, read back typed (verdict recomputed from the samples).
  BenchmarkResult typed = bench.get<BenchmarkResult>();
  ASSERT_TRUE(typed.verdict.cold_vs_eager && typed.verdict.cold_interval);
  ASSERT_TRUE(g.cold_vs_eager.value && g.cold_vs_eager.low && g.cold_vs_eager.high);
  EXPECT_DOUBLE_EQ(*g.cold_vs_eager.value, *typed.verdict.cold_vs_eager);
  EXPECT_DOUBLE_EQ(*g.cold_vs_eager.low, typed.verdict.cold_interval->low);
  EXPECT_DOUBLE_EQ(*g.cold_vs_eager.high, typed.verdict.cold_interval->high);
  EXPECT_NE(g.cold_vs_eager.text.find(format_ratio(*g.cold_vs_eager.value)), std::string::npos) << g.cold_vs_eager.text;
  // Against torch.compile: the medians of this run.
  const Measurement* compile = typed.find("compile", "cold");
  const Measurement* cand = typed.find("candidate", "cold");
  ASSERT_TRUE(compile && cand && g.cold_vs_compile.value);
  EXPECT_DOUBLE_EQ(*g.cold_vs_compile.value, compile->summary.median / cand->summary.median);
  // Energy exactly as the benchmark measured it, per variant.
  ASSERT_TRUE(bench["energy"]["candidate"]["available"].get<bool>());
  ASSERT_TRUE(g.energy_version.value && g.energy_eager.value);
  EXPECT_DOUBLE_EQ(*g.energy_version.value, bench["energy"]["candidate"]["mj_per_call"].get<double>());
  EXPECT_DOUBLE_EQ(*g.energy_eager.value, bench["energy"]["eager"]["mj_per_call"].get<double>());
  // Correctness from the recorded validation.
  ASSERT_TRUE(g.correctness);
  EXPECT_GT(g.correctness->trials, 0);
  EXPECT_EQ(g.correctness->trials_passed, g.correctness->trials);
  EXPECT_FALSE(g.correctness->shapes_tested.empty());
  EXPECT_NE(g.correctness->tolerance.find("float32 0.0001"), std::string::npos) << g.correctness->tolerance;
  // The errors are the worker's aggregate over every trial and output.
  ASSERT_TRUE(g.correctness->max_abs_vs_eager.value && g.correctness->eager_max_abs_vs_fp64.value);
  EXPECT_DOUBLE_EQ(*g.correctness->max_abs_vs_eager.value, validation["max_errors"]["vs_eager_abs"].get<double>());
  EXPECT_DOUBLE_EQ(*g.correctness->eager_max_abs_vs_fp64.value, validation["max_errors"]["eager_vs_fp64_abs"].get<double>());
  EXPECT_EQ(g.correctness->source, fmt::format("result {}", result_ids(versions[0]).at("validation")));
  // The environment and method come from the stored results, not from this machine.
  auto fact = [&](const std::vector<ReportFact>& facts, const std::string& label) {
    for (const auto& f : facts)
      if (f.label == label) return f.text;
    return std::string("(absent)");
  };
  EXPECT_NE(fact(data.environment, "GPU").find("NVIDIA H200"), std::string::npos);
  EXPECT_EQ(fact(data.environment, "power limit"), "not recorded");  // the recorded results lack it
  EXPECT_NE(fact(data.method, "cold mode (L2 flush)").find("MB were written"), std::string::npos);
}

TEST_F(ReportFixture, WithoutAWholeModelCheckTheModelsSpeedupIsNotMeasuredAndTheEstimateSaysSo) {
  build({pair(recorded_validation(), recorded_bench())});
  const ReportData data = report();
  EXPECT_FALSE(data.headline.cold_vs_eager.value);
  EXPECT_EQ(data.headline.cold_vs_eager.text, "not measured");
  EXPECT_NE(data.headline.cold_vs_eager.missing.find("nova check-package"), std::string::npos);
  EXPECT_FALSE(data.headline.energy_before.value);
  ASSERT_TRUE(data.headline.amdahl_estimate.value);
  EXPECT_NE(data.headline.amdahl_estimate.text.find("estimate"), std::string::npos);
  EXPECT_EQ(data.headline.package, "not exported");
}

// layernorm_gelu's group, benchmarked with the copy reference alongside (device run N).
struct CopyReferenceReport : ReportFixture {
  CopyReferenceReport() { stem = "layernorm_gelu"; }
};

TEST_F(CopyReferenceReport, TheMemoryRoofAndTheBandwidthShareAreTheCopyMeasuredAlongside) {
  const json bench = read_json(test::fixtures_dir() / "bench" / "layernorm_gelu_g0.copy_reference.h200.json");
  build({pair(full_validation(), bench)});
  const ReportData data = report();
  const BenchmarkResult typed = bench.get<BenchmarkResult>();
  auto cold = std::find_if(typed.copy_shares.begin(), typed.copy_shares.end(), [](const CopyShare& c) { return c.mode == "cold"; });
  ASSERT_NE(cold, typed.copy_shares.end());
  const std::string source = fmt::format("result {}", result_ids(versions[0]).at("benchmark"));
  ASSERT_TRUE(data.roofline_bandwidth.value);
  EXPECT_DOUBLE_EQ(*data.roofline_bandwidth.value, cold->copy_tb_per_s() * 1e3);  // GB/s
  EXPECT_EQ(data.roofline_bandwidth.source, source);
  ASSERT_TRUE(data.groups.at(0).bandwidth_share.value);
  EXPECT_DOUBLE_EQ(*data.groups[0].bandwidth_share.value, cold->share());
  // One dot for the version and one for eager, at intake's FLOPs and bytes over the cold medians.
  ASSERT_EQ(data.groups[0].roofline.size(), 2u);
  EXPECT_DOUBLE_EQ(data.groups[0].roofline[0].seconds, typed.find("candidate", "cold")->summary.median * 1e-6);
  EXPECT_EQ(data.groups[0].roofline[1].label, "eager");
  // The peak line is theoretical, from the environment of the result it names: SMs x 128 FP32 lanes (sm_90)
  // x 2 x the highest SM clock seen (the H200's 132 SMs at 1980 MHz: 66.9 TFLOP/s), and the environment
  // section says how it was made.
  ASSERT_TRUE(data.roofline_peak_flop_rate.value) << data.roofline_peak_flop_rate.missing;
  const std::string peak_source = data.roofline_peak_flop_rate.source;
  ASSERT_EQ(peak_source.rfind("estimate from result ", 0), 0u) << peak_source;
  const std::int64_t from = std::stoll(peak_source.substr(std::string("estimate from result ").size()));
  json env;
  for (const auto& r : session->store().results(versions[0]))
    if (r.id == from) env = json::parse(r.json)["environment"];
  ASSERT_TRUE(env.is_object()) << peak_source;
  int clock = 0;
  for (const auto& c : env["clocks_seen"]) clock = std::max(clock, c["sm"].get<int>());
  EXPECT_EQ(env["capability"], "sm_90");
  EXPECT_DOUBLE_EQ(*data.roofline_peak_flop_rate.value, env["sm_count"].get<int>() * 128 * 2.0 * clock * 1e-3);
  EXPECT_NEAR(*data.roofline_peak_flop_rate.value, 66908.16, 0.01);
  EXPECT_EQ(data.roofline_peak_flop_rate.unit, "GFLOP/s");
  EXPECT_NE(data.roofline_peak_flop_rate.text.find("theoretical"), std::string::npos);
  auto fact = std::find_if(data.environment.begin(), data.environment.end(),
                           [](const ReportFact& f) { return f.label == "fp32 peak (theoretical)"; });
  ASSERT_NE(fact, data.environment.end());
  EXPECT_NE(fact->text.find("132 SMs x 128 FP32 lanes x 2 FLOP per FMA x 1980 MHz"), std::string::npos) << fact->text;
}

// A GPU whose lane count nova does not know, or an environment without its clocks: no peak line, and why.
TEST_F(CopyReferenceReport, NoPeakLineWithoutTheLaneCountOrTheClock) {
  json bench = read_json(test::fixtures_dir() / "bench" / "layernorm_gelu_g0.copy_reference.h200.json");
  json validation = full_validation();
  for (json* j : {&bench, &validation}) (*j)["environment"]["capability"] = "sm_61";
  build({pair(validation, bench)});
  const ReportData data = report();
  EXPECT_FALSE(data.roofline_peak_flop_rate.value);
  EXPECT_EQ(data.roofline_peak_flop_rate.missing, "no FP32 lane count known for sm_61");
}

// A whole-model check of this one-group model, made of the recorded H200 run's samples (eager, torch.compile
// and the shipped version timed interleaved in one process, as model_check.py times eager, compile and
// ModelNew): the first page states its ratios, from that check alone.
TEST_F(ReportFixture, AWholeModelCheckGivesTheFirstPagesSpeedupsAndTimes) {
  const json bench = recorded_bench();
  build({pair(recorded_validation(), bench)});
  json measurements = json::array();
  for (const auto& m : bench["measurements"]) {
    json c = m;
    if (m["variant"] == "candidate") c["variant"] = "optimized";
    measurements.push_back(c);
  }
  // Energy per call as model_check.py records it (bench._energy per variant): the run's readings.
  ASSERT_TRUE(bench["energy"]["eager"].value("available", false));
  const json energy = {{"eager", bench["energy"]["eager"]},
                       {"optimized", bench["energy"]["candidate"]},
                       {"compile", {{"available", false}, {"reason", "scripted: no reading"}}}};
  const json check = {{"package", "nova_matmul_scaling_residual_add"},
                      {"package_version", "0.1.0"},
                      {"validation", {{"passed", true}, {"calls", {{"group0", {{"kernel", 15}, {"fallback", 0}}}}}}},
                      {"benchmark", {{"measurements", measurements}, {"energy", energy}}},
                      {"environment", bench["environment"]},
                      {"elapsed_s", 12.5}};
  const std::int64_t id = session->store().add_model_check({0, "nova_matmul_scaling_residual_add", "/tmp/pkg", true, check.dump(), ""});
  const ReportData data = report();
  const ModelCheckResult typed = check.get<ModelCheckResult>();
  const ModelRatio* cold = typed.ratio("cold", "optimized", "eager");
  const ModelRatio* wall_compile = typed.ratio("wall", "optimized", "compile");
  ASSERT_TRUE(cold && cold->interval && wall_compile);
  const auto& h = data.headline;
  ASSERT_TRUE(h.cold_vs_eager.value && h.cold_vs_eager.low && h.wall_vs_compile.value);
  EXPECT_DOUBLE_EQ(*h.cold_vs_eager.value, cold->value);
  EXPECT_DOUBLE_EQ(*h.cold_vs_eager.low, cold->interval->low);
  EXPECT_DOUBLE_EQ(*h.wall_vs_compile.value, wall_compile->value);
  EXPECT_EQ(h.cold_vs_eager.source, fmt::format("model_check {}", id));
  ASSERT_TRUE(h.time_before.value && h.time_after.value);
  EXPECT_DOUBLE_EQ(*h.time_before.value, typed.measurements[1].summary.median);  // eager, cold
  EXPECT_EQ(h.package, "nova_matmul_scaling_residual_add 0.1.0");
  // Energy per call before and after, from the same check.
  ASSERT_TRUE(h.energy_before.value && h.energy_after.value);
  EXPECT_DOUBLE_EQ(*h.energy_before.value, bench["energy"]["eager"]["mj_per_call"].get<double>());
  EXPECT_DOUBLE_EQ(*h.energy_after.value, bench["energy"]["candidate"]["mj_per_call"].get<double>());
  EXPECT_EQ(h.energy_after.source, h.cold_vs_eager.source);
  EXPECT_EQ(typed.energy_missing("compile"), "NVML: scripted: no reading");
  // Its raw samples are in the appendix under its id.
  int series = 0;
  for (const auto& s : data.samples) series += s.source == h.cold_vs_eager.source;
  EXPECT_EQ(series, static_cast<int>(measurements.size()));
}

// The chart of the model's GPU time by group, before and after, comes from the profile the whole-model
// check stored (recorded on an H100 in session 23): the shipped group's time before and after, and the rest
// of each call as one stretch, so the bars hold the same parts; a check without a profile, or whose profile
// failed, leaves the split missing with the reason; a split whose instrumented capture ran far from the
// Model's own total is named among the report's problems.
TEST_F(ReportFixture, TheGpuTimeSplitComesFromTheProfileTheWholeModelCheckStored) {
  build({pair(recorded_validation(), recorded_bench())});
  json check = read_json(test::fixtures_dir() / "deliver" / "h100_session23" / "matmul_scaling_residual_add.check.json");
  const json split = check.at("gpu_split");
  const std::int64_t id = session->store().add_model_check({0, check["package"], "/tmp/pkg", true, check.dump(), ""});
  ReportData data = report();
  const ReportTimeSplit& t = data.time_split;
  EXPECT_EQ(t.source, fmt::format("model_check {}", id));
  EXPECT_TRUE(t.missing.empty()) << t.missing;
  EXPECT_NE(t.method.find("torch.profiler"), std::string::npos);
  ASSERT_TRUE(t.plain_before_us);
  EXPECT_DOUBLE_EQ(*t.plain_before_us, split["before_plain"]["total_us"].get<double>());
  ASSERT_EQ(t.sides.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const json& side = split[i == 0 ? "before" : "after"];
    SCOPED_TRACE(t.sides[i].label);
    EXPECT_DOUBLE_EQ(t.sides[i].total_us, side["total_us"].get<double>());
    ASSERT_EQ(t.sides[i].segments.size(), 2u);  // group 0, then the rest
    ASSERT_TRUE(t.sides[i].segments[0].group);
    EXPECT_EQ(*t.sides[i].segments[0].group, 0);
    EXPECT_DOUBLE_EQ(t.sides[i].segments[0].us, side["groups"]["0"].get<double>());
    EXPECT_FALSE(t.sides[i].segments[1].group);
    EXPECT_NEAR(t.sides[i].segments[0].us + t.sides[i].segments[1].us, t.sides[i].total_us, 1e-9);
  }
  EXPECT_LT(t.sides[1].total_us, t.sides[0].total_us);
  for (const auto& p : data.problems) EXPECT_EQ(p.find("time split"), std::string::npos) << p;
  const json written = data;
  EXPECT_EQ(written["time_split"]["sides"][0]["segments"][0]["group"], 0);

  // The instrumented capture far from the Model's own total: named, the split still drawn.
  check["gpu_split"]["before_plain"]["total_us"] = split["before"]["total_us"].get<double>() * 2;
  session->store().add_model_check({0, check["package"], "/tmp/pkg", true, check.dump(), ""});
  data = report();
  EXPECT_EQ(data.time_split.sides.size(), 2u);
  bool named = false;
  for (const auto& p : data.problems) named |= p.find("GPU time split") != std::string::npos && p.find("-50%") != std::string::npos;
  EXPECT_TRUE(named) << json(data.problems).dump();

  // A failed profile, then a check recorded before the profile existed: no split, and why.
  check["gpu_split"] = {{"error", "RuntimeError: CUPTI_ERROR_NOT_INITIALIZED"}};
  session->store().add_model_check({0, check["package"], "/tmp/pkg", true, check.dump(), ""});
  data = report();
  EXPECT_TRUE(data.time_split.sides.empty());
  EXPECT_NE(data.time_split.missing.find("the profile failed: RuntimeError: CUPTI_ERROR_NOT_INITIALIZED"), std::string::npos)
      << data.time_split.missing;
  check.erase("gpu_split");
  session->store().add_model_check({0, check["package"], "/tmp/pkg", true, check.dump(), ""});
  data = report();
  EXPECT_TRUE(data.time_split.sides.empty());
  EXPECT_NE(data.time_split.missing.find("recorded before nova check-package profiled the split"), std::string::npos)
      << data.time_split.missing;
}

TEST_F(ReportFixture, TheCostCountsTheGpuSecondsOfTheResultsAndTheLlmsTokensAndMoney) {
  build({pair(recorded_validation(), recorded_bench())});
  auto fact = [](const ReportData& d, const std::string& label) {
    for (const auto& f : d.cost)
      if (f.label == label) return f.text;
    return std::string("(absent)");
  };
  EXPECT_EQ(fact(report(), "LLM"), "no LLM was used");
  const double seconds = recorded_bench()["elapsed_s"].get<double>();
  EXPECT_NE(fact(report(), "GPU time").find("in the workers of 2 stored results"), std::string::npos);
  EXPECT_GE(std::stod(fact(report(), "GPU time")), seconds - 0.05);
  // Two requests of one search, as LlmSearch stores them.
  LlmSearchStore llm(session->project_dir());
  const std::int64_t search = llm.create_search({0, session->store().fusion_groups().at(0).id, "local", "qwen2.5-coder"});
  LlmCandidateRecord a;
  a.search_id = search;
  a.lineage = a.round = 1;
  a.outcome = "wrong";
  a.tokens_in = 1200;
  a.tokens_out = 800;
  a.cost_usd = 0.0125;
  llm.add_candidate(a);
  a.round = 2;
  a.tokens_in = 1500;
  a.tokens_out = 700;
  a.cost_usd = 0.0135;
  llm.add_candidate(a);
  const ReportData data = report();
  EXPECT_EQ(fact(data, "LLM tokens"), "2700 in, 1500 out over 2 requests of 1 search");
  EXPECT_EQ(fact(data, "LLM cost"), "0.03 USD (at the provider prices in the settings)");
}

TEST(ReportFigureText, ASlowerRatioIsCutNotRoundedUp) {
  EXPECT_EQ(ReportFigure::ratio(0.9999, 0.995, 0.99999, "result 1").text, "0.99x [0.99x, 0.99x]");
  EXPECT_EQ(ReportFigure::ratio(1.004, std::nullopt, std::nullopt, "result 1").text, "1.00x");
  EXPECT_EQ(ReportFigure::not_measured("why").text, "not measured");
}

TEST_F(ReportFixture, ResultsFromDifferentGpusAreNamedAndNoModelEstimateIsStated) {
  json other = recorded_bench();
  other["environment"]["gpu"] = "NVIDIA H100 80GB HBM3";
  build({pair(recorded_validation(), recorded_bench()), pair(recorded_validation(), other)});
  const ReportData data = report();
  ASSERT_FALSE(data.problems.empty());
  const std::string all = json(data.problems).dump();
  EXPECT_NE(all.find("different GPUs or torch versions"), std::string::npos) << all;
  EXPECT_NE(all.find("NVIDIA H100 80GB HBM3"), std::string::npos) << all;
  EXPECT_NE(all.find(fmt::format("result {}", result_ids(versions[1]).at("benchmark"))), std::string::npos) << all;
  EXPECT_FALSE(data.headline.amdahl_estimate.value);
}

TEST_F(ReportFixture, ResultsFromDifferentTorchVersionsAreNamed) {
  json other = recorded_bench();
  other["environment"]["torch"] = "2.10.0+cu128";
  build({pair(recorded_validation(), recorded_bench()), pair(recorded_validation(), other)});
  const std::string all = json(report().problems).dump();
  EXPECT_NE(all.find("NVIDIA H200 with torch 2.10.0+cu128"), std::string::npos) << all;
  EXPECT_NE(all.find("NVIDIA H200 with torch 2.11.0+cu130"), std::string::npos) << all;
}

TEST_F(ReportFixture, AResultWithoutItsEnvironmentIsNamed) {
  json bare = recorded_bench();
  bare.erase("environment");
  build({pair(recorded_validation(), bare)});
  const ReportData data = report();
  const std::string bench = fmt::format("result {}", result_ids(versions[0]).at("benchmark"));
  const std::string all = json(data.problems).dump();
  EXPECT_NE(all.find("no environment (GPU and torch version) is recorded in"), std::string::npos) << all;
  EXPECT_NE(all.find(bench), std::string::npos) << all;
}

// A version refused before any trial (here a user edit that makes a CUDA stream of its own) never reached a
// GPU: its stored validation has no environment and no figure, so the report does not list it among the
// results it cannot tie to a machine (session 22's matmul report did, for two refused LLM candidates).
TEST_F(ReportFixture, AVersionRefusedBeforeAnyTrialIsNotAResultWithoutItsEnvironment) {
  build({pair(recorded_validation(), recorded_bench())});
  const std::int64_t refused = session->store().add_user_edit(
      versions[0], session->store().version(versions[0]).source +
                       "\nstatic void own_stream() { cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); }\n");
  JobInfo eval = session->wait(session->evaluate(refused));
  ASSERT_EQ(eval.state, JobState::Succeeded) << eval.error;
  const auto results = session->store().results(refused);
  ASSERT_EQ(results.size(), 1u);
  ASSERT_EQ(results[0].kind, "validation");
  const ValidationResult stored = json::parse(results[0].json).get<ValidationResult>();
  ASSERT_FALSE(stored.passed) << stored.verdict;
  ASSERT_TRUE(stored.trials.empty());
  // (The recorded validation of the first version has no environment, and is named.)
  const std::string all = json(report().problems).dump();
  EXPECT_NE(all.find(fmt::format("recorded in result {}", result_ids(versions[0]).at("validation"))), std::string::npos) << all;
  EXPECT_EQ(all.find(fmt::format("result {}", results[0].id)), std::string::npos) << all;
}

TEST_F(ReportFixture, AProjectWithNothingValidatedIsRefusedWithWhatToDo) {
  build({});
  try {
    report();
    ADD_FAILURE() << "no ReportError";
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("no validated version"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nova optimize"), std::string::npos) << e.what();
  }
}

TEST_F(ReportFixture, AReportCancelledWhileRenderingLeavesNothing) {
  build({pair(recorded_validation(), recorded_bench())});
  const fs::path out = dir / "reports" / "client";
  const int job = ReportWriter::submit(*session, {out, {"html", "pdf", "json"}, model.string()});
  const auto until = std::chrono::steady_clock::now() + 30s;
  while (!recorded->rendering && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
  ASSERT_TRUE(recorded->rendering);
  EXPECT_TRUE(session->jobs().cancel(job));
  EXPECT_EQ(session->wait(job).state, JobState::Cancelled);
  EXPECT_FALSE(fs::exists(out));
  // Not even the temporary folder the JSON was written into.
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(out.parent_path())) left.push_back(e.path().filename().string());
  EXPECT_TRUE(left.empty()) << json(left).dump();
}

// --- nova report, end to end with the real worker ----------------------------------------------------

ProcessResult nova_report(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {test::nova_binary().string(), "report"};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildProcess::Env env = ChildProcess::minimal_env();
  env["NOVA_PROJECTS"] = (test::test_output_dir() / "cli-projects").string();
  return ChildProcess::run(argv, env, 300s);
}

TEST_F(ReportFixture, NovaReportWritesHtmlPdfAndJsonIntoPlaceAndThePdfRenders) {
  build({pair(recorded_validation(), recorded_bench())});
  const fs::path project = session->project_dir();
  session.reset();
  const fs::path out = dir / "out" / "report";
  ProcessResult r = nova_report({model.string(), "--project", project.string(), "--out", out.string()});
  ASSERT_EQ(r.status.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("report written to"), std::string::npos) << r.out;
  for (const char* name : {"report.json", "report.html", "report.pdf"}) EXPECT_TRUE(fs::is_regular_file(out / name)) << name;
  // Nothing else beside it (the temporary folder was renamed into place).
  std::vector<std::string> beside;
  for (const auto& e : fs::directory_iterator(out.parent_path())) beside.push_back(e.path().filename().string());
  EXPECT_EQ(beside, std::vector<std::string>{"report"});
  const json j = read_json(out / "report.json");
  EXPECT_EQ(j["groups"].size(), 1u);
  std::ifstream html(out / "report.html");
  std::stringstream page;
  page << html.rdbuf();
  EXPECT_NE(page.str().find("<svg"), std::string::npos);  // the charts are inlined
  EXPECT_NE(page.str().find(j["groups"][0]["speedups"]["cold_vs_eager"]["text"].get<std::string>()), std::string::npos);
  std::ifstream pdf(out / "report.pdf", std::ios::binary);
  std::string magic(5, '\0');
  pdf.read(magic.data(), 5);
  EXPECT_EQ(magic, "%PDF-");
  // Its pages as PNG, for a person to look at (build/test-output/report/).
  const fs::path pngs = test::test_output_dir() / "report";
  fs::create_directories(pngs);
  ProcessResult draw = ChildProcess::run({"pdftoppm", "-png", "-r", "60", (out / "report.pdf").string(), (pngs / "page").string()},
                                         ChildProcess::minimal_env(), 120s);
  ASSERT_EQ(draw.status.code, 0) << draw.err << " (pdftoppm: Debian poppler-utils, packaging/setup-deps.sh)";
  int pages = 0;
  for (const auto& e : fs::directory_iterator(pngs)) pages += e.path().extension() == ".png";
  EXPECT_GE(pages, 3);
}

TEST_F(ReportFixture, NovaReportRefusesBadInputAndLeavesNothing) {
  build({pair(recorded_validation(), recorded_bench())});
  const fs::path project = session->project_dir();
  session.reset();
  const fs::path out = dir / "full";
  fs::create_directories(out);
  std::ofstream(out / "keep.txt") << "x";
  ProcessResult r = nova_report({model.string(), "--project", project.string(), "--out", out.string()});
  EXPECT_EQ(r.status.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("is not empty"), std::string::npos) << r.err;
  r = nova_report({model.string(), "--project", project.string(), "--out", (dir / "new").string(), "--format", "html,docx"});
  EXPECT_EQ(r.status.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("unknown report form 'docx'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "new"));
  // JSON alone needs no worker.
  r = nova_report({model.string(), "--project", project.string(), "--out", (dir / "json").string(), "--format", "json"});
  ASSERT_EQ(r.status.code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::is_regular_file(dir / "json" / "report.json"));
  EXPECT_FALSE(fs::exists(dir / "json" / "report.html"));
}

}  // namespace
}  // namespace nova
