#include "core/llm/kernel_guard.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/worker/child_process.h"

namespace nova {

std::string KernelGuardVerdict::describe() const {
  if (!ran) return "kernelguard not run: " + not_run;
  std::string out = "kernelguard: " + classification;
  if (should_filter) out += fmt::format(", refused ({})", reason);
  for (const auto& p : patterns) out += "; " + p;
  return out;
}

KernelGuardVerdict KernelGuard::check(const std::string& code) const {
  KernelGuardVerdict v;
  ProcessResult r;
  try {
    r = ChildProcess::run({python_, "-m", "kernelguard", "--api-mode"}, ChildProcess::minimal_env(),
                          std::chrono::seconds(60), code);
  } catch (const std::exception& e) {
    v.not_run = fmt::format("{} cannot run it: {}", python_, e.what());
    return v;
  }
  if (r.timed_out) {
    v.not_run = "it took longer than 60 s";
    return v;
  }
  if (!r.status.exited || r.status.code != 0) {
    v.not_run = r.err.find("No module named kernelguard") != std::string::npos
                    ? fmt::format("kernelguard is not installed in {} (packaging/requirements.txt)", python_)
                    : fmt::format("it ended with {}: {}", r.status.describe(), r.err.substr(0, 300));
    return v;
  }
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  if (!j.is_object()) {
    v.not_run = "its answer is not JSON: " + r.out.substr(0, 200);
    return v;
  }
  v.ran = true;
  v.should_filter = j.value("should_filter", false);
  v.classification = j.value("classification", std::string());
  if (j.contains("filter_reason") && j["filter_reason"].is_string()) v.reason = j["filter_reason"];
  for (const auto& p : j.value("matched_patterns", nlohmann::json::array()))
    if (p.is_object())
      v.patterns.push_back(fmt::format("{} ({}): {}", p.value("pattern", std::string("?")),
                                       p.value("severity", std::string("?")),
                                       p.value("evidence", std::string())));
  return v;
}

}  // namespace nova
