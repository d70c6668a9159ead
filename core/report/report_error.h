#pragma once
// A report that cannot be made as asked (a project without a graph or without any validated version,
// an unknown output format, an output folder that is not empty, a renderer that failed): its message
// names what is wrong and what to do. Nothing is left half-written when it is thrown. `nova report`
// reports it with exit code 2.
#include <stdexcept>
#include <string>

namespace nova {

class ReportError : public std::runtime_error {
 public:
  explicit ReportError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace nova
