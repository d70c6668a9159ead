#include "core/graph/intake_runner.h"

#include <stdexcept>

#include <fmt/format.h>

namespace nova {
namespace fs = std::filesystem;

ModelGraph IntakeRunner::run(const fs::path& model, const IntakeOptions& options,
                             const WorkerClient::Progress& progress) {
  std::error_code ec;
  if (!fs::is_regular_file(model, ec))
    throw std::invalid_argument(fmt::format("model file not found: {}", model.string()));
  const auto started = std::chrono::steady_clock::now();
  nlohmann::json args = {{"model", fs::absolute(model).string()}, {"check_groups", options.check_groups}};
  if (!options.inputs_dir.empty())
    args["save_inputs"] =
        (fs::absolute(options.inputs_dir) / (model.stem().string() + ".inputs.safetensors")).string();
  nlohmann::json result = worker_.request("intake", args, options.timeout, progress);
  ModelGraph graph;
  try {
    graph = result.get<ModelGraph>();
  } catch (const std::exception& e) {
    throw WorkerError(WorkerError::Kind::Protocol,
                      fmt::format("the worker's intake result is malformed: {}", e.what()));
  }
  graph.model_path = model.string();
  last_result_ = std::move(result);
  last_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return graph;
}

}  // namespace nova
