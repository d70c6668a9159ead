#pragma once
// Thrown where LLM-authored code would run unsandboxed without the project's consent: the sandbox
// cannot start here and the project does not allow unsandboxed runs. Its message says why the sandbox
// cannot start and how to allow it (`nova llm --allow-unsandboxed`).
#include <stdexcept>
#include <string>

namespace nova {

class SandboxRefused : public std::runtime_error {
 public:
  explicit SandboxRefused(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace nova
