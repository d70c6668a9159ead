#pragma once
// What a worker said about itself in its hello line: protocol version, interpreter, torch, CUDA.
// Filled by WorkerConnection at start-up; shown by the CLI and the studio's jobs panel.
// Mirrors the worker's schemas.Hello and schemas.Device (resources/python/nova_worker/schemas.py).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nova {

// One CUDA device the worker sees.
struct WorkerDevice {
  int index = 0;
  std::string name;
  std::int64_t memory_bytes = 0;
  std::vector<int> capability;  // {major, minor}
};

// The hello's facts.
struct WorkerInfo {
  int protocol = 0;
  std::string mode;  // "persistent" (serves requests until shutdown) or "once" (one request, then exits)
  int pid = 0;
  std::string executable;  // the interpreter
  std::string python;      // its version, e.g. "3.11.7"
  std::string torch;       // torch.__version__, empty if torch does not import
  std::string torch_cuda;  // the CUDA torch was built with
  std::string torch_error;
  bool cuda_available = false;
  std::vector<WorkerDevice> devices;
  std::vector<std::string> commands;

  static WorkerInfo from_hello(const nlohmann::json& hello);
};

}  // namespace nova
