// Result types and the evaluator without a GPU: JSON round trips, speedups and review flags
// recomputed from raw samples, static refusals that never reach a worker, build failures, worker
// crashes turned into a plain verdict, and `nova validate` without a GPU.
#include <algorithm>
#include <atomic>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/doctor/doctor_report.h"
#include "core/jobs/worker_run_error.h"
#include "core/verify/benchmark_result.h"
#include "core/verify/candidate_evaluator.h"
#include "core/verify/evaluation_jobs.h"
#include "core/verify/validation_result.h"
#include "core/worker/child_process.h"
#include "support/test_paths.h"

namespace nova {
namespace {
using nlohmann::json;

// A WorkerRunner that answers from a function: what the worker would say, without a GPU.
class ScriptedRunner : public WorkerRunner {
 public:
  std::function<json(const std::string&, const json&)> answer;
  std::vector<std::pair<std::string, json>> calls;
  json run(const std::string& cmd, const json& args, const WorkerCall&) override {
    calls.emplace_back(cmd, args);
    return answer(cmd, args);
  }
};

json worker_validate_answer(bool passed) {
  json out = {
      {"index", 0},
      {"vs_eager",
       {{"ok", passed}, {"max_abs", passed ? 3e-6 : 57.9}, {"max_rel", passed ? json(1e-6) : json("inf")}}},
      {"vs_fp64", {{"ok", true}, {"max_abs", 2e-5}}},
      {"eager_vs_fp64", {{"ok", true}, {"max_abs", 1.5e-5}}},
      {"runs_agree", true}};
  json trials = json::array();
  for (int seed : {1234, 1235})
    trials.push_back({{"seed", seed},
                      {"ok", passed},
                      {"problems", passed ? json::array() : json::array({"input 0 was modified"})},
                      {"outputs", {out}}});
  return {{"passed", passed},
          {"trials", trials},
          {"checks", {{{"name", "trials"}, {"passed", passed}, {"detail", "x"}}}},
          {"flags", json::array()},
          {"warnings", {"output 0: the reference is nearly constant"}},
          {"failures", passed ? json::array() : json::array({"input 0 was modified by the candidate"})},
          {"environment", {{"gpu", "NVIDIA H200"}}},
          {"method", {{"trials", 2}}},
          {"load_s", 0.25}};
}

TEST(ValidationResult, MergesTheWorkersAnswerAndRoundTripsThroughJson) {
  ValidationResult v;
  v.candidate = "c3";
  v.merge_worker_result(worker_validate_answer(false));
  ASSERT_EQ(v.trials.size(), 2u);
  EXPECT_EQ(v.trials[0].max_abs_vs_eager, 57.9);
  EXPECT_TRUE(std::isinf(*v.trials[0].max_rel_vs_eager));  // "inf" from the worker
  EXPECT_EQ(v.trials[0].eager_max_abs_vs_fp64, 1.5e-5);
  EXPECT_EQ(v.trials_passed(), 0);
  EXPECT_EQ(v.environment["gpu"], "NVIDIA H200");
  EXPECT_EQ(v.warnings.size(), 1u);
  ValidationResult back = json(v).get<ValidationResult>();
  EXPECT_EQ(back, v);
}

json recorded_worker_answer(const std::string& name) {
  std::ifstream f(test::fixtures_dir() / "validation" / name);
  return json::parse(f);
}

// Recorded on the H200 (device run E, docs/perf-notes.md): mlp_block's down projection and
// residual add with cuBLAS mm and the bias moved into the epilogue. cuBLAS picked another kernel
// than eager's addmm: 7.5e-4 from eager at outputs near zero, while closer to float64 than eager.
TEST(ValidationResult, SaysWhenAFailingCandidateIsCloserToFloat64ThanEagerIs) {
  ValidationResult v;
  v.merge_worker_result(recorded_worker_answer("mlp_block_g3.mm_without_bias.h200.json"));
  EXPECT_FALSE(v.raw.value("passed", true));
  ASSERT_EQ(v.trials.size(), 5u);
  EXPECT_EQ(v.trials_passed(), 0);
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_NE(v.warnings[0].find("at least as close to the float64 reference as eager (max abs error 0.000161 "
                               "against eager's 0.000748)"),
            std::string::npos)
      << v.warnings[0];
  EXPECT_NE(v.warnings[0].find("still fails"), std::string::npos);

  // The same trials with one candidate further from float64 than eager: no such note.
  json w = recorded_worker_answer("mlp_block_g3.mm_without_bias.h200.json");
  w["trials"][2]["outputs"][0]["vs_fp64"]["max_abs"] = 2e-3;
  ValidationResult worse;
  worse.merge_worker_result(w);
  EXPECT_TRUE(worse.warnings.empty());

  // A failure that is not a tolerance (an input modified): no note either.
  w = recorded_worker_answer("mlp_block_g3.mm_without_bias.h200.json");
  w["trials"][0]["problems"].push_back("input 0 was modified by the candidate");
  ValidationResult modified;
  modified.merge_worker_result(w);
  EXPECT_TRUE(modified.warnings.empty());

  // The up projection (K = 768) with the same change ran eager's kernel: it passed, no note.
  ValidationResult passed;
  passed.merge_worker_result(recorded_worker_answer("mlp_block_g1.mm_without_bias.h200.json"));
  EXPECT_EQ(passed.trials_passed(), 5);
  EXPECT_TRUE(passed.warnings.empty());
}

// Medians of device run 11's matmul_scaling_residual_add group 0 (docs/perf-notes.md): on a slow
// host, eager's cold GPU time (163.39 us) was above its wall time per call (130.34 us).
TEST(BenchmarkResult, FlagsAVariantWhoseColdGpuTimeIsAboveItsWallTime) {
  json worker = {
      {"measurements",
       {{{"variant", "candidate"}, {"mode", "cold"}, {"samples", {11.52}}},
        {{"variant", "eager"}, {"mode", "cold"}, {"samples", {163.39}}},
        {{"variant", "compile"}, {"mode", "cold"}, {"samples", {199.36}}},
        {{"variant", "candidate"}, {"mode", "wall"}, {"metric", "wall_us"}, {"samples", {26.26}}},
        {{"variant", "eager"}, {"mode", "wall"}, {"metric", "wall_us"}, {"samples", {130.34}}},
        {{"variant", "compile"}, {"mode", "wall"}, {"metric", "wall_us"}, {"samples", {145.41}}}}}};
  BenchmarkResult b = worker.get<BenchmarkResult>();
  std::vector<std::string> gaps;
  for (const auto& f : b.flags)
    if (f.find("above its wall time") != std::string::npos) gaps.push_back(f.substr(0, f.find(':')));
  EXPECT_EQ(gaps, (std::vector<std::string>{"eager", "compile"}));  // not the candidate: 11.5 < 26.3
  EXPECT_NE(
      std::find(b.flags.begin(), b.flags.end(),
                "eager: cold GPU time (163.4 us) above its wall time per call (130.3 us): launch gaps while "
                "the host queued the call, or a large gain from a warm L2; compare wall times: review"),
      b.flags.end());
  // Recomputing again does not repeat the flags, and within 10% nothing is flagged.
  b.recompute();
  EXPECT_EQ(
      std::count_if(b.flags.begin(), b.flags.end(),
                    [](const std::string& f) { return f.find("above its wall time") != std::string::npos; }),
      2);
  b.measurements[1].samples = {143.0};  // eager cold 143.0 against wall 130.34: 1.097x
  b.measurements[2].samples = {100.0};
  b.recompute();
  for (const auto& f : b.flags) EXPECT_EQ(f.find("above its wall time"), std::string::npos) << f;
}

TEST(BenchmarkResult, RecomputesMediansSpeedupsAndFlagsImplausibleOnes) {
  json worker = {
      {"measurements",
       {{{"variant", "candidate"}, {"mode", "cold"}, {"samples", {2.0, 3.0, 2.5, 100.0}}},
        {{"variant", "eager"}, {"mode", "cold"}, {"samples", {40.0, 44.0, 42.0}}},
        {{"variant", "compile"}, {"mode", "cold"}, {"samples", {20.0, 21.0}}},
        {{"variant", "candidate"}, {"mode", "wall"}, {"metric", "wall_us"}, {"samples", {20.0}}},
        {{"variant", "eager"}, {"mode", "wall"}, {"metric", "wall_us"}, {"samples", {60.0}}}}},
      {"flags", {"speedup 99.0x over eager (cold) is above 10x: review", "candidate: hidden work"}},
      {"environment", {{"gpu", "NVIDIA H200"}, {"clocks_seen", json::array()}}},
      {"method", {{"modes", {"cold"}}}}};
  BenchmarkResult b = worker.get<BenchmarkResult>();
  const Measurement* c = b.find("candidate", "cold");
  ASSERT_NE(c, nullptr);
  EXPECT_DOUBLE_EQ(c->summary.median, 2.75);  // the 100 us outlier does not move it
  ASSERT_EQ(b.speedups.size(), 3u);
  EXPECT_EQ(b.speedups[0].baseline, "eager");
  EXPECT_NEAR(b.speedups[0].value, 42.0 / 2.75, 1e-12);
  EXPECT_NEAR(b.speedups[1].value, 20.5 / 2.75, 1e-12);
  EXPECT_NEAR(b.speedups[2].value, 3.0, 1e-12);  // wall
  // The worker's stale review flag is replaced by the recomputed one; other flags stay.
  EXPECT_EQ(b.flags, (std::vector<std::string>{"candidate: hidden work",
                                               "speedup 15.3x over eager (cold) is above 10x: review"}));
  EXPECT_EQ(b.modes(), (std::vector<std::string>{"cold", "wall"}));
  EXPECT_EQ(json(b).get<BenchmarkResult>(), b);
  EXPECT_EQ(json(b)["measurements"][0]["iqr"], c->summary.iqr);
}

// Device run N (eighth session, docs/perf-notes.md): layernorm_gelu's generated kernel with the copy
// reference timed alongside, as the worker answered (raw samples kept).
TEST(BenchmarkResult, TimesACopyOfTheSameBytesAlongsideAndTakesNoSpeedupOverIt) {
  std::ifstream f(test::fixtures_dir() / "bench" / "layernorm_gelu_g0.copy_reference.h200.json");
  const json recorded = json::parse(f);
  BenchmarkResult b = recorded.get<BenchmarkResult>();
  // Speedups over the two baselines only, in both modes; the reference is never one.
  ASSERT_EQ(b.speedups.size(), 4u);
  for (const auto& s : b.speedups) EXPECT_NE(s.baseline, BenchmarkResult::kCopyReference);
  EXPECT_TRUE(b.verdict.ships());
  // The copy moves what the group must: its input (32 x 512 x 1024 floats) and the norm's weight and
  // bias (1024 floats each) read once, its output written once.
  EXPECT_EQ(b.method["copy_reference"]["bytes_read"].get<double>(), 4.0 * (32 * 512 * 1024 + 2 * 1024));
  EXPECT_EQ(b.method["copy_reference"]["bytes_written"].get<double>(), 4.0 * 32 * 512 * 1024);
  ASSERT_EQ(b.copy_shares.size(), 2u);
  for (const auto& c : b.copy_shares) {
    EXPECT_EQ(c.bytes, 134225920.0) << c.mode;
    EXPECT_DOUBLE_EQ(c.copy_us, b.find("copy", c.mode)->summary.median) << c.mode;
    EXPECT_DOUBLE_EQ(c.candidate_us, b.find("candidate", c.mode)->summary.median) << c.mode;
  }
  // Recorded on the H200: the copy 36.77 us cold (3.65 TB/s), the kernel 37.50 us: 98% of its speed.
  EXPECT_EQ(b.copy_shares[0].mode, "cold");
  EXPECT_NEAR(b.copy_shares[0].copy_tb_per_s(), 3.65, 0.005);
  EXPECT_NEAR(b.copy_shares[0].share(), 0.980, 0.0005);
  EXPECT_EQ(b.copy_shares[1].mode, "wall");
  EXPECT_NEAR(b.copy_shares[1].share(), 0.964, 0.0005);
  EXPECT_EQ(json(b).get<BenchmarkResult>(), b);
  // A result from before the reference (no copy_reference in its method) has no shares.
  json old = recorded;
  old["method"].erase("copy_reference");
  EXPECT_TRUE(old.get<BenchmarkResult>().copy_shares.empty());
}

// Device run Q (ninth session, docs/perf-notes.md): the same layernorm_gelu kernel benchmarked cold
// twice on one H200, once with the L2 flush left clean (the default) and once dirty (the write alone).
TEST(BenchmarkResult, SaysHowTheColdModeLeftTheL2AndTheDirtyFlushCostsEveryVariantTime) {
  auto load = [](const char* name) {
    std::ifstream f(test::fixtures_dir() / "bench" / name);
    return json::parse(f).get<BenchmarkResult>();
  };
  const BenchmarkResult clean = load("layernorm_gelu_g0.flush_clean.h200.json");
  const BenchmarkResult dirty = load("layernorm_gelu_g0.flush_dirty.h200.json");
  EXPECT_EQ(clean.l2_flush(), "clean");
  EXPECT_EQ(dirty.l2_flush(), "dirty");
  // The clean flush reads 2x the L2 (60 MiB on the H200) after the 256 MB write.
  EXPECT_EQ(clean.method["l2_flush_read_bytes"].get<double>(), 2.0 * clean.method["l2_bytes"].get<double>());
  EXPECT_EQ(
      clean.cold_flush_sentence(),
      "before each cold call 268.4 MB were written, then 125.8 MB of another buffer read, so no line of "
      "the call's data was cached and no dirty line was left for it to write back");
  EXPECT_NE(dirty.cold_flush_sentence().find("leaving the L2 full of dirty lines"), std::string::npos);
  // Writing back the flush's dirty lines is time every variant paid inside its cold span: each is
  // faster after the clean flush (recorded: 2.3-3.6 us), while their wall times (no flush) agree.
  for (const char* variant : {"candidate", "eager", "compile", "copy"}) {
    double c = clean.find(variant, "cold")->summary.median, d = dirty.find(variant, "cold")->summary.median;
    EXPECT_GT(d - c, 2.0) << variant << ": clean " << c << " us, dirty " << d << " us";
  }
  for (const char* variant : {"candidate", "eager", "copy"})
    EXPECT_NEAR(clean.find(variant, "wall")->summary.median, dirty.find(variant, "wall")->summary.median,
                0.02 * dirty.find(variant, "wall")->summary.median)
        << variant;
  // Results from before the choice existed flushed with the write alone.
  std::ifstream f(test::fixtures_dir() / "bench" / "layernorm_gelu_g0.copy_reference.h200.json");
  json old = json::parse(f);
  ASSERT_FALSE(old["method"].contains("l2_flush"));
  EXPECT_EQ(old.get<BenchmarkResult>().l2_flush(), "dirty");
  // Without a cold mode there is no flush to describe.
  BenchmarkResult warm_only = clean;
  std::erase_if(warm_only.measurements, [](const Measurement& m) { return m.mode == "cold"; });
  EXPECT_EQ(warm_only.cold_flush_sentence(), "");
}

class EvaluatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::scratch_dir("evaluator");
    compiler_ = std::make_unique<NvrtcCompiler>(dir_ / "nvrtc");
    request_.label = "cand3";
    request_.reference = test::fixtures_dir() / "groups" / "conv2d_min_add_multiply_group0.py";
    request_.candidate = CandidateEvaluator::load_candidate(test::fixtures_dir() / "candidates" /
                                                            "conv_min_add_mul_epilogue.plan.json");
  }
  std::filesystem::path dir_;
  std::unique_ptr<NvrtcCompiler> compiler_;
  ScriptedRunner runner_;
  EvaluationRequest request_;
};

TEST_F(EvaluatorTest, CompilesThenHandsTheWorkerTheCubinAndReportsLibraryBacking) {
  runner_.answer = [](const std::string&, const json&) { return worker_validate_answer(true); };
  CandidateEvaluator e(runner_, *compiler_, dir_ / "work");
  ValidationResult v = e.validate(request_, {});
  ASSERT_EQ(runner_.calls.size(), 1u);
  EXPECT_EQ(runner_.calls[0].first, "validate");
  const json& args = runner_.calls[0].second;
  // Contents, not paths (docs/WORKER_PROTOCOL.md): the candidate inline, its cubin as base64.
  EXPECT_EQ(args["candidate"]["plan"], nlohmann::json(*request_.candidate)["plan"]);
  ASSERT_TRUE(args["cubin_b64"].is_string());
  EXPECT_GT(args["cubin_b64"].get<std::string>().size(), 100u);
  EXPECT_FALSE(args.contains("cubin"));
  EXPECT_EQ(args["trials"], 5);
  EXPECT_TRUE(v.passed) << v.verdict;
  EXPECT_EQ(v.verdict.rfind("passed 2 trials", 0), 0u) << v.verdict;
  EXPECT_EQ(v.flags, std::vector<std::string>{"library-backed: calls aten.conv2d.default through PyTorch"});
}

TEST_F(EvaluatorTest, AsksTheWorkerToTimeTheCopyReferenceUnlessTurnedOff) {
  // The worker's answer is device run N's recorded result for layernorm_gelu (copy timed alongside).
  std::ifstream f(test::fixtures_dir() / "bench" / "layernorm_gelu_g0.copy_reference.h200.json");
  const json recorded = json::parse(f);
  runner_.answer = [&](const std::string&, const json&) { return recorded; };
  CandidateEvaluator e(runner_, *compiler_, dir_ / "work");
  BenchmarkResult b = e.bench(request_, {});
  ASSERT_EQ(runner_.calls.size(), 1u);
  EXPECT_EQ(runner_.calls[0].first, "bench");
  EXPECT_EQ(runner_.calls[0].second["copy_reference"], true);
  EXPECT_EQ(runner_.calls[0].second["baselines"], json({"eager", "compile"}));
  EXPECT_EQ(b.copy_shares.size(), 2u);
  request_.copy_reference = false;  // `nova bench --no-copy-reference`
  e.bench(request_, {});
  ASSERT_EQ(runner_.calls.size(), 2u);
  EXPECT_EQ(runner_.calls[1].second["copy_reference"], false);
}

TEST_F(EvaluatorTest, AsksForACleanL2FlushUnlessTheDirtyOneIsChosen) {
  std::ifstream f(test::fixtures_dir() / "bench" / "layernorm_gelu_g0.flush_clean.h200.json");
  const json recorded = json::parse(f);
  runner_.answer = [&](const std::string&, const json&) { return recorded; };
  CandidateEvaluator e(runner_, *compiler_, dir_ / "work");
  EXPECT_EQ(e.bench(request_, {}).l2_flush(), "clean");
  EXPECT_EQ(runner_.calls.at(0).second["l2_flush"], "clean");
  request_.l2_flush = "dirty";  // `nova bench --l2-flush dirty`
  e.bench(request_, {});
  EXPECT_EQ(runner_.calls.at(1).second["l2_flush"], "dirty");
  // A validation with the benchmark (the studio's evaluate) carries the choice too.
  runner_.answer = [](const std::string&, const json&) {
    return json{{"validation", worker_validate_answer(true)}, {"benchmark", nullptr}};
  };
  e.evaluate(request_, {});
  EXPECT_EQ(runner_.calls.at(2).second["l2_flush"], "dirty");
}

TEST_F(EvaluatorTest, EvaluationsSharingAWorkFolderNeverShareTheirFiles) {
  // Two `nova validate` runs side by side use the same default work folder; one once loaded the
  // other's candidate JSON (same label "group0") and failed on a kernel name it did not define.
  runner_.answer = [](const std::string&, const json&) { return worker_validate_answer(true); };
  CandidateEvaluator first(runner_, *compiler_, dir_ / "shared");
  CandidateEvaluator second(runner_, *compiler_, dir_ / "shared");
  request_.group = 0;
  first.validate(request_, {});
  second.validate(request_, {});
  ASSERT_EQ(runner_.calls.size(), 2u);
  const json& a = runner_.calls[0].second;
  const json& b = runner_.calls[1].second;
  // The candidate travels inline, so no file of one can be read by the other; what the worker
  // writes goes to a work folder of each evaluation's own.
  EXPECT_TRUE(a["candidate"].is_object());
  EXPECT_NE(a["work_dir"], b["work_dir"]);
}

TEST_F(EvaluatorTest, ARefusedSourceNeverReachesTheWorker) {
  runner_.answer = [](const std::string&, const json&) -> json { throw std::logic_error("must not run"); };
  CandidateEvaluator e(runner_, *compiler_, dir_ / "work");
  EvaluationRequest r = request_;
  r.candidate.reset();
  r.extension = test::fixtures_dir() / "adversarial" / "pytorch_fallback.ext.cu";
  ValidationResult v = e.validate(r, {});
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(runner_.calls.empty());
  EXPECT_EQ(v.verdict.rfind("refused: try/catch fallback", 0), 0u) << v.verdict;
}

TEST_F(EvaluatorTest, ABuildErrorAndACrashBecomeOneSentenceVerdicts) {
  runner_.answer = [](const std::string&, const json&) -> json {
    throw WorkerRunError(WorkerRunError::Kind::Crashed,
                         "worker crashed: SIGSEGV while validating candidate cand3");
  };
  CandidateEvaluator e(runner_, *compiler_, dir_ / "work");
  ValidationResult crashed = e.validate(request_, {});
  EXPECT_FALSE(crashed.passed);
  EXPECT_EQ(crashed.verdict, "worker crashed: SIGSEGV while validating candidate cand3");
  EvaluationRequest broken = request_;
  broken.candidate->cuda_source += "\nthis is not C++;\n";
  ValidationResult v = e.validate(broken, {});
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.verdict.rfind("does not compile:", 0), 0u) << v.verdict;
  EXPECT_EQ(runner_.calls.size(), 1u);  // only the crash reached the runner
}

TEST_F(EvaluatorTest, WorkerFailureOfARuntimeCheatIsTheVerdict) {
  runner_.answer = [](const std::string&, const json&) { return worker_validate_answer(false); };
  CandidateEvaluator e(runner_, *compiler_, dir_ / "work");
  ValidationResult v = e.validate(request_, {});
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.verdict, "failed: input 0 was modified by the candidate");
}

TEST(NovaCli, ValidateAndBenchWithoutAGpuSayWhyAndExitThree) {
  DoctorReport r;
  probe_cuda_driver(r);
  if (r.has_gpu()) GTEST_SKIP() << "this machine has a GPU";
  auto fx = test::fixtures_dir();
  for (const char* sub : {"validate", "bench"}) {
    ProcessResult p = ChildProcess::run(
        {test::nova_binary().string(), sub, (fx / "groups" / "conv2d_min_add_multiply_group0.py").string(),
         "--candidate", (fx / "candidates" / "conv_min_add_mul_epilogue.plan.json").string()},
        ChildProcess::minimal_env(), std::chrono::seconds(30));
    EXPECT_TRUE(p.status.exited);
    EXPECT_EQ(p.status.code, 3) << p.err;
    EXPECT_NE(p.err.find("no CUDA GPU here"), std::string::npos) << p.err;
  }
}

}  // namespace
}  // namespace nova

namespace nova {
namespace {

TEST_F(EvaluatorTest, JobsBuildOnTheCpuLaneThenValidateAndBenchOnTheGpuLane) {
  std::atomic<int> bench_calls{0};
  runner_.answer = [&](const std::string& cmd, const json& args) -> json {
    EXPECT_EQ(cmd, "evaluate");  // validation and benchmark from one worker process
    EXPECT_EQ(args["modes"], json({"cold", "warm", "graph"}));
    ++bench_calls;
    json bench = {{"measurements",
                   {{{"variant", "candidate"}, {"mode", "cold"}, {"samples", {10.0, 11.0}}},
                    {{"variant", "eager"}, {"mode", "cold"}, {"samples", {40.0, 41.0}}}}}};
    return {{"validation", worker_validate_answer(true)}, {"benchmark", bench}};
  };
  CandidateEvaluator e(runner_, *compiler_, dir_ / "work");
  JobQueue q({1, 2, dir_ / "results"});
  EvaluationJobs jobs(q, e, runner_, {});
  int build = jobs.submit(request_);
  auto built = q.wait(build, std::chrono::seconds(10));
  ASSERT_EQ(built->state, JobState::Succeeded) << built->error;
  EXPECT_EQ(built->lane, JobLane::Cpu);
  int gpu = built->result["gpu_job"];
  auto done = q.wait(gpu, std::chrono::seconds(10));
  ASSERT_EQ(done->state, JobState::Succeeded) << done->error;
  EXPECT_EQ(done->lane, JobLane::Gpu);
  EXPECT_TRUE(done->result["validation"]["passed"]);
  BenchmarkResult b = done->result["benchmark"].get<BenchmarkResult>();
  ASSERT_EQ(b.speedups.size(), 1u);
  EXPECT_DOUBLE_EQ(b.speedups[0].value, 40.5 / 10.5);
  EXPECT_EQ(bench_calls.load(), 1);
  EXPECT_TRUE(std::filesystem::exists(done->result_file));
}

TEST_F(EvaluatorTest, ANewerRequestForTheCandidateSupersedesItsRunningGpuJob) {
  std::atomic<bool> release{false};
  std::atomic<int> validations{0};
  runner_.answer = [&](const std::string&, const json&) -> json {
    if (++validations == 1)
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return worker_validate_answer(true);
  };
  CandidateEvaluator e(runner_, *compiler_, dir_ / "work");
  JobQueue q({1, 2, {}});
  EvaluationJobs jobs(q, e, runner_, {std::chrono::minutes(1), std::chrono::minutes(1), false, 0});
  int first_gpu = q.wait(jobs.submit(request_), std::chrono::seconds(10))->result["gpu_job"];
  while (validations == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  int second_build = jobs.submit(request_);  // the user edited and resubmitted the candidate
  EXPECT_TRUE(q.info(first_gpu)->state == JobState::Running);
  release = true;
  EXPECT_EQ(q.wait(first_gpu, std::chrono::seconds(10))->state, JobState::Superseded);
  int second_gpu = q.wait(second_build, std::chrono::seconds(10))->result["gpu_job"];
  EXPECT_EQ(q.wait(second_gpu, std::chrono::seconds(10))->state, JobState::Succeeded);
}

TEST_F(EvaluatorTest, ARefusedCandidateIsRecordedWithoutTheGpuLane) {
  runner_.answer = [](const std::string&, const json&) -> json { throw std::logic_error("must not run"); };
  CandidateEvaluator e(runner_, *compiler_, dir_ / "work");
  JobQueue q({0, 1, {}});  // no GPU lane at all
  EvaluationJobs jobs(q, e, runner_, {});
  EvaluationRequest r = request_;
  r.candidate.reset();
  r.extension = test::fixtures_dir() / "adversarial" / "return_empty.ext.cu";
  int gpu = q.wait(jobs.submit(r), std::chrono::seconds(10))->result["gpu_job"];
  auto done = q.wait(gpu, std::chrono::seconds(10));
  ASSERT_EQ(done->state, JobState::Succeeded) << done->error;
  EXPECT_FALSE(done->result["validation"]["passed"]);
  EXPECT_NE(done->result["validation"]["verdict"].get<std::string>().find("never launched"),
            std::string::npos);
  EXPECT_TRUE(runner_.calls.empty());
}

}  // namespace
}  // namespace nova
