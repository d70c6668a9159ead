#pragma once
// Intake orchestration: a model file in, a ModelGraph out, by way of a Python worker's `intake`
// command (capture, costs, fusion groups, functional sources, saved example inputs). Shared by the
// CLI (`nova intake`) and the studio; the worker is borrowed so callers can keep one warm.
#include <chrono>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/graph/model_graph.h"
#include "core/worker/worker_client.h"

namespace nova {

struct IntakeOptions {
  std::filesystem::path inputs_dir;  // where <model>.inputs.safetensors goes; empty: not saved
  std::chrono::milliseconds timeout{600000};
  bool check_groups = true;  // run each group's functional source against the graph
};

class IntakeRunner {
 public:
  explicit IntakeRunner(WorkerClient& worker) : worker_(worker) {}

  // Throws std::invalid_argument for a missing model file and WorkerError for everything the
  // worker reports (the user's error with their traceback, a crash, a timeout).
  ModelGraph run(const std::filesystem::path& model, const IntakeOptions& options = {},
                 const WorkerClient::Progress& progress = {});

  // The worker's raw answer of the last successful run (includes "group_checks" and "elapsed_s").
  const nlohmann::json& last_result() const { return last_result_; }
  double last_seconds() const { return last_seconds_; }  // wall time of the last run, worker start included

 private:
  WorkerClient& worker_;
  nlohmann::json last_result_;
  double last_seconds_ = 0;
};

}  // namespace nova
