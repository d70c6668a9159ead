#pragma once
// How a worker that runs LLM-authored code is sandboxed: plain data that a WorkerCall carries to the
// runner (core/sandbox/bwrap_command.h builds the command line from it).
#include <string>

namespace nova {

struct SandboxSpec {
  std::string bwrap = "bwrap";  // the bubblewrap program (searched on PATH)
};

// What the sandbox probe found: whether bubblewrap starts a sandbox on this machine, and why not.
struct SandboxStatus {
  bool available = false;
  std::string reason;  // empty when available: "bwrap not found (bwrap)", bwrap's own error, ...
};

}  // namespace nova
