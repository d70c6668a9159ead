#pragma once
// An error a subcommand reports to the user: its message is printed as "nova: <message>" and
// the process exits with its code (2 for bad input, 3 for an environment that cannot do the work).
#include <stdexcept>
#include <string>

namespace nova {

class CliError : public std::runtime_error {
 public:
  explicit CliError(const std::string& message, int exit_code = 1)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace nova
