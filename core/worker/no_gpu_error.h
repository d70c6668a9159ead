#pragma once
// The work needs a CUDA device and this machine has none (or none that can be used): thrown by
// core stages that cannot run without one (profiling). The CLI maps it to exit code 3.
#include <stdexcept>
#include <string>

namespace nova {

class NoGpuError : public std::runtime_error {
 public:
  explicit NoGpuError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace nova
