#pragma once
// A temporary folder only this user can enter: made by mkdtemp (mode 0700, a fresh unpredictable
// name, never an existing path or a symlink someone planted) under the system's temporary folder
// ($TMPDIR, else /tmp), and removed with everything in it when the object goes. For files that hold
// the client's code only for the length of one command (a fusion group's functional source).
#include <filesystem>
#include <string>

namespace nova {

// The owner of one private temporary folder (see above).
class PrivateTempDir {
 public:
  // Makes <temp>/<prefix>-XXXXXX; throws std::system_error if it cannot.
  explicit PrivateTempDir(const std::string& prefix = "nova");
  ~PrivateTempDir();
  PrivateTempDir(const PrivateTempDir&) = delete;
  PrivateTempDir& operator=(const PrivateTempDir&) = delete;
  PrivateTempDir(PrivateTempDir&& other) noexcept;
  PrivateTempDir& operator=(PrivateTempDir&& other) noexcept;

  const std::filesystem::path& path() const { return path_; }
  // Writes `text` to a file of this folder, readable by the user only (0600); returns its path.
  std::filesystem::path write_file(const std::string& name, const std::string& text) const;

 private:
  void remove() noexcept;
  std::filesystem::path path_;
};

}  // namespace nova
