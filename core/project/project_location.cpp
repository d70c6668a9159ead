#include "core/project/project_location.h"

#include <cstdlib>

#include <fmt/format.h>

#include "core/env/fnv1a.h"

namespace nova {
namespace fs = std::filesystem;

fs::path projects_root() {
  if (const char* p = std::getenv("NOVA_PROJECTS"); p && *p) return p;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) return fs::path(x) / "nova" / "projects";
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : "/tmp") / ".local" / "share" / "nova" / "projects";
}

fs::path project_folder_for(const fs::path& model) {
  std::error_code ec;
  fs::path absolute = fs::weakly_canonical(fs::absolute(model), ec);
  if (ec) absolute = fs::absolute(model);
  const std::uint64_t h = fnv1a64(absolute.string());
  return projects_root() /
         fmt::format("{}-{:08x}", model.stem().string(), static_cast<std::uint32_t>(h ^ (h >> 32)));
}

ProjectStore open_project_for(const fs::path& model) {
  fs::path folder = project_folder_for(model);
  std::error_code ec;
  if (fs::exists(folder / ProjectStore::kFileName, ec)) return ProjectStore::open(folder);
  return ProjectStore::create(folder);
}

}  // namespace nova
