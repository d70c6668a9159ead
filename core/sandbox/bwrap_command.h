#pragma once
// Builds the bubblewrap (bwrap) command line that runs a worker in the sandbox for LLM-authored code:
// every namespace unshared (no network), the child ending with its parent and in a session of its own,
// the whole file system read-only, a fresh /dev with the GPU's device nodes bound where they exist,
// /proc, a private /tmp, and the worker's work folder the only writable bind (also its HOME and current
// folder). The environment inside is cleared and set again from an allow-list; the process started
// outside (bwrap itself) gets the same scrubbed environment, so no secret of the parent (a provider's
// API key) reaches either.
#include <filesystem>
#include <string>
#include <vector>

#include "core/worker/child_process.h"

namespace nova {

class BwrapCommand {
 public:
  BwrapCommand(std::string bwrap, std::filesystem::path work_dir);

  // bwrap, its options, "--", then `inner` (argv[0] searched on the PATH of `env`). `env`: the
  // environment the worker would get; only its allowed entries reach the sandbox (scrub()).
  std::vector<std::string> argv(const std::vector<std::string>& inner, const ChildProcess::Env& env) const;
  // The allowed entries of `env`: PATH, LANG, LC_ALL, LD_LIBRARY_PATH, CUDA_*, NVIDIA_*, NOVA_*,
  // PYTHON*, but no name holding KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL; HOME is the work folder
  // and TMPDIR /tmp. Everything else is dropped.
  ChildProcess::Env scrub(const ChildProcess::Env& env) const;
  // The GPU device nodes of this machine that the sandbox binds: /dev/nvidia*, /dev/dri.
  static std::vector<std::string> gpu_device_nodes();

  const std::filesystem::path& work_dir() const { return work_dir_; }

 private:
  std::string bwrap_;
  std::filesystem::path work_dir_;
};

}  // namespace nova
