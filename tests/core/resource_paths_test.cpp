// Where a program carried to another machine (the studio kit of packaging/studio-kit.sh) finds the
// tracer, reads the recorded fixtures and writes its test output: $NOVA_PLUGIN_DIR, $NOVA_TEST_FIXTURES
// and $NOVA_TEST_OUTPUT win over the folders compiled in, and without them the build's folders are used.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/env/build_info.h"
#include "core/env/resource_paths.h"
#include "core/trace/profile_runner.h"
#include "support/llm_server/scripted_llm_server.h"
#include "support/scoped_env.h"
#include "support/test_paths.h"

namespace nova {
namespace {

using test::ScopedEnv;

TEST(ResourcePaths, PluginDirEnvironmentVariableLocatesTheTracerElseTheBuildsFolderDoes) {
  ScopedEnv tracer("NOVA_TRACER", nullptr);
  {
    ScopedEnv plugins("NOVA_PLUGIN_DIR", "/opt/box/build/lib");
    EXPECT_EQ(plugin_dir(), "/opt/box/build/lib");
    EXPECT_EQ(ProfileRunner::tracer_library(), "/opt/box/build/lib/libnova_tracer.so");
  }
  ScopedEnv plugins("NOVA_PLUGIN_DIR", nullptr);
  EXPECT_EQ(plugin_dir(), build_info::plugin_dir());
}

TEST(ResourcePaths, TestOutputEnvironmentVariableHoldsTheOutputAndScratchFolders) {
  const auto dir = test::scratch_dir("carried_output");
  {
    ScopedEnv output("NOVA_TEST_OUTPUT", dir.c_str());
    EXPECT_EQ(test::test_output_dir(), dir);
    const auto scratch = test::scratch_dir("inner");
    EXPECT_EQ(scratch.string().rfind((dir / "scratch").string(), 0), 0u) << scratch;
  }
  ScopedEnv output("NOVA_TEST_OUTPUT", nullptr);
  EXPECT_EQ(test::test_output_dir().filename(), "test-output");  // <build>/test-output
}

TEST(ResourcePaths, FixturesEnvironmentVariableLocatesTheFixturesAndTheScriptedServer) {
  {
    ScopedEnv fixtures("NOVA_TEST_FIXTURES", "/opt/box/checkout/tests/fixtures");
    EXPECT_EQ(test::fixtures_dir(), "/opt/box/checkout/tests/fixtures");
    // The scripted LLM server is found beside them, in that checkout.
    EXPECT_EQ(test::ScriptedLlmServer::script_program(),
              "/opt/box/checkout/tests/support/llm_server/scripted_llm_server.py");
  }
  {
    ScopedEnv fixtures("NOVA_TEST_FIXTURES", "");  // set but empty: as if unset
    EXPECT_TRUE(std::filesystem::exists(test::fixtures_dir() / "llm" / "gpu_matmul.script.json"));
  }
  ScopedEnv fixtures("NOVA_TEST_FIXTURES", nullptr);
  EXPECT_EQ(test::fixtures_dir().filename(), "fixtures");  // <source>/tests/fixtures
  EXPECT_TRUE(std::filesystem::exists(test::fixtures_dir() / "llm" / "gpu_matmul.script.json"));
  EXPECT_TRUE(std::filesystem::exists(test::ScriptedLlmServer::script_program()));
}

}  // namespace
}  // namespace nova
