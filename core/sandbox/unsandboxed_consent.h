#pragma once
// The per-project consent to run LLM-authored code without the sandbox where the sandbox cannot start:
// one row of the project's settings table (migration 9), read and written through a connection of its
// own. Off unless the user turned it on (`nova llm --allow-unsandboxed`).
#include <filesystem>

namespace nova {

class UnsandboxedConsent {
 public:
  // Throws ProjectError when the project cannot be opened or lacks the settings table.
  static bool allowed(const std::filesystem::path& project_folder);
  static void set(const std::filesystem::path& project_folder, bool allowed);
};

}  // namespace nova
