#include "core/env/private_temp_dir.h"

#include <cerrno>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace nova {
namespace fs = std::filesystem;

PrivateTempDir::PrivateTempDir(const std::string& prefix) {
  std::string pattern = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (!mkdtemp(name.data()))
    throw std::system_error(errno, std::generic_category(), "cannot make a private folder like " + pattern);
  path_ = name.data();
}

PrivateTempDir::~PrivateTempDir() { remove(); }

PrivateTempDir::PrivateTempDir(PrivateTempDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}

PrivateTempDir& PrivateTempDir::operator=(PrivateTempDir&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

fs::path PrivateTempDir::write_file(const std::string& name, const std::string& text) const {
  const fs::path file = path_ / name;
  const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot create " + file.string());
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      close(fd);
      throw std::system_error(error, std::generic_category(), "cannot write " + file.string());
    }
    written += static_cast<std::size_t>(n);
  }
  if (close(fd) != 0)
    throw std::system_error(errno, std::generic_category(), "cannot write " + file.string());
  return file;
}

void PrivateTempDir::remove() noexcept {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
  path_.clear();
}

}  // namespace nova
