#pragma once
// Settings shared by the studio and the CLI: which Python runs the workers, where the
// CUDA toolkit is, recently opened models, how the studio benchmarks. Stored as JSON in the
// user's config folder ($XDG_CONFIG_HOME/nova/settings.json), so `nova` and `nova-studio` agree.
// A key that is missing or null takes its default; a value of the wrong type is an error naming the
// key and the type it needs; keys this version does not know are kept and written back on save (a
// newer studio's settings survive an older `nova`).
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/llm/llm_provider.h"

namespace nova {

struct Settings {
  std::string python;        // empty: resolved by default_python()
  std::string cuda_toolkit;  // empty: the toolkit found at build time
  std::vector<std::string> recent_models;
  std::string default_generator = "builtin";
  // The studio's benchmarks (EvaluationRequest): time a copy of the group's bytes alongside (the
  // memory floor), and what the cold mode's flush leaves in the L2 ("clean" or "dirty";
  // docs/VERIFY.md). `nova bench` takes them as --no-copy-reference and --l2-flush.
  bool bench_copy_reference = true;
  std::string bench_l2_flush = "clean";
  // LLM providers (core/llm/llm_provider.h; no API keys: those come from environment variables) and
  // the one `nova llm` uses without --provider.
  std::vector<LlmProvider> llm_providers;
  std::string llm_default_provider;
  // The studio's GPU work: lanes (GPUs used at once, one worker each) and, when set, the Ray cluster
  // ("host:port" of its head) that runs validation and benchmarks as tasks of one GPU each, and the
  // GPU kind to ask it for (empty: its only kind). `nova optimize` takes them as --gpus, --ray and
  // --ray-gpu-kind.
  int gpu_lanes = 1;
  std::string ray_address;
  std::string ray_gpu_kind;
  // Keys of the file this version does not know, with their values, as read.
  nlohmann::json unknown_keys = nlohmann::json::object();

  static std::filesystem::path default_path();
  // Loads settings; a missing file gives defaults, a malformed one throws std::runtime_error
  // naming the file and what is wrong ("python is 3: expected a string"); the caller decides
  // whether to reset it.
  static Settings load(const std::filesystem::path& path = default_path());
  // Writes atomically (temp file + rename) so a crash never leaves half a file.
  void save(const std::filesystem::path& path = default_path()) const;

  // The interpreter workers use: `python` if set, else $NOVA_PYTHON, else the venv made by
  // packaging/setup-deps.sh, else python3 from PATH.
  std::string resolved_python() const;
  std::string resolved_cuda_toolkit() const;
  void add_recent(const std::string& model_path, std::size_t keep = 10);
};

void to_json(nlohmann::json& j, const Settings& s);
void from_json(const nlohmann::json& j, Settings& s);

}  // namespace nova
