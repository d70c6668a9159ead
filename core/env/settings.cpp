#include "core/env/settings.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

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
    throw std::runtime_error(fmt::format("settings file {} cannot be read: {}", path.string(), e.what()));
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
  return NOVA_CUDA_TOOLKIT_DIR;
}

void Settings::add_recent(const std::string& model_path, std::size_t keep) {
  std::erase(recent_models, model_path);
  recent_models.insert(recent_models.begin(), model_path);
  if (recent_models.size() > keep) recent_models.resize(keep);
}

void to_json(nlohmann::json& j, const Settings& s) {
  j = {{"python", s.python},
       {"cuda_toolkit", s.cuda_toolkit},
       {"recent_models", s.recent_models},
       {"default_generator", s.default_generator},
       {"bench_copy_reference", s.bench_copy_reference},
       {"bench_l2_flush", s.bench_l2_flush}};
}

void from_json(const nlohmann::json& j, Settings& s) {
  s.python = j.value("python", "");
  s.cuda_toolkit = j.value("cuda_toolkit", "");
  s.recent_models = j.value("recent_models", std::vector<std::string>{});
  s.default_generator = j.value("default_generator", "builtin");
  s.bench_copy_reference = j.value("bench_copy_reference", true);
  s.bench_l2_flush = j.value("bench_l2_flush", "clean");
  if (s.bench_l2_flush != "clean" && s.bench_l2_flush != "dirty")
    throw std::runtime_error(
        fmt::format("bench_l2_flush is '{}': it must be clean or dirty", s.bench_l2_flush));
}

}  // namespace nova
