// Validation and benchmarks on the GPU box: a hand-written fast-path candidate for the seed demo's
// fusion group passes, the seed's own kernel passes through the full path (nvcc build timed), every
// adversarial fixture is refused or flagged with its reason, crashing and hanging kernels end only
// their worker, and the submit -> validated + benchmarked turnaround is measured. Each test skips
// with the reason where no GPU exists. Results are written to test-output/validation_gpu/.
#include <algorithm>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/doctor/doctor_report.h"
#include "core/env/settings.h"
#include "core/jobs/child_process_worker_runner.h"
#include "core/jobs/job_queue.h"
#include "core/jobs/worker_run_error.h"
#include "core/verify/candidate_evaluator.h"
#include "core/verify/evaluation_jobs.h"
#include "support/test_paths.h"

namespace nova {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

class ValidationGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    DoctorReport r;
    probe_cuda_driver(r);
    if (!r.has_gpu()) GTEST_SKIP() << "no CUDA device: " << r.driver_error;
    arch_ = r.gpus.front().arch();
    out_ = nova::test::test_output_dir() / "validation_gpu";
    fs::create_directories(out_);
    runner_ = std::make_unique<ChildProcessWorkerRunner>(Settings{}.resolved_python(), out_ / "work");
    compiler_ = std::make_unique<NvrtcCompiler>(out_ / "nvrtc");
    evaluator_ = std::make_unique<CandidateEvaluator>(*runner_, *compiler_, out_ / "work");
  }

  EvaluationRequest fast(const fs::path& plan, const std::string& label) {
    EvaluationRequest r;
    r.label = label;
    r.arch = arch_;
    r.reference = test::fixtures_dir() / "groups" / "conv2d_min_add_multiply_group0.py";
    r.candidate = CandidateEvaluator::load_candidate(plan);
    return r;
  }
  EvaluationRequest full(const fs::path& source, const std::string& label) {
    EvaluationRequest r;
    r.label = label;
    r.arch = arch_;
    r.reference = test::repo_examples_dir() / "conv2d_min_add_multiply.py";
    r.extension = source;
    return r;
  }
  WorkerCall call(int budget_s = 600) {
    WorkerCall c;
    c.budget = std::chrono::seconds(budget_s);
    return c;
  }
  void save(const std::string& name, const json& j) {
    std::ofstream(out_ / (name + ".json")) << j.dump(2) << "\n";
  }

  std::string arch_;
  fs::path out_;
  std::unique_ptr<ChildProcessWorkerRunner> runner_;
  std::unique_ptr<NvrtcCompiler> compiler_;
  std::unique_ptr<CandidateEvaluator> evaluator_;
};

std::string all_text(const ValidationResult& v) {
  std::string s = v.verdict + "\n";
  for (const auto& c : v.checks) s += c.name + ": " + c.detail + "\n";
  for (const auto& f : v.flags) s += "flag: " + f + "\n";
  for (const auto& t : v.trials)
    for (const auto& p : t.problems) s += "problem: " + p + "\n";
  return s;
}

// A number from a timings object (0 where absent).
double num(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}
// "name 0.12, name 0.34": the phases named in `order` first (nlohmann::json sorts keys), then the rest.
std::string phase_list(const json& phases, std::vector<std::string> order) {
  if (!phases.is_object()) return "?";
  for (const auto& [k, v] : phases.items())
    if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
  std::string s;
  for (const auto& k : order)
    if (phases.contains(k)) s += fmt::format("{}{} {:.2f}", s.empty() ? "" : ", ", k, num(phases, k.c_str()));
  return s;
}

// Where one submission's time went, from the jobs' elapsed times and the timings the build job,
// the GPU job, the evaluator and the worker report. `total_s` is submit to the GPU job's end.
json turnaround_breakdown(double total_s, const JobInfo& built, const JobInfo& done,
                          const ValidationResult& v) {
  const json& t = v.raw.value("timings", json::object());
  const json& process = t.value("process_s", json::object());
  json b;
  b["total_s"] = total_s;
  b["build_job_s"] = built.elapsed_s;
  b["build_job"] = built.result.value("timings", json::object());
  b["build_compile_ms"] = built.result.value("build", json::object()).value("compile_ms", 0.0);
  b["build_cache_hit"] = built.result.value("build", json::object()).value("cache_hit", false);
  // Everything outside the two jobs' running time: queueing, handing over, result files.
  b["wait_s"] = total_s - built.elapsed_s - done.elapsed_s;
  b["gpu_job_s"] = done.elapsed_s;
  b["gpu_job"] = done.result.value("timings", json::object());
  b["before_worker_s"] = num(t, "before_worker_s");  // static check, NVRTC (cache), candidate JSON
  b["before_worker"] = {{"static_check_s", num(t, "static_check_s")}, {"compile_s", num(t, "compile_s")}};
  b["worker_call_s"] = num(t, "worker_call_s");
  b["after_worker_s"] = done.elapsed_s - num(t, "before_worker_s") - num(t, "worker_call_s");
  // The worker call: handing the command to the standby (its wait for torch's import included),
  // the command's start (module import, arguments), its run, and the result out and the exit.
  b["worker_handoff_s"] = num(process, "received_at") - num(t, "worker_called_at");
  b["standby_ready_after_call_s"] = std::max(0.0, num(process, "ready_at") - num(t, "worker_called_at"));
  b["worker_start_s"] = num(process, "start");
  b["worker_run_s"] = num(process, "run");
  b["worker_exit_s"] = num(t, "worker_returned_at") - num(process, "finished_at");
  b["worker_process"] = process;
  b["validate_s"] = num(t.value("evaluate_phase_s", json::object()), "validate");
  b["validate_elapsed_s"] = v.raw.value("elapsed_s", 0.0);
  b["validate_phases"] = v.raw.value("phase_s", json::object());
  b["bench_s"] = num(t.value("evaluate_phase_s", json::object()), "bench");
  b["bench_phases"] = t.value("bench_phase_s", json::object());
  return b;
}

std::string describe_breakdown(const json& b) {
  return fmt::format(
      "{:.2f} s = build job {:.2f} (NVRTC {:.0f} ms{}) + wait {:.2f} + gpu job {:.2f} (C++ before "
      "worker {:.2f}, worker {:.2f}: handoff {:.2f} (standby ready {:.2f} s after the call), start {:.2f}, "
      "validate {:.2f} [{}], bench {:.2f} [{}], exit {:.2f}; C++ after worker {:.2f})",
      num(b, "total_s"), num(b, "build_job_s"), num(b, "build_compile_ms"),
      b.value("build_cache_hit", false) ? ", cache hit" : "", num(b, "wait_s"), num(b, "gpu_job_s"),
      num(b, "before_worker_s"), num(b, "worker_call_s"), num(b, "worker_handoff_s"),
      num(b, "standby_ready_after_call_s"), num(b, "worker_start_s"), num(b, "validate_s"),
      phase_list(b.value("validate_phases", json()),
                 {"cuda_init", "load_reference", "load_candidate", "trials", "streams", "second_shape",
                  "summary", "environment"}),
      num(b, "bench_s"),
      phase_list(b.value("bench_phases", json()),
                 {"setup", "load", "compile_baseline", "warm_up", "calibrate", "timing_cold", "timing_warm",
                  "timing_graph", "timing_wall", "verification", "energy", "summary"}),
      num(b, "worker_exit_s"), num(b, "after_worker_s"));
}

TEST_F(ValidationGpu, HandWrittenFastPathCandidatePassesAndSaysItIsLibraryBacked) {
  auto r = fast(test::fixtures_dir() / "candidates" / "conv_min_add_mul_epilogue.plan.json", "epilogue");
  ValidationResult v = evaluator_->validate(r, call());
  save("epilogue_validation", v);
  std::cout << all_text(v);
  ASSERT_TRUE(v.passed) << all_text(v);
  EXPECT_EQ(v.trials_passed(), 5);
  for (const auto& t : v.trials) {
    ASSERT_TRUE(t.max_abs_vs_fp64 && t.eager_max_abs_vs_fp64);
    EXPECT_TRUE(t.runs_agree);
  }
  EXPECT_NE(all_text(v).find("library-backed: calls aten.conv2d.default"), std::string::npos);
  // The plan is specialised to batch 128: the second batch size must say so.
  EXPECT_NE(all_text(v).find("specialised to shape [128, 3, 32, 32]"), std::string::npos) << all_text(v);
  EXPECT_FALSE(v.environment.value("gpu", "").empty());
}

TEST_F(ValidationGpu, TheSeedKernelPassesThroughTheFullPath) {
  // A byte-identical copy of shared/examples/reference_kernels/ (the GPU box may not carry shared/).
  auto seed = test::fixtures_dir() / "reference_kernels" / "conv2d_min_add_multiply.seed.cu";
  ASSERT_TRUE(fs::exists(seed)) << seed;
  ValidationResult v = evaluator_->validate(full(seed, "seed"), call());
  save("seed_validation", v);
  std::cout << all_text(v) << "full-path build + load: " << v.build_s << " s\n";
  RecordProperty("seed_build_s", std::to_string(v.build_s));
  EXPECT_TRUE(v.passed) << all_text(v);
  EXPECT_EQ(v.trials_passed(), 5);
  EXPECT_NE(all_text(v).find("correct at batch 256"), std::string::npos) << all_text(v);
}

TEST_F(ValidationGpu, EveryAdversarialFixtureIsRefusedOrFlaggedWithItsReason) {
  auto dir = test::fixtures_dir() / "adversarial";
  json battery = json::parse(std::ifstream(dir / "battery.json"));
  json report = json::array();
  for (const auto& f : battery["fixtures"]) {
    std::string name = f["name"];
    SCOPED_TRACE(name);
    EvaluationRequest r =
        f["path"] == "fast" ? fast(dir / (name + ".plan.json"), name) : full(dir / (name + ".ext.cu"), name);
    ValidationResult v = evaluator_->validate(r, call());
    std::string text = all_text(v);
    std::string expected = f["reason"];
    bool caught =
        f["caught_by"] == "flag"
            ? std::any_of(v.flags.begin(), v.flags.end(),
                          [&](const std::string& x) { return x.find(expected) != std::string::npos; })
            : !v.passed;
    EXPECT_TRUE(caught) << text;
    EXPECT_NE(text.find(expected), std::string::npos)
        << "expected the reason to mention '" << expected << "':\n"
        << text;
    if (f["caught_by"] == "static") EXPECT_EQ(v.verdict.rfind("refused:", 0), 0u) << text;
    std::cout << name << ": " << v.verdict << "\n";
    report.push_back({{"fixture", name}, {"caught", caught}, {"result", v}});
  }
  save("adversarial_battery", report);
}

TEST_F(ValidationGpu, SideStreamWorkIsCaughtAtRunTimeTooWhenStaticChecksAreBypassed) {
  auto r = full(test::fixtures_dir() / "adversarial" / "side_stream.ext.cu", "side_stream_runtime");
  r.enforce_static = false;
  ValidationResult v = evaluator_->validate(r, call());
  save("side_stream_runtime", v);
  std::cout << all_text(v);
  EXPECT_FALSE(v.raw.value("passed", true)) << all_text(v);
}

TEST_F(ValidationGpu, CrashingAndHangingKernelsEndOnlyTheirWorker) {
  auto plan = test::fixtures_dir() / "candidates" / "conv_min_add_mul_epilogue.plan.json";
  auto crash = fast(plan, "illegal_address");
  crash.candidate->cuda_source += R"(
extern "C" __global__ void boom(float* out) { *(volatile float*)(out - (1LL << 40)) = 1.0f; })";
  crash.candidate->plan.steps[1].kernel = "boom";
  crash.candidate->plan.steps[1].args = {crash.candidate->plan.steps[1].args[3]};
  ValidationResult c = evaluator_->validate(crash, call());
  std::cout << c.verdict << "\n";
  EXPECT_FALSE(c.passed);
  EXPECT_NE(c.verdict.find("illegal_address"), std::string::npos) << c.verdict;

  auto hang = fast(plan, "hang");
  hang.candidate->cuda_source += R"(
extern "C" __global__ void spin(float* out) { while (true) { out[0] += 1.0f; } })";
  hang.candidate->plan.steps[1].kernel = "spin";
  hang.candidate->plan.steps[1].args = {hang.candidate->plan.steps[1].args[3]};
  hang.trials = 1;
  auto t0 = std::chrono::steady_clock::now();
  ValidationResult h = evaluator_->validate(hang, call(30));
  std::cout << h.verdict << "\n";
  EXPECT_FALSE(h.passed);
  EXPECT_NE(h.verdict.find("watchdog"), std::string::npos) << h.verdict;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));

  ValidationResult ok = evaluator_->validate(fast(plan, "after_crashes"), call());
  EXPECT_TRUE(ok.passed) << all_text(ok);
}

TEST_F(ValidationGpu, TurnaroundFromSubmitToValidatedAndBenchmarked) {
  // As the studio does it: a CPU-lane build job, then one GPU-lane job that validates (5 trials)
  // and benchmarks (cold, warm, graph, wall; eager and torch.compile) in one worker, handed to a
  // standby worker started ahead.
  auto plan = test::fixtures_dir() / "candidates" / "conv_min_add_mul_epilogue.plan.json";
  runner_->keep_standby(true);  // as the studio does from its first evaluation on
  JobQueue queue({1, 2, out_ / "jobs"});
  EvaluationJobs jobs(queue, *evaluator_, *runner_, {});
  std::vector<double> seconds;
  json breakdown = json::array();
  BenchmarkResult last;
  for (int i = 0; i < 3; ++i) {
    auto r = fast(plan, "epilogue");
    r.seed = 1000 * (i + 1);
    auto t0 = std::chrono::steady_clock::now();
    auto built = queue.wait(jobs.submit(r), std::chrono::minutes(5));
    ASSERT_EQ(built->state, JobState::Succeeded) << built->error;
    auto done = queue.wait(built->result["gpu_job"].get<int>(), std::chrono::minutes(10));
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    ASSERT_EQ(done->state, JobState::Succeeded) << done->error;
    ValidationResult v = done->result["validation"].get<ValidationResult>();
    ASSERT_TRUE(v.passed) << all_text(v);
    ASSERT_TRUE(done->result.contains("benchmark")) << done->result.dump();
    last = done->result["benchmark"].get<BenchmarkResult>();
    breakdown.push_back(turnaround_breakdown(seconds.back(), *built, *done, v));
    std::cout << "submission " << i + 1 << ": " << describe_breakdown(breakdown.back()) << "\n";
  }
  save("epilogue_bench", last);
  std::sort(seconds.begin(), seconds.end());
  std::cout << "turnaround median " << seconds[1]
            << " s (5 trials + bench: cold, warm, graph; eager, compile)\n";
  RecordProperty("turnaround_median_s", std::to_string(seconds[1]));
  save("turnaround",
       {{"seconds", seconds}, {"median_s", seconds[1]}, {"target_s", 10.0}, {"breakdown", breakdown}});
  EXPECT_LE(seconds[1], 10.0);
  EXPECT_EQ(runner_->standby_runs(), 3);
  // What every benchmark result must carry.
  for (const char* variant : {"candidate", "eager", "compile"})
    for (const char* mode : {"cold", "warm", "graph", "wall"}) {
      const Measurement* m = last.find(variant, mode);
      ASSERT_NE(m, nullptr) << variant << " " << mode << " " << last.errors.dump();
      EXPECT_GE(m->summary.n, mode == std::string("cold") || mode == std::string("warm") ? 100 : 30);
      EXPECT_GT(m->summary.median, 0);
    }
  EXPECT_FALSE(last.environment.value("gpu", "").empty());
  EXPECT_FALSE(last.environment.value("driver", "").empty());
  EXPECT_FALSE(last.environment["clocks_seen"].empty());
  EXPECT_TRUE(last.energy["candidate"].value("available", false)) << last.energy.dump();
  for (const auto& v : last.verification) EXPECT_FALSE(v.value("hidden_work", true)) << v.dump();
  // Cold calls are led by a GPU spin that covers the host's time to queue each call, so launch
  // gaps never land inside the timed span: no variant's cold time is flagged as above its wall time.
  for (const char* variant : {"candidate", "eager", "compile"}) {
    EXPECT_GT(last.method["host_enqueue_us"].value(variant, 0.0), 0.0) << last.method.dump();
    EXPECT_GT(last.method["lead_us"].value(variant, 0.0), 0.0) << last.method.dump();
  }
  for (const auto& f : last.flags) EXPECT_EQ(f.find("above its wall time"), std::string::npos) << f;
  // The memory floor, timed alongside in every mode: a copy of the group's compulsory bytes (its
  // inputs read once, its output written once), never a baseline.
  const LaunchPlan lp = CandidateEvaluator::load_candidate(plan).plan;
  double plan_bytes = 0;
  for (const auto* tensors : {&lp.inputs, &lp.outputs})
    for (const auto& t : *tensors) {
      double n = t.dtype == "float32" ? 4 : 2;
      for (auto d : t.shape) n *= static_cast<double>(d);
      plan_bytes += n;
    }
  const json& ref = last.method["copy_reference"];
  ASSERT_TRUE(ref.is_object()) << last.method.dump();
  EXPECT_GE(ref.value("copy_bytes", 0.0), plan_bytes) << ref.dump();
  EXPECT_LE(ref.value("copy_bytes", 0.0), plan_bytes + 32) << ref.dump();
  ASSERT_EQ(last.copy_shares.size(), 4u) << json(last).dump();
  for (const auto& c : last.copy_shares) {
    EXPECT_GT(c.copy_us, 0) << c.mode;
    EXPECT_GT(c.share(), 0) << c.mode;
    std::cout << "memory floor (" << c.mode << "): copy " << c.copy_us << " us, candidate " << c.candidate_us
              << " us, share " << c.share() << "\n";
  }
  for (const auto& s : last.speedups) EXPECT_NE(s.baseline, BenchmarkResult::kCopyReference);
  // The cold mode's flush is the clean one by default: the 256 MB write, then 2x L2 read.
  EXPECT_EQ(last.l2_flush(), "clean") << last.method.dump();
  EXPECT_GE(last.method.value("l2_flush_read_bytes", 0.0), 2 * last.method.value("l2_bytes", 1.0))
      << last.method.dump();
  for (const auto& s : last.speedups)
    std::cout << "speedup over " << s.baseline << " (" << s.mode << "): " << s.value << "\n";
}

}  // namespace
}  // namespace nova
