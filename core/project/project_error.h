#pragma once
#include <stdexcept>
#include <string>

namespace nova {

// The one error the project store throws: a plain sentence for the user ("project.nova was written
// by a newer Nova ...: nothing was changed"), shown as is by the CLI and the studio.
class ProjectError : public std::runtime_error {
 public:
  explicit ProjectError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace nova
