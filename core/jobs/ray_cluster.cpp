#include "core/jobs/ray_cluster.h"

#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/worker/child_process.h"
#include "core/worker/worker_env.h"

namespace nova {

RayClusterInfo RayCluster::describe(const std::string& python, const std::string& address,
                                    const std::string& gpu_kind, std::chrono::seconds budget) {
  std::vector<std::string> argv{python, "-m", "nova_worker.ray_lane", "--address", address, "--describe"};
  if (!gpu_kind.empty()) argv.insert(argv.end(), {"--accelerator", gpu_kind});
  const auto env = WorkerEnv::make();
  ProcessResult r;
  try {
    r = ChildProcess::run(argv, env, budget);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("cannot ask the Ray cluster at {} what it has: {}", address, e.what()));
  }
  auto last_line = [](const std::string& text) {
    std::string t = text;
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
    const auto nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
  };
  if (r.timed_out)
    throw std::runtime_error(fmt::format("the Ray cluster at {} did not answer within {} s", address, budget.count()));
  if (!r.status.exited || r.status.code != 0)
    throw std::runtime_error(r.err.empty() ? fmt::format("asking the Ray cluster at {} failed ({})", address,
                                                         r.status.describe())
                                           : last_line(r.err));
  const auto j = nlohmann::json::parse(last_line(r.out), nullptr, false);
  if (!j.is_object()) throw std::runtime_error("the Ray lane's description is not JSON: " + r.out.substr(0, 200));
  RayClusterInfo info;
  info.address = j.value("address", address);
  info.gpus = j.value("gpus", 0);
  info.kinds = j.value("kinds", std::vector<std::string>{});
  for (const auto& n : j.value("nodes", nlohmann::json::array()))
    if (n.value("alive", false)) ++info.nodes_alive;
  const auto probe = j.value("probe", nlohmann::json::object());
  info.gpu_name = probe.value("name", "");
  info.arch = probe.value("arch", "");
  info.sm_count = probe.value("sm_count", 0);
  info.probe_note = probe.value("note", "");
  return info;
}

std::string RayCluster::summary(const RayClusterInfo& info) {
  std::string text = fmt::format("{} GPU(s){} on {} node(s)", info.gpus,
                                 info.kinds.empty() ? std::string() : fmt::format(" of kind {}", fmt::join(info.kinds, ", ")),
                                 info.nodes_alive);
  if (!info.arch.empty())
    text += fmt::format(", {} with {} SMs ({})", info.arch, info.sm_count, info.gpu_name);
  else if (!info.probe_note.empty())
    text += fmt::format("; the probe task saw no GPU: {}", info.probe_note);
  return text;
}

}  // namespace nova
