#include "core/sandbox/sandbox_policy.h"

#include <fmt/format.h>

#include "core/sandbox/sandbox_probe.h"
#include "core/sandbox/sandbox_refused.h"
#include "core/sandbox/unsandboxed_consent.h"

namespace nova {

SandboxDecision SandboxPolicy::decide(const std::filesystem::path& project_folder, const std::string& bwrap) {
  SandboxDecision d;
  const SandboxStatus status = SandboxProbe::probe(bwrap);
  if (status.available) {
    d.sandbox = SandboxSpec{bwrap};
    return d;
  }
  if (!UnsandboxedConsent::allowed(project_folder))
    throw SandboxRefused(fmt::format(
        "refusing to run LLM-written code without the sandbox: {}. Install bubblewrap (apt-get install "
        "bubblewrap) where user namespaces are allowed, or allow unsandboxed runs for this project with "
        "`nova llm MODEL.py --allow-unsandboxed` (its results then say sandboxed: false)",
        status.reason));
  d.reason = status.reason;
  return d;
}

}  // namespace nova
