#include "core/worker/bytecode_cache.h"

#include <cstdlib>
#include <system_error>

namespace nova {

std::filesystem::path BytecodeCache::dir() {
  if (const char* c = std::getenv("NOVA_CACHE"); c && *c) return std::filesystem::path(c) / "pycache";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "nova" / "pycache";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : "/tmp") / ".cache" / "nova" / "pycache";
}

void BytecodeCache::apply(ChildProcess::Env& env) {
  const std::filesystem::path d = dir();
  std::error_code ec;
  std::filesystem::create_directories(d, ec);
  if (ec || !std::filesystem::is_directory(d, ec)) return;
  env["NOVA_PYCACHE"] = d.string();
}

}  // namespace nova
