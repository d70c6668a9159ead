#include "core/env/settings.h"
#include "core/env/build_info.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>

#include "core/env/input_file.h"
#include "core/env/resource_paths.h"

namespace nova {
namespace fs = std::filesystem;

fs::path Settings::default_path() {
  if (const char* p = std::getenv("NOVA_SETTINGS"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return fs::path(x) / "nova" / "settings.json";
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : ".") / ".config" / "nova" / "settings.json";
}

Settings Settings::load(const fs::path& path) {
  Settings s;
  std::ifstream in(path);
  if (!in) return s;
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    s = j.get<Settings>();
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("settings file {} cannot be read: {}", path.string(), InputFile::short_reason(e)));
  }
  return s;
}

void Settings::save(const fs::path& path) const {
  fs::create_directories(path.parent_path());
  fs::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw std::runtime_error(fmt::format("cannot write settings to {}", tmp.string()));
    out << nlohmann::json(*this).dump(2) << '\n';
    if (!out.flush()) throw std::runtime_error(fmt::format("cannot write settings to {}", tmp.string()));
  }
  fs::rename(tmp, path);
}

std::string Settings::resolved_python() const {
  if (!python.empty()) return python;
  return default_python();
}

std::string Settings::resolved_cuda_toolkit() const {
  if (!cuda_toolkit.empty()) return cuda_toolkit;
  if (const char* p = std::getenv("CUDA_HOME"); p && *p) return p;
  return build_info::cuda_toolkit_dir();
}

void Settings::add_recent(const std::string& model_path, std::size_t keep) {
  std::erase(recent_models, model_path);
  recent_models.insert(recent_models.begin(), model_path);
  if (recent_models.size() > keep) recent_models.resize(keep);
}

namespace {

// The value of `key`: `fallback` where it is missing or null; otherwise it must be of `T`'s JSON
// type, or the error names the key, the value and what it should be.
template <typename T>
T setting(const nlohmann::json& j, const char* key, T fallback, const char* expected) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  bool ok = false;
  if constexpr (std::is_same_v<T, bool>)
    ok = it->is_boolean();
  else if constexpr (std::is_same_v<T, int>)
    ok = it->is_number_integer();
  else if constexpr (std::is_same_v<T, std::string>)
    ok = it->is_string();
  else
    ok = it->is_array() && std::all_of(it->begin(), it->end(), [](const auto& v) { return v.is_string(); });
  if (!ok) throw std::runtime_error(fmt::format("{} is {}: expected {}", key, it->dump(), expected));
  return it->template get<T>();
}

const char* const kKnownKeys[] = {
    "python", "cuda_toolkit", "recent_models", "default_generator", "bench_copy_reference", "bench_l2_flush",
    "llm_providers", "llm_default_provider", "gpu_lanes", "ray_address", "ray_gpu_kind"};

}  // namespace

void to_json(nlohmann::json& j, const Settings& s) {
  j = s.unknown_keys.is_object() ? s.unknown_keys : nlohmann::json::object();
  j.update(nlohmann::json{{"python", s.python},
                          {"cuda_toolkit", s.cuda_toolkit},
                          {"recent_models", s.recent_models},
                          {"default_generator", s.default_generator},
                          {"bench_copy_reference", s.bench_copy_reference},
                          {"bench_l2_flush", s.bench_l2_flush},
                          {"llm_providers", s.llm_providers},
                          {"llm_default_provider", s.llm_default_provider},
                          {"gpu_lanes", s.gpu_lanes},
                          {"ray_address", s.ray_address},
                          {"ray_gpu_kind", s.ray_gpu_kind}});
}

void from_json(const nlohmann::json& j, Settings& s) {
  if (!j.is_object())
    throw std::runtime_error(fmt::format("the file holds {}: expected a JSON object", j.type_name()));
  s.python = setting<std::string>(j, "python", "", "a string (the worker's Python interpreter)");
  s.cuda_toolkit = setting<std::string>(j, "cuda_toolkit", "", "a string (the CUDA toolkit's folder)");
  s.recent_models =
      setting<std::vector<std::string>>(j, "recent_models", {}, "a list of strings (model files)");
  s.default_generator =
      setting<std::string>(j, "default_generator", "builtin", "a string (a generator's name)");
  s.bench_copy_reference = setting<bool>(j, "bench_copy_reference", true, "true or false");
  s.bench_l2_flush = setting<std::string>(j, "bench_l2_flush", "clean", "a string (clean or dirty)");
  s.llm_providers.clear();
  if (auto it = j.find("llm_providers"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) throw std::runtime_error(fmt::format("llm_providers is {}: expected a list", it->dump()));
    for (const auto& p : *it) s.llm_providers.push_back(p.get<LlmProvider>());
  }
  s.llm_default_provider = setting<std::string>(j, "llm_default_provider", "", "a string (a provider's name)");
  s.gpu_lanes = setting<int>(j, "gpu_lanes", 1, "a whole number (GPU lanes)");
  s.ray_address = setting<std::string>(j, "ray_address", "", "a string (host:port of a Ray head)");
  s.ray_gpu_kind = setting<std::string>(j, "ray_gpu_kind", "", "a string (a GPU kind, such as H100)");
  s.unknown_keys = nlohmann::json::object();
  for (const auto& [key, value] : j.items())
    if (std::find(std::begin(kKnownKeys), std::end(kKnownKeys), key) == std::end(kKnownKeys))
      s.unknown_keys[key] = value;
  if (s.bench_l2_flush != "clean" && s.bench_l2_flush != "dirty")
    throw std::runtime_error(
        fmt::format("bench_l2_flush is '{}': it must be clean or dirty", s.bench_l2_flush));
  if (s.gpu_lanes < 1) throw std::runtime_error(fmt::format("gpu_lanes is {}: it must be at least 1", s.gpu_lanes));
}

}  // namespace nova
