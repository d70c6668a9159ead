#include "core/env/resource_paths.h"
#include "core/env/build_info.h"

#include <unistd.h>

#include <cstdlib>

namespace nova {
namespace fs = std::filesystem;
namespace {

// <prefix>/<relative> when this program runs installed (<prefix>/bin/<program>) and that folder
// exists there; empty otherwise.
fs::path installed(const fs::path& relative) {
  // The program's <prefix>, read once: empty when it does not run from a bin/ folder.
  static const fs::path prefix = [] {
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return fs::path();
    buf[n] = 0;
    const fs::path bin = fs::path(buf).parent_path();
    return bin.filename() == "bin" ? bin.parent_path() : fs::path();
  }();
  if (prefix.empty()) return {};
  const fs::path dir = prefix / relative;
  std::error_code ec;
  return fs::is_directory(dir, ec) ? dir : fs::path();
}

}  // namespace

fs::path resources_dir() {
  if (const char* p = std::getenv("NOVA_RESOURCES"); p && *p) return p;
  if (fs::path dir = installed("share/nova/resources"); !dir.empty()) return dir;
  return fs::path(build_info::source_dir()) / "resources";
}

fs::path python_package_dir() { return resources_dir() / "python"; }
fs::path examples_dir() { return resources_dir() / "examples"; }

fs::path kernels_dir() {
  if (const char* p = std::getenv("NOVA_KERNELS"); p && *p) return p;
  if (fs::path dir = installed("share/nova/kernels"); !dir.empty()) return dir;
  return fs::path(build_info::source_dir()) / "kernels";
}

fs::path plugin_dir() {
  if (const char* p = std::getenv("NOVA_PLUGIN_DIR"); p && *p) return p;
  if (fs::path dir = installed("lib/nova"); !dir.empty()) return dir;
  return build_info::plugin_dir();
}

fs::path default_venv() {
  if (const char* p = std::getenv("NOVA_VENV"); p && *p) return p;
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : ".") / ".local" / "share" / "nova" / "venv";
}

fs::path cache_dir() {
  if (const char* c = std::getenv("NOVA_CACHE"); c && *c) return c;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "nova";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/tmp") / ".cache" / "nova";
}

std::string default_python() {
  if (const char* p = std::getenv("NOVA_PYTHON"); p && *p) return p;
  fs::path venv_python = default_venv() / "bin" / "python";
  std::error_code ec;
  if (fs::exists(venv_python, ec)) return venv_python.string();
  return "python3";
}

}  // namespace nova
