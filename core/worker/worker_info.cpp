#include "core/worker/worker_info.h"

namespace nova {

WorkerInfo WorkerInfo::from_hello(const nlohmann::json& j) {
  WorkerInfo info;
  info.protocol = j.value("protocol", 0);
  info.pid = j.value("pid", 0);
  info.mode = j.value("mode", "");
  info.executable = j.value("executable", "");
  info.python = j.value("python", "");
  info.torch = j.value("torch", "");
  info.torch_cuda = j.value("torch_cuda", "");
  info.torch_error = j.value("torch_error", "");
  info.cuda_available = j.value("cuda_available", false);
  for (const auto& d : j.value("devices", nlohmann::json::array())) {
    WorkerDevice dev;
    dev.index = d.value("index", 0);
    dev.name = d.value("name", "");
    dev.memory_bytes = d.value("memory_bytes", std::int64_t{0});
    dev.capability = d.value("capability", std::vector<int>{});
    info.devices.push_back(std::move(dev));
  }
  info.commands = j.value("commands", std::vector<std::string>{});
  return info;
}

}  // namespace nova
