#pragma once
// The environment of a process that runs nova's Python worker package (the workers, the profiling
// worker, the Ray probe, `nova doctor`'s question): ChildProcess::minimal_env() (no secrets, no .pyc
// beside the sources), the package on PYTHONPATH, unbuffered output, and nova's bytecode cache named
// for torch (BytecodeCache).
#include "core/worker/child_process.h"

namespace nova {

class WorkerEnv {
 public:
  static ChildProcess::Env make();
};

}  // namespace nova
