// The export (core/export) of a project built from recorded H200 results: the package for the shipped
// group is written (build files with a CUDAExtension and py_limited_api, ops registered with
// TORCH_LIBRARY and no pybind11 module, the manifest, the README with the stored figures), its own
// pytest suite runs on the CPU (op schemas, ModelNew's signatures and state_dict keys against the
// original Model, the whole model through the PyTorch fallbacks); bad inputs (a model file changed
// since intake, an unvalidated or declined choice, a non-empty output folder, a failed build check, no
// nvcc, a Model that cannot be rebuilt from get_init_inputs()) each give their message and leave
// nothing behind. ExportPackageBuild compiles the package's sources with nvcc for sm_90.
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/build/package_installer.h"
#include "core/env/build_info.h"
#include "core/env/settings.h"
#include "core/export/export_error.h"
#include "core/export/export_planner.h"
#include "core/export/package_build_check.h"
#include "core/export/package_writer.h"
#include "core/project/project_error.h"
#include "core/session/project_session.h"
#include "support/graph_fixtures.h"
#include "support/test_paths.h"
#include "support/worker_python.h"

namespace nova {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

json read_json(const fs::path& p) {
  std::ifstream in(p);
  EXPECT_TRUE(in) << "missing fixture " << p;
  return json::parse(in);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The H200 validation of this group's primary (device run S, tests/fixtures/generator_run): passed.
json recorded_validation() {
  return read_json(test::fixtures_dir() / "generator_run" / "h200_clean" / "matmul_scaling_residual_add_g0.validate.json");
}
json recorded_bench() { return read_json(test::fixtures_dir() / "bench" / "matmul_scaling_residual_add_g0.h200.json"); }
// The same run with the candidate's samples at 1.5x eager's: slower beyond the noise, declined.
json declined_bench() {
  json j = recorded_bench();
  std::map<std::string, json> eager;
  for (const auto& m : j["measurements"])
    if (m["variant"] == "eager") eager[m["mode"]] = m["samples"];
  for (auto& m : j["measurements"])
    if (m["variant"] == "candidate") {
      m["samples"] = eager[m["mode"]];
      for (auto& x : m["samples"]) x = x.get<double>() * 1.5;
    }
  return j;
}

// A WorkerRunner answering evaluate with a recorded result.
class RecordedRunner : public WorkerRunner {
 public:
  explicit RecordedRunner(json bench) : bench_(std::move(bench)) {}
  json run(const std::string& cmd, const json&, const WorkerCall&) override {
    if (cmd == "build_ext") return {{"build_s", 1.0}};  // a full-path version's nvcc build
    if (cmd != "evaluate") throw std::runtime_error("unexpected command " + cmd);
    return {{"validation", recorded_validation()}, {"benchmark", bench_}};
  }

 private:
  json bench_;
};

// No leftovers of a failed export in `parent`: only `keep` is there.
void expect_only(const fs::path& parent, const std::vector<std::string>& keep) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(parent)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  auto want = keep;
  std::sort(want.begin(), want.end());
  EXPECT_EQ(names, want);
}

// `run` throws ExportError with `words` in its message.
template <typename F>
void expect_export_error(F run, const std::string& words) {
  try {
    run();
    ADD_FAILURE() << "no ExportError (expected one saying \"" << words << "\")";
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

struct ExportFixture : ::testing::Test {
  fs::path dir = test::scratch_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::path model = dir / "matmul_scaling_residual_add.py";
  ModelGraph graph = test::graph_fixture("matmul_scaling_residual_add");
  std::unique_ptr<ProjectSession> session;
  std::int64_t version = 0;

  void SetUp() override {
    fs::copy_file(test::shared_examples_dir() / "matmul_scaling_residual_add.py", model);
    graph.model_path = model.string();
  }
  // The project: the recorded graph, the builtin generator's versions, the primary evaluated with
  // the recorded H200 benchmark `bench`.
  void build(json bench = recorded_bench()) {
    SessionOptions o;
    o.model = model;
    o.project = dir / "project";
    o.python = "python3";  // never started: the runner answers from recordings
    session = std::make_unique<ProjectSession>(o, std::make_unique<RecordedRunner>(std::move(bench)));
    session->import_graph(graph);
    JobInfo gen = session->wait(session->generate());
    ASSERT_EQ(gen.state, JobState::Succeeded) << gen.error;
    version = gen.result["primary"][0].get<std::int64_t>();
    JobInfo eval = session->wait(session->evaluate(version));
    ASSERT_EQ(eval.state, JobState::Succeeded) << eval.error;
  }
  ExportPlan plan(const ExportOptions& options = {}) {
    return ExportPlanner::plan(session->store(), session->model_unchanged(), options);
  }
};

TEST_F(ExportFixture, ThePlanShipsTheVersionWhoseBenchmarkShips) {
  build();
  ExportPlan p = plan();
  EXPECT_EQ(p.package_name, "nova_matmul_scaling_residual_add");
  EXPECT_EQ(p.arch_list, "8.0;9.0+PTX");
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_TRUE(p.groups[0].ships());
  EXPECT_EQ(p.groups[0].version_id, version);
  EXPECT_EQ(p.model_source, read_text(model));
}

TEST_F(ExportFixture, APackageIsWrittenAndItsOwnTestsPassOnTheCpu) {
  build();
  ExportOptions options;
  options.arch_list = "9.0";
  ExportPlan p = plan(options);
  const fs::path out = dir / "pkg";
  std::vector<std::string> said;
  PackageWriter::write(p, out, "nova export m.py --out pkg", [&](const std::string& m) { said.push_back(m); });
  EXPECT_FALSE(said.empty());
  const std::string pkg = "nova_matmul_scaling_residual_add";
  for (const char* f : {"pyproject.toml", "setup.py", "README.md", "benchmark.py", "csrc/ops.cpp", "csrc/group_0.cu",
                        "tests/test_ops.py", "tests/test_model.py", "tests/conftest.py", "installed_first.py"})
    EXPECT_TRUE(fs::is_regular_file(out / f)) << f;
  for (const char* f : {"__init__.py", "_ops.py", "_runtime.py", "_stats.py", "package.json", "client_model.py",
                        "groups/group_0.py"})
    EXPECT_TRUE(fs::is_regular_file(out / pkg / f)) << f;
  expect_only(dir, {"matmul_scaling_residual_add.py", "pkg", "project"});

  const std::string setup = read_text(out / "setup.py"), ops = read_text(out / "csrc/ops.cpp");
  EXPECT_NE(setup.find("CUDAExtension("), std::string::npos);
  EXPECT_NE(setup.find("py_limited_api=True"), std::string::npos);
  EXPECT_NE(setup.find("\"TORCH_CUDA_ARCH_LIST\", \"9.0\""), std::string::npos);
  EXPECT_NE(ops.find("TORCH_LIBRARY(" + pkg + ", m)"), std::string::npos);
  EXPECT_NE(ops.find("group_0(Tensor input_0, Tensor input_1, Tensor input_2) -> Tensor[]"), std::string::npos);
  const std::string cu = read_text(out / "csrc/group_0.cu");
  EXPECT_NE(cu.find("TORCH_LIBRARY_IMPL(" + pkg + ", CUDA, m)"), std::string::npos);
  // The op's twin without an autograd formula (what the package calls with autograd off), same kernels.
  EXPECT_NE(ops.find("group_0_infer(Tensor input_0, Tensor input_1, Tensor input_2) -> Tensor[]"), std::string::npos);
  EXPECT_NE(cu.find("m.impl(\"group_0_infer\", &group_0);"), std::string::npos);
  for (const auto& f : {ops, cu, setup}) EXPECT_EQ(f.find("PYBIND11_MODULE"), std::string::npos);
  json manifest = read_json(out / pkg / "package.json");
  EXPECT_EQ(manifest["groups"][0]["ships"], true);
  EXPECT_EQ(manifest["groups"][0]["version_id"], version);
  EXPECT_EQ(manifest["model_form"], "functional");
  const std::string readme = read_text(out / "README.md");
  EXPECT_NE(readme.find("pip install --no-build-isolation ."), std::string::npos);
  EXPECT_NE(readme.find("Backward passes are not accelerated"), std::string::npos);
  EXPECT_NE(readme.find("nova export m.py --out pkg"), std::string::npos);
  EXPECT_NE(readme.find("Whole model: not measured"), std::string::npos);
  EXPECT_NE(readme.find("with torch.no_grad():"), std::string::npos);  // inference, as the figures were timed
  // What compiling ModelNew costs (session 21: slower per call in wall time on every shared example).
  EXPECT_NE(readme.find("slower per call than `ModelNew` alone"), std::string::npos);
  // The stored benchmark's cold ratio against eager, as the project holds it.
  const auto& s = p.groups[0].benchmark->speedups;
  auto cold = std::find_if(s.begin(), s.end(), [](const Speedup& x) { return x.mode == "cold" && x.baseline == "eager"; });
  ASSERT_NE(cold, s.end());
  EXPECT_NE(readme.find(fmt::format("| 0 | {:.2f}x", cold->value)), std::string::npos) << readme;

  // The package's own pytest suite on the CPU: schemas, signatures, state_dict keys, the fallbacks.
  const std::string python = Settings{}.resolved_python();
  ASSERT_TRUE(test::has_torch(python)) << python << " has no torch";
  auto env = ChildProcess::minimal_env();
  env["PYTHONPATH"] = out.string();
  ProcessResult r = ChildProcess::run({python, "-m", "pytest", "-q", "-p", "no:cacheprovider", (out / "tests").string()},
                                      env, 15min);
  ASSERT_FALSE(r.timed_out);
  EXPECT_TRUE(r.status.exited && r.status.code == 0) << r.out << r.err;
  EXPECT_NE(r.out.find(" passed"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("failed"), std::string::npos) << r.out;
}

TEST_F(ExportFixture, AModelFileChangedSinceIntakeIsRefused) {
  build();
  std::ofstream(model, std::ios::app) << "\n# edited after intake\n";
  expect_export_error([&] { plan(); }, "changed since its intake");
}

TEST_F(ExportFixture, ADeclinedVersionDoesNotShipAndCannotBeChosen) {
  build(declined_bench());
  ExportPlan p = plan();
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_FALSE(p.groups[0].ships());
  EXPECT_NE(p.groups[0].reason.find("slower"), std::string::npos) << p.groups[0].reason;
  EXPECT_THROW(session->store().choose_for_export(version), ProjectError);
  EXPECT_EQ(plan().shipped(), 0);
}

// A full-path version (an LLM's answer in KernelBench's ModelNew form, a torch extension) is not shipped
// yet: chosen for export, the plan refuses it and says why; the builtin version still ships.
TEST_F(ExportFixture, AFullPathVersionIsNotShippedAndSaysWhy) {
  build();
  CandidateVersion v = session->store().version(version);
  json plan_j = json::parse(v.plan_json);
  plan_j["path"] = "full";
  plan_j["plan"]["steps"] = json::array();
  v.id = 0;
  v.parent_id = version;
  v.origin.kind = OriginKind::user_edit;  // evaluated outside the sandbox: the recorded runner answers
  v.plan_json = plan_j.dump();
  v.source = R"(#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void fill(float* out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = 0.0f;
}
torch::Tensor forward(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  auto out = torch::empty({x.size(0), w.size(0)}, x.options());
  fill<<<(out.numel() + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(out.data_ptr<float>(), out.numel());
  return out;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward); }
)";
  const std::int64_t full = session->store().add_version(v);
  JobInfo eval = session->wait(session->evaluate(full));
  ASSERT_EQ(eval.state, JobState::Succeeded) << eval.error;
  session->store().choose_for_export(full);
  expect_export_error([&] { plan(); }, fmt::format("version {} is a full-path torch extension", full));
  session->store().choose_for_export(version);
  EXPECT_EQ(plan().groups[0].version_id, version);
}

// A package where no group ships (every group keeps the client's PyTorch) still installs: pip builds
// it into a private folder (what `nova check-package` does before its GPU part), a second install of
// the same package is found in the cache, and the installed package imports and says it has no kernels.
TEST_F(ExportFixture, APackageWithoutKernelsInstallsWithPipIntoAPrivateFolderAndImports) {
  build(declined_bench());
  ExportPlan p = plan();
  ASSERT_EQ(p.shipped(), 0);
  const fs::path out = dir / "pkg";
  PackageWriter::write(p, out, "nova export m.py --out pkg");
  const std::string python = Settings{}.resolved_python();
  ASSERT_TRUE(test::has_torch(python)) << python << " has no torch";
  std::vector<std::string> said;
  const fs::path site = PackageInstaller::install(out, dir / "cache", python, [&](const std::string& m) { said.push_back(m); });
  EXPECT_EQ(site.parent_path().parent_path(), dir / "cache");
  EXPECT_EQ(site.parent_path().filename().string(), PackageInstaller::content_hash(out));
  EXPECT_TRUE(fs::is_regular_file(site / "nova_matmul_scaling_residual_add" / "package.json"));
  said.clear();
  EXPECT_EQ(PackageInstaller::install(out, dir / "cache", python, [&](const std::string& m) { said.push_back(m); }), site);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("already built"), std::string::npos) << said[0];
  auto env = ChildProcess::minimal_env();
  env["PYTHONPATH"] = site.string();
  ProcessResult r = ChildProcess::run(
      {python, "-c", "import nova_matmul_scaling_residual_add as p; print(p.COMPILED, p.LOAD_ERROR)"}, env, 5min);
  EXPECT_TRUE(r.status.exited && r.status.code == 0) << r.out << r.err;
  EXPECT_EQ(r.out, "False no group ships a kernel\n");
  // A folder pip cannot build: the error carries pip's own words, and no cache entry is left.
  const fs::path broken = dir / "broken";
  fs::create_directories(broken);
  std::ofstream(broken / "setup.py") << "raise SystemExit('this setup.py refuses to build')\n";
  try {
    PackageInstaller::install(broken, dir / "cache", python);
    ADD_FAILURE() << "a broken package installed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("pip could not build the package"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "cache" / PackageInstaller::content_hash(broken)));
}

// `nova check-package --build-only`: the package is built into the project's cache (where the check's
// GPU part finds it by content hash) on a machine without a GPU, and says where.
TEST_F(ExportFixture, CheckPackageBuildOnlyBuildsIntoTheProjectsCacheWithoutAGpu) {
  build(declined_bench());
  session.reset();  // the CLI opens the project itself
  const fs::path out = dir / "pkg";
  ProcessResult e = ChildProcess::run({test::nova_binary().string(), "export", model.string(), "--project",
                                       (dir / "project").string(), "--out", out.string()},
                                      test::worker_env(), 5min);
  ASSERT_TRUE(e.status.exited && e.status.code == 0) << e.out << e.err;
  ProcessResult r = ChildProcess::run({test::nova_binary().string(), "check-package", model.string(), "--project",
                                       (dir / "project").string(), "--package", out.string(), "--build-only"},
                                      test::worker_env(), 10min);
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.out << r.err;
  const fs::path site = dir / "project" / "packages" / PackageInstaller::content_hash(out) / "site";
  EXPECT_NE(r.out.find("built into " + site.string()), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_regular_file(site / "nova_matmul_scaling_residual_add" / "package.json"));
}

TEST_F(ExportFixture, AnUnvalidatedChoiceIsRefused) {
  build();
  const std::int64_t edit = session->store().add_user_edit(version, session->store().version(version).source + "\n");
  session->store().choose_for_export(edit);
  expect_export_error([&] { plan(); }, "never validated");
}

TEST_F(ExportFixture, ANonEmptyOutputFolderAndAFailedBuildLeaveNothingBehind) {
  build();
  ExportPlan p = plan();
  fs::create_directories(dir / "taken");
  std::ofstream(dir / "taken" / "mine.txt") << "the user's";
  expect_export_error([&] { PackageWriter::write(p, dir / "taken", "nova export"); }, "is not empty");
  EXPECT_EQ(read_text(dir / "taken" / "mine.txt"), "the user's");
  auto failing = [](const fs::path&) { throw ExportError("the package does not build: nvcc failed"); };
  expect_export_error([&] { PackageWriter::write(p, dir / "out", "nova export", {}, failing); }, "nvcc failed");
  expect_only(dir, {"matmul_scaling_residual_add.py", "project", "taken"});
  // Folders above --out are made as needed, and taken away when the export fails.
  expect_export_error([&] { PackageWriter::write(p, dir / "new" / "deeper" / "out", "nova export", {}, failing); },
                      "nvcc failed");
  expect_only(dir, {"matmul_scaling_residual_add.py", "project", "taken"});
  expect_export_error([&] { PackageWriter::write(p, dir / "taken" / "mine.txt" / "out", "nova export"); },
                      "cannot create the folder");
  EXPECT_EQ(read_text(dir / "taken" / "mine.txt"), "the user's");
  PackageWriter::write(p, dir / "new" / "deeper" / "out", "nova export");
  EXPECT_TRUE(fs::exists(dir / "new" / "deeper" / "out" / "setup.py"));
}

TEST(ExportChecks, NamesArchitecturesAndNvccAreCheckedWithClearMessages) {
  EXPECT_NO_THROW(ExportPlanner::check_package_name("nova_model"));
  EXPECT_THROW(ExportPlanner::check_package_name("9lives"), ExportError);
  EXPECT_THROW(ExportPlanner::check_package_name("a-b"), ExportError);
  EXPECT_THROW(ExportPlanner::check_package_name("import"), ExportError);
  EXPECT_THROW(ExportPlanner::check_package_name("torch"), ExportError);
  EXPECT_NO_THROW(ExportPlanner::check_arch_list("8.0;9.0+PTX"));
  EXPECT_NO_THROW(ExportPlanner::check_arch_list("9.0a"));
  EXPECT_THROW(ExportPlanner::check_arch_list("sm_90"), ExportError);
  EXPECT_THROW(ExportPlanner::check_arch_list("9.0\"); import os; ("), ExportError);
  EXPECT_EQ(ExportPlanner::default_package_name("/x/My-Model.v2.py"), "nova_my_model_v2");
  expect_export_error([] { PackageBuildCheck::nvcc("/nonexistent/cuda"); }, "nvcc is not in /nonexistent/cuda/bin");
}

TEST(ExportCli, AModelThatCannotBeRebuiltFromGetInitInputsIsRefused) {
  const fs::path dir = test::scratch_dir("export_cli_rebuild");
  const fs::path model = dir / "bad_init.py";
  std::ofstream(model) << "import torch\n"
                          "class Model(torch.nn.Module):\n"
                          "    def __init__(self, n):\n"
                          "        super().__init__()\n"
                          "        self.l = torch.nn.Linear(n, n)\n"
                          "    def forward(self, x):\n"
                          "        return self.l(x)\n"
                          "def get_inputs():\n"
                          "    return [torch.randn(2, 4)]\n"
                          "def get_init_inputs():\n"
                          "    return [4, 5]\n";
  ProcessResult r = ChildProcess::run({test::nova_binary().string(), "export", model.string(), "--project",
                                       (dir / "project").string(), "--out", (dir / "pkg").string()},
                                      test::worker_env(), 5min);
  EXPECT_EQ(r.status.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("Model cannot be rebuilt from get_init_inputs()"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "pkg"));
}

TEST_F(ExportFixture, NovaExportWritesThePackageAndRecordsTheExportInTheProject) {
  build();
  session.reset();  // the CLI opens the project itself
  const fs::path out = dir / "cli_pkg";
  ProcessResult r = ChildProcess::run({test::nova_binary().string(), "export", model.string(), "--project",
                                       (dir / "project").string(), "--out", out.string(), "--name", "client_kernels"},
                                      test::worker_env(), 5min);
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.out << r.err;
  EXPECT_NE(r.out.find("1 of 1 fusion groups ship kernels"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(fmt::format("group 0 (gemm+epilogue): version {} ships", version)), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_regular_file(out / "client_kernels" / "package.json"));
  EXPECT_NE(read_text(out / "README.md").find("--name client_kernels"), std::string::npos);
  ProjectStore store = ProjectStore::open(dir / "project");
  ASSERT_EQ(store.exports().size(), 1u);
  EXPECT_EQ(store.exports()[0].version_id, version);
  // A second export into the same folder is refused and changes nothing.
  ProcessResult again = ChildProcess::run({test::nova_binary().string(), "export", model.string(), "--project",
                                           (dir / "project").string(), "--out", out.string()},
                                          test::worker_env(), 5min);
  EXPECT_EQ(again.status.code, 2) << again.err;
  EXPECT_NE(again.err.find("is not empty"), std::string::npos) << again.err;
  EXPECT_EQ(ProjectStore::open(dir / "project").exports().size(), 1u);
}

TEST_F(ExportFixture, ThePackagesSourcesCompileWithNvccForSm90) {
  build();
  const fs::path out = dir / "pkg";
  const auto nvcc = PackageBuildCheck::nvcc(build_info::cuda_toolkit_dir());
  const auto includes = PackageBuildCheck::include_dirs(Settings{}.resolved_python());
  ASSERT_FALSE(includes.empty());
  PackageWriter::write(plan(), out, "nova export", {}, [&](const fs::path& temp) {
    PackageBuildCheck::compile(temp, nvcc, includes, "90");
  });
  EXPECT_TRUE(fs::is_regular_file(out / "csrc" / "group_0.cu"));
}

}  // namespace
}  // namespace nova
