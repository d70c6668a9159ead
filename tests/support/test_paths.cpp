#include "support/test_paths.h"

#include <cstdlib>

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

fs::path scratch_dir(const std::string& name) {
  fs::path p = fs::path(NOVA_TEST_OUTPUT) / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

fs::path nova_binary() { return fs::path(NOVA_BINARY_DIR) / "app" / "nova"; }

}  // namespace nova::test
