#include "core/worker/bytecode_cache.h"

#include <system_error>

#include "core/env/resource_paths.h"

namespace nova {

std::filesystem::path BytecodeCache::dir() { return cache_dir() / "pycache"; }

void BytecodeCache::apply(ChildProcess::Env& env) {
  const std::filesystem::path d = dir();
  std::error_code ec;
  std::filesystem::create_directories(d, ec);
  if (ec || !std::filesystem::is_directory(d, ec)) return;
  env["NOVA_PYCACHE"] = d.string();
}

}  // namespace nova
