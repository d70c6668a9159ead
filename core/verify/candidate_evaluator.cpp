#include "core/verify/candidate_evaluator.h"

#include <unistd.h>
#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/jobs/worker_run_error.h"
#include "core/worker/base64.h"

namespace nova {
namespace {
std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string first_error_line(const std::string& log) {
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line))
    if (line.find("error") != std::string::npos) return line;
  return log.substr(0, log.find('\n'));
}

std::string join(const std::vector<std::string>& v, const char* sep = "; ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
// Wall-clock seconds since the epoch: comparable with the worker's time.time().
double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}
// The worker's benchmark arguments, the same for `bench` and for `evaluate`'s benchmark.
void add_bench_args(const EvaluationRequest& r, nlohmann::json& args) {
  args["modes"] = r.modes;
  args["baselines"] = r.baselines;
  args["copy_reference"] = r.copy_reference;
  args["l2_flush"] = r.l2_flush;
}

}  // namespace

Candidate CandidateEvaluator::load_candidate(const std::filesystem::path& path) {
  Candidate c = nlohmann::json::parse(read_file(path)).get<Candidate>();
  if (c.cuda_source.empty()) {
    // A plan kept beside its device code: NAME.plan.json + NAME.cu.
    std::string name = path.filename().string();
    auto stem = name.substr(0, name.find('.'));
    auto cu = path.parent_path() / (stem + ".cu");
    if (std::filesystem::exists(cu)) c.cuda_source = read_file(cu);
  }
  return c;
}

CandidateEvaluator::CandidateEvaluator(WorkerRunner& runner, const NvrtcCompiler& compiler,
                                       std::filesystem::path work_dir)
    : runner_(runner), compiler_(compiler), work_dir_(std::move(work_dir)) {
  std::filesystem::create_directories(work_dir_);
}

StaticReport CandidateEvaluator::static_check(const EvaluationRequest& r) const {
  StaticChecker checker;
  if (r.candidate) return checker.check_candidate(*r.candidate);
  if (!r.extension.empty()) return checker.check_extension(read_file(r.extension));
  StaticReport none;
  none.refusals.push_back(
      "no candidate: give a candidate JSON (fast path) or an extension source (full path)");
  return none;
}

std::string CandidateEvaluator::read_extension(const EvaluationRequest& r) const { return read_file(r.extension); }

NvrtcResult CandidateEvaluator::compile(const EvaluationRequest& r) const {
  if (!r.candidate) throw std::logic_error("compile: a full-path candidate is built by nvcc in the worker");
  return compiler_.compile(r.candidate->cuda_source, r.label + ".cu", r.arch, r.candidate->nvrtc_options);
}

std::optional<nlohmann::json> CandidateEvaluator::prepare(const EvaluationRequest& r, double& build_s,
                                                          std::string& why) {
  // The request carries contents, not paths on this machine (docs/WORKER_PROTOCOL.md): the
  // reference or model source, the candidate JSON and its cubin (base64), or the extension source.
  nlohmann::json args = {{"label", r.label}, {"seed", r.seed}};
  // Files the worker writes for this one evaluation go to a folder of its own: two `nova validate`
  // processes sharing the default work folder (or two jobs of one studio) must never read each other's.
  static std::atomic<int> evaluations{0};
  const auto scratch = work_dir_ / fmt::format("eval-{}-{}", getpid(), ++evaluations);
  std::filesystem::create_directories(scratch);
  args["work_dir"] = scratch.string();
  const std::string reference = std::filesystem::absolute(r.reference).string();
  if (r.group) {  // the worker captures the model and takes the group's functional source
    args["model_source"] = read_file(r.reference);
    args["model_name"] = reference;
    args["group"] = *r.group;
  } else {
    args["reference_source"] = read_file(r.reference);
    args["reference_name"] = reference;
  }
  if (r.candidate) {
    NvrtcResult built = r.built ? *r.built : compile(r);
    build_s += built.compile_ms / 1e3;
    if (!built.ok) {
      why = "does not compile: " + first_error_line(built.log);
      return std::nullopt;
    }
    args["candidate"] = nlohmann::json(*r.candidate);
    args["cubin_b64"] = base64_encode(read_file(built.cubin_path));
  } else {
    args["extension_source"] = read_file(r.extension);
    args["extension_name"] = std::filesystem::absolute(r.extension).string();
    args["build_dir"] = (work_dir_ / "extensions").string();
    args["arch"] = r.arch;
  }
  return args;
}

ValidationResult CandidateEvaluator::validate(const EvaluationRequest& r, WorkerCall call) {
  return run_validation(r, std::move(call), nullptr);
}

Evaluation CandidateEvaluator::evaluate(const EvaluationRequest& r, WorkerCall call) {
  Evaluation e;
  nlohmann::json bench = nullptr;
  e.validation = run_validation(r, std::move(call), &bench);
  if (bench.is_object()) {
    e.benchmark = bench.get<BenchmarkResult>();
    e.benchmark->candidate = r.label;
  }
  return e;
}

ValidationResult CandidateEvaluator::run_validation(const EvaluationRequest& r, WorkerCall call,
                                                    nlohmann::json* bench) {
  const auto started = std::chrono::steady_clock::now();
  ValidationResult result;
  result.candidate = r.label;
  result.path = r.candidate ? "fast" : "full";
  auto finish = [&](std::string verdict) {
    result.verdict = std::move(verdict);
    result.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return result;
  };

  StaticReport s = r.checked ? *r.checked : static_check(r);
  const double static_s = seconds_since(started);
  result.library_ops = s.library_calls;
  result.checks.push_back({"static: kernel defined", !s.kernels.empty(),
                           s.kernels.empty() ? "no __global__ function" : join(s.kernels, ", ")});
  result.checks.push_back({"static: kernel launched", !s.launched.empty(),
                           s.launched.empty() ? "no kernel is launched" : join(s.launched, ", ")});
  std::vector<std::string> other;
  for (const auto& why : s.refusals)
    if (why.find("kernel") == std::string::npos) other.push_back(why);
  result.checks.push_back({"static: no fallback, shell, socket or side stream", other.empty(),
                           other.empty() ? "none found" : join(other)});
  if (!s.library_calls.empty())
    result.flags.push_back("library-backed: calls " + join(s.library_calls, ", ") + " through PyTorch");
  if (s.refused() && r.enforce_static) return finish("refused: " + join(s.refusals));

  if (call.progress)
    call.progress(r.candidate ? "compiling with NVRTC" : "building with nvcc (full path)", 0.0);
  std::string why;
  auto args = prepare(r, result.build_s, why);
  const std::size_t build_check = result.checks.size();
  result.checks.push_back({"build", args.has_value(),
                           !args         ? why
                           : r.candidate ? fmt::format("NVRTC, {:.2f} s", result.build_s)
                                         : std::string("nvcc + ninja in the worker")});
  if (!args) return finish(why);
  (*args)["trials"] = r.trials;
  (*args)["strict"] = r.strict;
  (*args)["match_eager"] = r.match_eager;
  (*args)["second_shape"] = r.second_shape;
  if (bench) add_bench_args(r, *args);
  if (call.doing.empty()) call.doing = "validating candidate " + r.label;
  // Where the time goes (raw["timings"]): this side before the worker, the worker call, and the
  // worker's own timings; the validation's phases are in raw["phase_s"].
  nlohmann::json timings = {{"static_check_s", static_s},
                            {"compile_s", result.build_s},
                            {"before_worker_s", seconds_since(started)},
                            {"worker_called_at", unix_now()}};
  const auto worker_started = std::chrono::steady_clock::now();
  try {
    if (bench) {
      // One worker process validates and, if the candidate passed, benchmarks it.
      nlohmann::json answer = runner_.run("evaluate", *args, call);
      timings["worker_call_s"] = seconds_since(worker_started);
      result.merge_worker_result(answer.at("validation"));
      *bench = answer.value("benchmark", nlohmann::json());
      timings["evaluate_phase_s"] = answer.value("phase_s", nlohmann::json());
      timings["process_s"] = answer.value("process_s", nlohmann::json());
      if (bench->is_object()) timings["bench_phase_s"] = bench->value("phase_s", nlohmann::json());
    } else {
      nlohmann::json answer = runner_.run("validate", *args, call);
      timings["worker_call_s"] = seconds_since(worker_started);
      result.merge_worker_result(answer);
      timings["process_s"] = answer.value("process_s", nlohmann::json());
    }
    timings["worker_returned_at"] =
        timings["worker_called_at"].get<double>() + timings["worker_call_s"].get<double>();
    result.raw["timings"] = std::move(timings);
    if (!r.candidate)
      result.checks[build_check].detail =
          fmt::format("nvcc + ninja in the worker, built and loaded in {:.1f} s", result.build_s);
  } catch (const WorkerRunError& e) {
    if (!r.candidate && std::string(e.what()).find("Error building extension") != std::string::npos)
      result.checks[build_check] = {"build", false, e.what()};
    result.checks.push_back({"worker", false, e.what()});
    if (!e.log_tail().empty()) result.raw["worker_log_tail"] = e.log_tail();
    return finish(e.what());
  }
  bool worker_passed = result.raw.value("passed", false);
  result.passed = worker_passed && !s.refused();
  if (result.passed)
    return finish(fmt::format("passed {} trials{}", result.trials_passed(),
                              result.flags.empty() ? "" : " (flagged: " + join(result.flags) + ")"));
  auto failures = result.raw.value("failures", std::vector<std::string>{});
  if (!worker_passed)
    return finish("failed: " + (failures.empty() ? std::string("see the checks") : failures.front()));
  return finish("refused: " + join(s.refusals));
}

BenchmarkResult CandidateEvaluator::bench(const EvaluationRequest& r, WorkerCall call) {
  double build_s = 0;
  std::string why;
  auto args = prepare(r, build_s, why);
  if (!args) throw std::runtime_error(r.label + " " + why);
  add_bench_args(r, *args);
  if (call.doing.empty()) call.doing = "benchmarking candidate " + r.label;
  BenchmarkResult result = runner_.run("bench", *args, call).get<BenchmarkResult>();
  result.candidate = r.label;
  return result;
}

}  // namespace nova
