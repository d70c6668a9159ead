#pragma once
// An export that cannot be made as asked (an unvalidated, declined or tied version chosen, a model
// file changed since intake, a package name that is not a Python identifier, an output folder that is
// not empty, a failed build check): its message names what is wrong and what to do. Nothing is left
// half-written when it is thrown. `nova export` reports it with exit code 2.
#include <stdexcept>
#include <string>

namespace nova {

class ExportError : public std::runtime_error {
 public:
  explicit ExportError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace nova
