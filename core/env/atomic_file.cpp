#include "core/env/atomic_file.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

namespace nova {

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  static std::atomic<unsigned long> counter{0};
  std::filesystem::path tmp = path;
  tmp += fmt::format(".tmp{}-{}", ::getpid(), counter.fetch_add(1));  // unique per process and call
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out.flush()) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      throw std::runtime_error("cannot write " + path.string());
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), ec.message()));
  }
}

}  // namespace nova
