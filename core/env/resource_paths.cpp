#include "core/env/resource_paths.h"
#include "core/env/build_info.h"

#include <cstdlib>

namespace nova {
namespace fs = std::filesystem;

fs::path resources_dir() {
  if (const char* p = std::getenv("NOVA_RESOURCES"); p && *p) return p;
  return fs::path(build_info::source_dir()) / "resources";
}

fs::path python_package_dir() { return resources_dir() / "python"; }
fs::path examples_dir() { return resources_dir() / "examples"; }

fs::path kernels_dir() {
  if (const char* p = std::getenv("NOVA_KERNELS"); p && *p) return p;
  return fs::path(build_info::source_dir()) / "kernels";
}

fs::path default_venv() {
  if (const char* p = std::getenv("NOVA_VENV"); p && *p) return p;
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : ".") / ".local" / "share" / "nova" / "venv";
}

std::string default_python() {
  if (const char* p = std::getenv("NOVA_PYTHON"); p && *p) return p;
  fs::path venv_python = default_venv() / "bin" / "python";
  std::error_code ec;
  if (fs::exists(venv_python, ec)) return venv_python.string();
  return "python3";
}

}  // namespace nova
