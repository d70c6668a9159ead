// Asks the configured interpreter about itself through the worker package's env_info module:
// the same facts a worker reports in its handshake.
#include <chrono>

#include <fmt/format.h>

#include "core/doctor/doctor_report.h"
#include "core/worker/child_process.h"
#include "core/worker/worker_env.h"

namespace nova {

PythonInfo probe_python(const std::string& interpreter) {
  PythonInfo info;
  info.interpreter = interpreter;
  const auto env = WorkerEnv::make();  // as the workers get it, so the answer says what they will do
  ProcessResult r;
  try {
    r = ChildProcess::run({interpreter, "-m", "nova_worker.env_info"}, env, std::chrono::seconds(90));
  } catch (const std::exception& e) {
    info.error = e.what();
    return info;
  }
  if (r.timed_out) {
    info.error = fmt::format("'{}' did not answer within 90 s", interpreter);
    return info;
  }
  if (!r.status.exited || r.status.code != 0) {
    auto tail = r.err.size() > 400 ? r.err.substr(r.err.size() - 400) : r.err;
    info.error = fmt::format("'{}' failed ({}): {}", interpreter, r.status.describe(), tail);
    return info;
  }
  try {
    auto j = nlohmann::json::parse(r.out);
    info.ran = true;
    info.executable = j.value("executable", "");
    info.version = j.value("python", "");
    info.torch_ok = j.value("torch_ok", false);
    info.torch_version = j.value("torch", "");
    info.torch_cuda = j.value("torch_cuda", "");
    info.torch_error = j.value("torch_error", "");
    info.torch_bytecode = j.value("torch_bytecode", "");
    if (j.contains("report_missing")) info.report_missing = j.at("report_missing").get<std::vector<std::string>>();
    info.cuda_available = j.value("cuda_available", false);
    for (const auto& d : j.value("devices", nlohmann::json::array()))
      info.cuda_devices.push_back(d.value("name", "?"));
  } catch (const std::exception& e) {
    info.error = fmt::format("unexpected answer from '{}': {}", interpreter, e.what());
  }
  return info;
}

}  // namespace nova
