#include "support/worker_python.h"

#include "core/env/resource_paths.h"

namespace nova::test {

ChildProcess::Env worker_env() {
  auto env = ChildProcess::minimal_env();
  env["PYTHONPATH"] = python_package_dir().string();
  return env;
}

bool has_torch(const std::string& python) {
  auto r = ChildProcess::run({python, "-c", "import torch"}, worker_env(), std::chrono::seconds(120));
  return r.status.exited && r.status.code == 0;
}

}  // namespace nova::test
