#include "core/worker/worker_env.h"

#include "core/env/resource_paths.h"
#include "core/worker/bytecode_cache.h"

namespace nova {

ChildProcess::Env WorkerEnv::make() {
  ChildProcess::Env env = ChildProcess::minimal_env();
  // (insert_or_assign: GCC 12 warns a false -Wrestrict for `env["..."] = "1"` inlined here.)
  env.insert_or_assign("PYTHONPATH", python_package_dir().string());
  env.insert_or_assign("PYTHONUNBUFFERED", std::string("1"));
  BytecodeCache::apply(env);  // (torch's bytecode may go to nova's cache)
  return env;
}

}  // namespace nova
