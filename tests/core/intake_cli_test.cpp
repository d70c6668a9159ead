// `nova intake` end to end, through the built binary.
#include <fstream>

#include <gtest/gtest.h>

#include "core/graph/model_graph.h"
#include "core/project/project_store.h"
#include "core/worker/child_process.h"
#include "support/test_paths.h"

using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace nova {
namespace {

// Every file and folder under `root` that is readable, writable or enterable by others.
std::vector<std::string> open_to_others(const fs::path& root) {
  std::vector<std::string> loose;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const auto p = e.symlink_status().permissions();
    if ((p & (fs::perms::group_all | fs::perms::others_all)) != fs::perms::none)
      loose.push_back(fs::relative(e.path(), root).string());
  }
  return loose;
}

TEST(IntakeCli, SeedDemoWritesGraphJsonAndSummary) {
  auto dir = test::scratch_dir("intake_cli_seed");
  auto out = dir / "seed.json";
  auto env = ChildProcess::minimal_env();
  env["NOVA_PROJECTS"] = (dir / "projects").string();  // not the user's projects
  auto r = ChildProcess::run(
      {test::nova_binary().string(), "intake",
       (test::shared_examples_dir() / "conv2d_min_add_multiply.py").string(), "--json", out.string()},
      env, 180s);
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.out << r.err;
  EXPECT_NE(r.out.find("captured by torch.export"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("conv+epilogue"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("intake took"), std::string::npos) << r.out;
  std::ifstream f(out);
  ModelGraph g = nlohmann::json::parse(f).get<ModelGraph>();
  ASSERT_EQ(g.groups.size(), 1u);
  EXPECT_EQ(g.groups[0].kind, "conv+epilogue");
  EXPECT_TRUE(fs::exists(dir / "conv2d_min_add_multiply.inputs.safetensors"));
  // The graph (functional sources) and the example inputs are the client's: the user's only.
  EXPECT_EQ(open_to_others(dir), std::vector<std::string>{});
}

TEST(IntakeCli, BrokenModelExitsWithCode2AndAPlainMessage) {
  auto r = ChildProcess::run({test::nova_binary().string(), "intake",
                              (test::shared_examples_dir() / "broken" / "get_inputs_raises.py").string()},
                             ChildProcess::minimal_env(), 180s);
  EXPECT_TRUE(r.status.exited);
  EXPECT_EQ(r.status.code, 2) << r.err;
  EXPECT_NE(r.err.find("nova: get_inputs() raised RuntimeError: dataset shard not found"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("raise RuntimeError(\"dataset shard not found\")"), std::string::npos) << r.err;

  auto missing = ChildProcess::run({test::nova_binary().string(), "intake", "/nonexistent/model.py"},
                                   ChildProcess::minimal_env(), 60s);
  EXPECT_EQ(missing.status.code, 2);
  EXPECT_EQ(missing.err, "nova: model file not found: /nonexistent/model.py\n");
}

TEST(IntakeCli, IntakeAndGenerateStoreTheirResultsInTheProjectTheStudioOpens) {
  auto dir = test::scratch_dir("intake_cli_project");
  const fs::path model = dir / "conv2d_min_add_multiply.py";
  fs::copy_file(test::shared_examples_dir() / "conv2d_min_add_multiply.py", model);
  const fs::path project = dir / "project";
  const fs::path graph = dir / "graph.json";
  auto env = ChildProcess::minimal_env();
  env["NOVA_PROJECTS"] = (dir / "default-projects").string();
  auto nova = [&](std::vector<std::string> args) {
    args.insert(args.begin(), test::nova_binary().string());
    return ChildProcess::run(args, env, 300s);
  };
  auto intake = nova({"intake", model.string(), "--json", graph.string(), "--project", project.string()});
  ASSERT_EQ(intake.status.code, 0) << intake.err;
  EXPECT_NE(intake.out.find("graph stored in project " + project.string()), std::string::npos) << intake.out;
  {
    ProjectStore store = ProjectStore::open(project);
    ASSERT_TRUE(store.model());
    ModelGraph stored = nlohmann::json::parse(store.model()->graph_json).get<ModelGraph>();
    ASSERT_EQ(stored.groups.size(), 1u);
    EXPECT_EQ(stored.groups[0].kind, "conv+epilogue");
  }
  auto gen = nova({"generate", model.string(), "--all", "--graph", graph.string(), "--out",
                   (dir / "out").string(), "--project", project.string()});
  ASSERT_EQ(gen.status.code, 0) << gen.err;
  EXPECT_NE(gen.out.find("project " + project.string() + ": "), std::string::npos) << gen.out;
  std::size_t versions = 0;
  {
    ProjectStore store = ProjectStore::open(project);
    ASSERT_EQ(store.fusion_groups().size(), 1u);
    versions = store.versions(store.fusion_groups()[0].id).size();
    EXPECT_GE(versions, 1u);
  }
  // The project already holds this generation: a second run adds nothing, and `nova status` shows it.
  auto again = nova({"generate", model.string(), "--all", "--graph", graph.string(), "--out",
                     (dir / "out2").string(), "--project", project.string()});
  ASSERT_EQ(again.status.code, 0) << again.err;
  EXPECT_NE(again.out.find(": 0 version(s) added"), std::string::npos) << again.out;
  auto status = nova({"status", model.string(), "--project", project.string()});
  EXPECT_EQ(status.status.code, 0) << status.err;
  EXPECT_NE(status.out.find("conv+epilogue"), std::string::npos) << status.out;
  // The project (its file, job records and work folders), the graph and the candidates: the user's only.
  EXPECT_EQ(open_to_others(project), std::vector<std::string>{});
  EXPECT_EQ(open_to_others(dir / "out"), std::vector<std::string>{});
  EXPECT_EQ(fs::status(graph).permissions() & (fs::perms::group_all | fs::perms::others_all), fs::perms::none);
  // --no-project stores nothing anywhere.
  auto none = nova({"generate", model.string(), "--all", "--graph", graph.string(), "--out",
                    (dir / "out3").string(), "--no-project"});
  ASSERT_EQ(none.status.code, 0) << none.err;
  EXPECT_FALSE(fs::exists(dir / "default-projects"));
  auto both = nova({"intake", model.string(), "--project", project.string(), "--no-project"});
  EXPECT_EQ(both.status.code, 2) << both.err;
}

}  // namespace
}  // namespace nova
