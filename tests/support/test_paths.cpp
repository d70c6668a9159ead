#include "support/test_paths.h"

#include <cstdlib>

#include <ftw.h>
#include <unistd.h>

#include "core/env/resource_paths.h"

namespace nova::test {
namespace fs = std::filesystem;

fs::path fixtures_dir() { return NOVA_TEST_FIXTURES; }

fs::path shared_dir() {
  if (const char* p = std::getenv("NOVA_SHARED"); p && *p) return p;
  return NOVA_SHARED_DEFAULT;
}

fs::path shared_examples_dir() { return shared_dir() / "examples"; }
fs::path repo_examples_dir() { return nova::examples_dir(); }

namespace {
// std::filesystem::remove_all can bind to the copy inside libtorch.so (linked into nova_core),
// which jumps to a null pointer on a non-empty folder; POSIX nftw does the same job safely.
void remove_tree(const fs::path& p) {
  ::nftw(
      p.c_str(),
      [](const char* path, const struct stat*, int, struct FTW*) {
        ::remove(path);
        return 0;
      },
      16, FTW_DEPTH | FTW_PHYS);
}
}  // namespace

fs::path scratch_dir(const std::string& name) {
  fs::path p = fs::path(NOVA_TEST_OUTPUT) / name;
  remove_tree(p);
  fs::create_directories(p);
  return p;
}

fs::path nova_binary() { return fs::path(NOVA_BINARY_DIR) / "app" / "nova"; }

}  // namespace nova::test
