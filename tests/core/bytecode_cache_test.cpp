#include "core/worker/bytecode_cache.h"

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "support/test_paths.h"

namespace nova {
namespace {

// Sets an environment variable for one test and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(BytecodeCache, NamesAFolderOfNovasCacheToTheWorkerAndCreatesIt) {
  auto dir = test::scratch_dir("bytecode_cache");
  ScopedEnv cache("NOVA_CACHE", (dir / "cache").string());
  EXPECT_EQ(BytecodeCache::dir(), dir / "cache" / "pycache");
  ChildProcess::Env env = ChildProcess::minimal_env();
  BytecodeCache::apply(env);
  EXPECT_EQ(env["NOVA_PYCACHE"], (dir / "cache" / "pycache").string());
  EXPECT_TRUE(std::filesystem::is_directory(dir / "cache" / "pycache"));
  EXPECT_EQ(env["PYTHONDONTWRITEBYTECODE"], "1");  // the worker decides, for torch only (nova_worker/bytecode.py)
}

TEST(BytecodeCache, WithoutAFolderItCanCreateTheWorkerWritesNoBytecodeAsBefore) {
  auto dir = test::scratch_dir("bytecode_cache_blocked");
  std::ofstream(dir / "a-file") << "not a folder";
  ScopedEnv cache("NOVA_CACHE", (dir / "a-file").string());
  ChildProcess::Env env = ChildProcess::minimal_env();
  BytecodeCache::apply(env);
  EXPECT_EQ(env.count("NOVA_PYCACHE"), 0u);
  EXPECT_EQ(env["PYTHONDONTWRITEBYTECODE"], "1");
}

TEST(BytecodeCache, FallsBackToXdgThenHome) {
  ScopedEnv nova("NOVA_CACHE", "");
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
    EXPECT_EQ(BytecodeCache::dir(), std::filesystem::path("/x/cache/nova/pycache"));
  }
  ScopedEnv xdg("XDG_CACHE_HOME", "");
  ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(BytecodeCache::dir(), std::filesystem::path("/home/someone/.cache/nova/pycache"));
}

}  // namespace
}  // namespace nova
