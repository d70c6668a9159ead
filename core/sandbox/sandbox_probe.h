#pragma once
// Says whether the sandbox for LLM-authored code can start on this machine: runs `true` inside
// bubblewrap with the options a worker gets (BwrapCommand) and reports bwrap's own error when it
// cannot (bwrap missing, user namespaces refused by the kernel or the container).
#include <string>

#include "core/sandbox/sandbox_spec.h"

namespace nova {

class SandboxProbe {
 public:
  // Probes once per bwrap path for the life of the process (the answer depends on the host, not
  // on the project).
  static SandboxStatus probe(const std::string& bwrap);
  // Probes again, every call.
  static SandboxStatus probe_now(const std::string& bwrap);
};

}  // namespace nova
