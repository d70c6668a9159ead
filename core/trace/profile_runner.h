#pragma once
// Runs a profile: starts a one-shot worker (`python -m nova_worker --once`, the worker protocol)
// with libnova_tracer.so injected through CUDA_INJECTION64_PATH, sends it the `profile` command
// (warm-up, then traced iterations with each graph node's kernels tagged by its id), reads the
// .novatrace file it wrote and attributes it. Used by
// `nova profile` and the studio's profile job. Also runs the overhead benchmark: traced against
// untraced wall time, and torch.profiler's, in one run.
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/graph/model_graph.h"
#include "core/trace/attribution.h"
#include "core/trace/trace.h"

namespace nova {

// What to profile and how.
struct ProfileOptions {
  std::string model;  // the model file
  int iters = 20;
  int warmup = 5;
  bool use_cuda_graph = false;
  bool nvtx = false;        // also push an NVTX range per node (MARKER records, where NVTX reaches CUPTI)
  std::string api_records;  // "", "runtime", "driver", "runtime,driver" (costly: off by default)
  std::string attribution = "sequence";  // how node ids reach the trace: sequence, callback, external, both
  std::filesystem::path trace_file;      // where the tracer writes; default: a temp file
  std::string python;                    // worker interpreter; default: Settings
  std::chrono::milliseconds timeout{600000};
  ModelGraph graph;  // from intake, for names and costs; empty: the worker's node list
  DeviceCeilings ceilings;
};

// What a profile gave: the trace, its attribution, and the worker's answer.
struct ProfileResult {
  std::shared_ptr<const Trace> trace;
  AttributionResult attribution;
  ModelGraph graph;       // the one attributed against
  nlohmann::json worker;  // what the worker reported (event time, node list, device, ...)
  std::filesystem::path trace_file;
  double event_ns = 0;        // CUDA-event time of the traced iterations (one block)
  double traced_span_ns = 0;  // first start to last end of the attributed activities
  double traced_busy_ns = 0;  // sum of all activity durations in the trace
  std::string log;            // the worker's stderr
};

// Runs profiles and overhead measurements in profiling workers.
class ProfileRunner {
 public:
  explicit ProfileRunner(ProfileOptions options);

  // Throws NoGpuError when the machine has no CUDA device; WorkerError with the worker's message
  // when the worker fails (std::runtime_error when the tracer library is missing).
  ProfileResult run();
  // {"nova": {...}, "kineto": {...}}: per-iteration wall time untraced and traced in each mode.
  // Throws as run() does.
  nlohmann::json run_overhead(int iters, int rounds);

  static std::filesystem::path tracer_library();  // $NOVA_TRACER, else the built library
  // False with the reason where no CUDA device can be used.
  static bool gpu_available(std::string* why);
  static constexpr const char* kNoGpuMessage =
      "no CUDA device: profiling needs a GPU (intake, generation and export work without one)";

 private:
  nlohmann::json run_worker(const nlohmann::json& args, bool inject, const std::filesystem::path& trace_file,
                            std::string* log);
  ProfileOptions options_;
};

}  // namespace nova
