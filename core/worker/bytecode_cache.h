#pragma once
// Where the Python processes nova trusts (its workers, the profile's worker, the Ray probe) may keep
// the bytecode of what they import: a folder of nova's cache, never beside the sources, so nothing
// lands in the user's model folder or in the Python installation. The worker uses it only when
// torch's own bytecode is missing beside torch's sources (nova_worker/bytecode.py): then, with
// PYTHONDONTWRITEBYTECODE set as well (the GPU box had both; so do many container images), every
// worker start compiled torch's Python again: importing torch, torch._dynamo and inductor took
// 17-18 s each time there, and about 7 s once a cache held their bytecode. A sandboxed worker
// (bubblewrap) sees the folder read-only: it reads the cache and cannot write what a trusted worker
// will run.
#include <filesystem>

#include "core/worker/child_process.h"

namespace nova {

class BytecodeCache {
 public:
  // $NOVA_CACHE/pycache, else $XDG_CACHE_HOME/nova/pycache, else ~/.cache/nova/pycache.
  static std::filesystem::path dir();
  // Names dir() (created here) to `env`'s worker as NOVA_PYCACHE; where the folder cannot be created,
  // `env` is left as it is (the worker writes no bytecode, as before).
  static void apply(ChildProcess::Env& env);
};

}  // namespace nova
