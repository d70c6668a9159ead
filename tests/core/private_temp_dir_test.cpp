// A private temporary folder: mode 0700 under $TMPDIR with an unpredictable name, files in it
// readable by the user only, everything removed when the owner goes (moves hand the folder on).
#include "core/env/private_temp_dir.h"

#include <fstream>
#include <sstream>

#include <sys/stat.h>

#include <gtest/gtest.h>

namespace nova {
namespace {
namespace fs = std::filesystem;

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 0777;
}

TEST(PrivateTempDir, IsOnlyTheUsersAndGoesWithItsOwner) {
  fs::path dir, file;
  {
    PrivateTempDir a("nova-test");
    dir = a.path();
    EXPECT_EQ(dir.parent_path(), fs::temp_directory_path());
    EXPECT_EQ(dir.filename().string().rfind("nova-test-", 0), 0u) << dir;
    EXPECT_EQ(mode_of(dir), 0700u);
    file = a.write_file("group0.py", "def module_fn(x):\n    return x\n");
    EXPECT_EQ(mode_of(file), 0600u);
    std::stringstream text;
    text << std::ifstream(file).rdbuf();
    EXPECT_EQ(text.str(), "def module_fn(x):\n    return x\n");
    EXPECT_THROW(a.write_file("group0.py", "again"), std::system_error);  // never through an existing path
    fs::create_directories(dir / "__pycache__");
    PrivateTempDir b("nova-test");
    EXPECT_NE(b.path(), dir);
    PrivateTempDir moved = std::move(a);
    EXPECT_EQ(moved.path(), dir);
    EXPECT_TRUE(a.path().empty());
  }
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_FALSE(fs::exists(file));
}

}  // namespace
}  // namespace nova
