#include "core/trace/profile_runner.h"

#include <unistd.h>
#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "core/doctor/doctor_report.h"
#include "core/env/resource_paths.h"
#include "core/env/settings.h"
#include "core/trace/trace_identity_check.h"
#include "core/trace/trace_reader.h"
#include "core/worker/child_process.h"
#include "core/worker/no_gpu_error.h"
#include "core/worker/worker_connection.h"
#include "core/worker/worker_env.h"

namespace nova {
namespace fs = std::filesystem;

namespace {

// The worker's node list as a ModelGraph with names only (no costs), where intake gave none.
ModelGraph graph_from_worker(const nlohmann::json& worker, const std::string& model) {
  ModelGraph g;
  g.model_path = model;
  g.capture_route = "torch.export";
  for (const auto& n : worker.value("nodes", nlohmann::json::array())) {
    GraphNode node;
    node.id = n.value("id", 0);
    node.target = n.value("target", "");
    node.op = n.value("op", "");
    g.nodes.push_back(std::move(node));
  }
  return g;
}

}  // namespace

ProfileRunner::ProfileRunner(ProfileOptions options) : options_(std::move(options)) {
  if (options_.python.empty()) options_.python = Settings::load().resolved_python();
}

fs::path ProfileRunner::tracer_library() {
  if (const char* p = std::getenv("NOVA_TRACER"); p && *p) return p;
  return plugin_dir() / "libnova_tracer.so";
}

bool ProfileRunner::gpu_available(std::string* why) {
  DoctorReport r;
  probe_cuda_driver(r);
  if (r.has_gpu()) return true;
  if (why) *why = r.driver_error.empty() ? "no CUDA device found" : r.driver_error;
  return false;
}

nlohmann::json ProfileRunner::run_worker(const nlohmann::json& args, bool inject, const fs::path& trace_file,
                                         std::string* log) {
  ChildProcess::Env env = WorkerEnv::make();
  if (inject) {
    fs::path lib = tracer_library();
    if (!fs::exists(lib))
      throw std::runtime_error(fmt::format("the tracer library {} is missing", lib.string()));
    env["CUDA_INJECTION64_PATH"] = lib.string();
    env["NOVA_TRACER_LIB"] = lib.string();
    env["NOVA_TRACE_OUT"] = trace_file.string();
    env["NOVA_TRACE_AUTOSTART"] = "0";
    if (!options_.api_records.empty()) env["NOVA_TRACE_API"] = options_.api_records;
    env["NOVA_TRACE_ATTRIBUTION"] = options_.attribution;
  }
  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(options_.timeout);
  WorkerConnection worker({options_.python, "-m", "nova_worker", "--once"}, env, python_package_dir().string());
  WorkerRequestOptions request;
  request.doing = "profiling " + fs::path(options_.model).filename().string();
  try {
    worker.await_hello(std::chrono::steady_clock::now() + timeout);
    request.timeout = timeout;
    nlohmann::json result = worker.call("profile", args, request);
    if (!worker.wait(std::chrono::seconds(5))) worker.terminate();
    if (log) *log = worker.stderr_text();
    return result;
  } catch (const WorkerError& e) {
    worker.terminate();
    if (log) *log = worker.stderr_text();
    std::string message = fmt::format("profiling failed: {}", e.what());
    if (e.kind() != WorkerError::Kind::UserError) message += "\n" + worker.stderr_tail(2000);
    throw WorkerError(e.kind(), message, e.traceback(), e.file(), e.line());
  }
}

ProfileResult ProfileRunner::run() {
  std::string why;
  if (!gpu_available(&why)) throw NoGpuError(std::string(kNoGpuMessage) + " [" + why + "]");
  ProfileResult r;
  r.trace_file = options_.trace_file.empty()
                     ? fs::temp_directory_path() / fmt::format("nova-profile-{}.novatrace", getpid())
                     : options_.trace_file;
  std::error_code ec;
  fs::remove(r.trace_file, ec);
  nlohmann::json args = {{"mode", "profile"},
                         {"model", fs::absolute(options_.model).string()},
                         {"iters", options_.iters},
                         {"warmup", options_.warmup},
                         {"nvtx", options_.nvtx},
                         {"use_cuda_graph", options_.use_cuda_graph},
                         {"attribution", options_.attribution}};
  r.worker = run_worker(args, true, r.trace_file, &r.log);
  if (!r.worker.value("tracer_active", false))
    throw std::runtime_error(
        "the tracer was not initialised in the worker: CUDA did not load CUDA_INJECTION64_PATH (" +
        tracer_library().string() + ")");
  r.graph = options_.graph.nodes.empty() ? graph_from_worker(r.worker, options_.model) : options_.graph;
  // The trace names what it was recorded from, so it is never attributed to another model's graph.
  TraceIdentityCheck::stamp(r.trace_file, TraceIdentityCheck::of(options_.model, r.graph));
  auto trace = std::make_shared<Trace>(TraceReader::read(r.trace_file));
  r.attribution = Attribution::compute(*trace, r.graph, options_.ceilings);
  r.event_ns = r.worker.value("event_ms", 0.0) * 1e6;
  std::uint64_t first = UINT64_MAX, last = 0;
  for (std::size_t i = 0; i < trace->activities.size(); ++i) {
    const auto& a = trace->activities[i];
    r.traced_busy_ns += static_cast<double>(a.duration());
    if (r.attribution.node_of_activity[i] < 0) continue;
    first = std::min(first, a.start);
    last = std::max(last, a.end);
  }
  r.traced_span_ns = last > first ? static_cast<double>(last - first) : 0;
  r.trace = std::move(trace);
  return r;
}

nlohmann::json ProfileRunner::run_overhead(int iters, int rounds) {
  std::string why;
  if (!gpu_available(&why)) throw NoGpuError(std::string(kNoGpuMessage) + " [" + why + "]");
  fs::path trace_file = fs::temp_directory_path() / fmt::format("nova-overhead-{}.novatrace", getpid());
  nlohmann::json base = {{"model", fs::absolute(options_.model).string()},
                         {"iters", iters},
                         {"rounds", rounds},
                         {"nvtx", false},
                         {"attribution", options_.attribution}};
  nlohmann::json out;
  std::string log;
  // Two processes in one run: CUPTI takes one subscriber, so Kineto cannot share the tracer's.
  base["mode"] = "overhead_cupti";
  out["nova"] = run_worker(base, true, trace_file, &log);
  base["mode"] = "overhead_kineto";
  out["kineto"] = run_worker(base, false, {}, &log);
  std::error_code ec;
  fs::remove(trace_file, ec);
  return out;
}

}  // namespace nova
