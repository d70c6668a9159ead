#include "core/sandbox/bwrap_command.h"

#include <algorithm>
#include <system_error>

namespace nova {
namespace fs = std::filesystem;

namespace {
bool allowed(const std::string& key) {
  static const std::vector<std::string> exact{"PATH", "LANG", "LC_ALL", "LD_LIBRARY_PATH"};
  static const std::vector<std::string> prefixes{"CUDA_", "NVIDIA_", "NOVA_", "PYTHON"};
  if (std::find(exact.begin(), exact.end(), key) != exact.end()) return true;
  // Whatever its prefix, a name that looks like a secret's stays outside (NOVA_API_KEY, CUDA_TOKEN, ...).
  for (const char* secret : {"KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"})
    if (key.find(secret) != std::string::npos) return false;
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](const std::string& p) { return key.rfind(p, 0) == 0; });
}
}  // namespace

BwrapCommand::BwrapCommand(std::string bwrap, fs::path work_dir)
    : bwrap_(std::move(bwrap)), work_dir_(fs::absolute(std::move(work_dir))) {}

ChildProcess::Env BwrapCommand::scrub(const ChildProcess::Env& env) const {
  ChildProcess::Env out;
  for (const auto& [k, v] : env)
    if (allowed(k)) out[k] = v;
  if (!out.count("PATH")) out["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  out["HOME"] = work_dir_.string();
  out["TMPDIR"] = "/tmp";
  return out;
}

std::vector<std::string> BwrapCommand::gpu_device_nodes() {
  std::vector<std::string> nodes;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/dev", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("nvidia", 0) == 0 || name == "dri") nodes.push_back(entry.path().string());
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

std::vector<std::string> BwrapCommand::argv(const std::vector<std::string>& inner,
                                            const ChildProcess::Env& env) const {
  const std::string work = work_dir_.string();
  std::vector<std::string> a{bwrap_,         "--unshare-all", "--unshare-net", "--die-with-parent",
                             "--new-session", "--ro-bind",     "/",             "/",
                             "--dev",         "/dev"};
  for (const auto& node : gpu_device_nodes()) a.insert(a.end(), {"--dev-bind-try", node, node});
  // /tmp first, then the work folder: a work folder under /tmp is bound onto the fresh tmpfs.
  a.insert(a.end(), {"--proc", "/proc", "--tmpfs", "/tmp", "--bind", work, work, "--chdir", work, "--clearenv"});
  for (const auto& [k, v] : scrub(env)) a.insert(a.end(), {"--setenv", k, v});
  a.push_back("--");
  a.insert(a.end(), inner.begin(), inner.end());
  return a;
}

}  // namespace nova
