#include "support/test_paths.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/env/resource_paths.h"

namespace nova::test {
namespace fs = std::filesystem;

fs::path fixtures_dir() {
  if (const char* p = std::getenv("NOVA_TEST_FIXTURES"); p && *p) return p;
  return NOVA_TEST_FIXTURES;
}

fs::path shared_dir() {
  if (const char* p = std::getenv("NOVA_SHARED"); p && *p) return p;
  return NOVA_SHARED_DEFAULT;
}

fs::path shared_examples_dir() { return shared_dir() / "examples"; }
fs::path repo_examples_dir() { return nova::examples_dir(); }

fs::path scratch_dir(const std::string& name) {
  // CTest runs each test in its own process, in parallel: a folder per test keeps one test's
  // SetUp from emptying another's folder.
  fs::path p = test_output_dir() / "scratch";
  if (const auto* t = ::testing::UnitTest::GetInstance()->current_test_info())
    p /= std::string(t->test_suite_name()) + "." + t->name();
  p /= name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

fs::path test_output_dir() {
  if (const char* p = std::getenv("NOVA_TEST_OUTPUT"); p && *p) return p;
  return NOVA_TEST_OUTPUT;
}

fs::path nova_binary() { return fs::path(NOVA_BINARY_DIR) / "app" / "nova"; }

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace nova::test
