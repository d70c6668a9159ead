#include "core/project/damaged_project.h"

#include <fcntl.h>
#include <unistd.h>

#include <ctime>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/project/project_error.h"
#include "core/project/project_store.h"

namespace nova {
namespace fs = std::filesystem;

namespace {

std::string utc_stamp() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  return stamp;
}

bool present(const fs::path& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

fs::path with_suffix(const fs::path& path, const char* suffix) { return fs::path(path.string() + suffix); }

}  // namespace

fs::path move_aside(const fs::path& folder) {
  const fs::path file = folder / ProjectStore::kFileName;
  if (!present(file))
    throw ProjectError(fmt::format("{} holds no {} to move aside", folder.string(), ProjectStore::kFileName));
  const std::string stamp = utc_stamp();
  fs::path target;
  for (int n = 1;; ++n) {
    target = folder / fmt::format("{}.damaged-{}{}", ProjectStore::kFileName, stamp,
                                  n == 1 ? std::string() : fmt::format("-{}", n));
    if (!present(target) && !present(with_suffix(target, "-wal")) && !present(with_suffix(target, "-shm")))
      break;
  }
  // The WAL first and the main file last: a WAL left behind would be replayed into the next project
  // created here, while a main file left behind is still the damaged project, to try again.
  std::vector<std::pair<fs::path, fs::path>> moved;
  for (const char* suffix : {"-wal", "-shm", ""}) {
    fs::path from = with_suffix(file, suffix);
    if (!present(from)) continue;
    fs::path to = with_suffix(target, suffix);
    std::error_code ec;
    fs::rename(from, to, ec);
    if (ec) {
      for (auto it = moved.rbegin(); it != moved.rend(); ++it) {
        std::error_code back;
        fs::rename(it->second, it->first, back);
      }
      throw ProjectError(fmt::format("cannot move {} aside: {}: nothing was changed", from.string(), ec.message()));
    }
    moved.emplace_back(from, to);
  }
  // The renames survive a power cut once the folder is synced.
  if (int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  return target;
}

}  // namespace nova
