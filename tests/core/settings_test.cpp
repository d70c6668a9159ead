// The settings file the studio and the CLI share: what round-trips, the defaults for keys an older
// file lacks, and a clear error for a value that cannot be used.
#include <fstream>

#include <gtest/gtest.h>

#include "core/env/settings.h"
#include "support/test_paths.h"

namespace nova {
namespace {

TEST(Settings, BenchmarkChoicesRoundTripAndDefaultToTheCopyReferenceAndACleanFlush) {
  auto path = test::scratch_dir("settings") / "settings.json";
  Settings s;
  EXPECT_TRUE(s.bench_copy_reference);
  EXPECT_EQ(s.bench_l2_flush, "clean");
  s.python = "/opt/py/bin/python3";
  s.bench_copy_reference = false;
  s.bench_l2_flush = "dirty";
  s.save(path);
  Settings back = Settings::load(path);
  EXPECT_EQ(back.python, "/opt/py/bin/python3");
  EXPECT_FALSE(back.bench_copy_reference);
  EXPECT_EQ(back.bench_l2_flush, "dirty");
  // A file written before the benchmark choices existed gets the defaults.
  std::ofstream(path) << R"({"python": "", "recent_models": ["/m.py"], "default_generator": "builtin"})";
  Settings old = Settings::load(path);
  EXPECT_TRUE(old.bench_copy_reference);
  EXPECT_EQ(old.bench_l2_flush, "clean");
  EXPECT_EQ(old.recent_models, std::vector<std::string>{"/m.py"});
}

TEST(Settings, AnUnknownFlushIsAnErrorNamingTheFileAndTheValue) {
  auto path = test::scratch_dir("settings_bad") / "settings.json";
  std::ofstream(path) << R"({"bench_l2_flush": "lukewarm"})";
  try {
    Settings::load(path);
    FAIL() << "loaded a flush that does not exist";
  } catch (const std::runtime_error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(path.string()), std::string::npos) << what;
    EXPECT_NE(what.find("bench_l2_flush is 'lukewarm': it must be clean or dirty"), std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace nova
