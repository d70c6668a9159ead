#include "core/sandbox/sandbox_probe.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "core/sandbox/bwrap_command.h"
#include "core/worker/child_process.h"

namespace nova {
namespace fs = std::filesystem;

SandboxStatus SandboxProbe::probe_now(const std::string& bwrap) {
  std::error_code ec;
  const fs::path work = fs::temp_directory_path() / fmt::format("nova-sandbox-probe-{}", getpid());
  fs::create_directories(work, ec);
  SandboxStatus status;
  try {
    BwrapCommand command(bwrap, work);
    const ChildProcess::Env env = command.scrub(ChildProcess::minimal_env());
    ProcessResult r = ChildProcess::run(command.argv({"true"}, env), env, std::chrono::seconds(20));
    if (r.status.exited && r.status.code == 0) {
      status.available = true;
    } else {
      std::string err = r.err;
      while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
      status.reason = r.timed_out ? fmt::format("{} did not start a sandbox within 20 s", bwrap)
                                  : fmt::format("{} cannot start a sandbox ({}){}", bwrap, r.status.describe(),
                                                err.empty() ? "" : ": " + err);
    }
  } catch (const std::exception& e) {
    status.reason = fmt::format("bubblewrap cannot be started ({}): {}", bwrap, e.what());
  }
  fs::remove_all(work, ec);
  return status;
}

SandboxStatus SandboxProbe::probe(const std::string& bwrap) {
  static std::mutex mutex;
  static std::map<std::string, SandboxStatus> known;
  std::lock_guard lock(mutex);
  auto it = known.find(bwrap);
  if (it == known.end()) it = known.emplace(bwrap, probe_now(bwrap)).first;
  return it->second;
}

}  // namespace nova
