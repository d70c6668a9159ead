// The settings file the studio and the CLI share: what round-trips (keys this version does not know
// included), the defaults for keys an older file lacks or holds as null, and a clear error naming the
// key and the type it needs for a value that cannot be used.
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

TEST(Settings, GpuLanesAndTheRayClusterRoundTripAndDefaultToOneLocalLane) {
  auto path = test::scratch_dir("settings_ray") / "settings.json";
  Settings s;
  EXPECT_EQ(s.gpu_lanes, 1);
  EXPECT_TRUE(s.ray_address.empty());
  s.gpu_lanes = 4;
  s.ray_address = "10.0.0.5:6379";
  s.ray_gpu_kind = "H100";
  s.save(path);
  Settings back = Settings::load(path);
  EXPECT_EQ(back.gpu_lanes, 4);
  EXPECT_EQ(back.ray_address, "10.0.0.5:6379");
  EXPECT_EQ(back.ray_gpu_kind, "H100");
  EXPECT_TRUE(back.unknown_keys.empty()) << back.unknown_keys.dump();
  for (const char* bad : {R"({"gpu_lanes": 0})", R"({"gpu_lanes": "all"})", R"({"ray_address": 6379})"}) {
    std::ofstream(path) << bad;
    EXPECT_THROW(Settings::load(path), std::runtime_error) << bad;
  }
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

TEST(Settings, AValueOfTheWrongTypeNamesTheKeyAndTheTypeItNeeds) {
  auto path = test::scratch_dir("settings_types") / "settings.json";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"python": 3})", "python is 3: expected a string (the worker's Python interpreter)"},
      {R"({"recent_models": ["/a.py", 7]})", R"(recent_models is ["/a.py",7]: expected a list of strings)"},
      {R"({"bench_copy_reference": "yes"})", R"(bench_copy_reference is "yes": expected true or false)"},
      {R"({"cuda_toolkit": {"path": "/usr"}})", "cuda_toolkit is {\"path\":\"/usr\"}: expected a string"},
      {R"([1, 2])", "the file holds array: expected a JSON object"},
      {R"({"python": "/p",)", "parse error at line 1"}};
  for (const auto& [text, message] : cases) {
    std::ofstream(path, std::ios::trunc) << text;
    try {
      Settings::load(path);
      ADD_FAILURE() << "loaded " << text;
    } catch (const std::runtime_error& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("settings file " + path.string() + " cannot be read: "), std::string::npos) << what;
      EXPECT_NE(what.find(message), std::string::npos) << what;
      EXPECT_EQ(what.find("[json.exception"), std::string::npos) << what;
    }
  }
}

TEST(Settings, NullMeansTheDefault) {
  auto path = test::scratch_dir("settings_null") / "settings.json";
  std::ofstream(path) << R"({"python": null, "recent_models": null, "default_generator": null,
                            "bench_copy_reference": null, "bench_l2_flush": null, "cuda_toolkit": null})";
  Settings s = Settings::load(path);
  EXPECT_EQ(s.python, "");
  EXPECT_TRUE(s.recent_models.empty());
  EXPECT_EQ(s.default_generator, "builtin");
  EXPECT_TRUE(s.bench_copy_reference);
  EXPECT_EQ(s.bench_l2_flush, "clean");
}

TEST(Settings, KeysThisVersionDoesNotKnowAreKeptWhenSaving) {
  auto path = test::scratch_dir("settings_unknown") / "settings.json";
  std::ofstream(path) << R"({"python": "/p", "theme": "dark", "llm": {"provider": "x", "max_tokens": 4096}})";
  Settings s = Settings::load(path);
  s.python = "/q";
  s.add_recent("/m.py");
  s.save(path);
  std::ifstream in(path);
  nlohmann::json saved = nlohmann::json::parse(in);
  EXPECT_EQ(saved["python"], "/q");
  EXPECT_EQ(saved["theme"], "dark");
  EXPECT_EQ(saved["llm"], (nlohmann::json{{"provider", "x"}, {"max_tokens", 4096}}));
  EXPECT_EQ(saved["recent_models"], nlohmann::json::array({"/m.py"}));
  Settings back = Settings::load(path);
  EXPECT_EQ(back.unknown_keys, (nlohmann::json{{"theme", "dark"}, {"llm", saved["llm"]}}));
  EXPECT_EQ(back.python, "/q");
}

}  // namespace
}  // namespace nova
