#include "core/worker/bytecode_cache.h"

#include <fstream>

#include <gtest/gtest.h>

#include "support/scoped_env.h"
#include "support/test_paths.h"

namespace nova {
namespace {

using test::ScopedEnv;

TEST(BytecodeCache, NamesAFolderOfNovasCacheToTheWorkerAndCreatesIt) {
  auto dir = test::scratch_dir("bytecode_cache");
  ScopedEnv cache("NOVA_CACHE", (dir / "cache").c_str());
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
  ScopedEnv cache("NOVA_CACHE", (dir / "a-file").c_str());
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
