#pragma once
// Decides how a project's LLM-authored code runs: in the sandbox where it can start here; else
// unsandboxed only where the project allows it (UnsandboxedConsent), recorded as such; else refused.
#include <filesystem>
#include <optional>
#include <string>

#include "core/sandbox/sandbox_spec.h"

namespace nova {

struct SandboxDecision {
  std::optional<SandboxSpec> sandbox;  // set: run in this sandbox; unset: unsandboxed, with consent
  std::string reason;                  // unsandboxed: why the sandbox could not start
  bool sandboxed() const { return sandbox.has_value(); }
};

class SandboxPolicy {
 public:
  // Throws SandboxRefused when the sandbox cannot start (SandboxProbe) and the project at
  // `project_folder` does not allow unsandboxed runs.
  static SandboxDecision decide(const std::filesystem::path& project_folder, const std::string& bwrap);
};

}  // namespace nova
