// Inputs that get a precise answer, through the built `nova` binary: a malformed candidate or graph
// names the file and what is wrong in a line (exit 2); the checks that need no GPU answer before the
// "needs a GPU" one (exit 3); a directory or a non-Python file as the model says so; --arch is checked
// against NVRTC before any work; --timeout takes fractions of a second; a captured graph's group
// source leaves nothing behind in the temporary folder; `nova doctor` reports a broken settings file.
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/doctor/doctor_report.h"
#include "core/env/settings.h"
#include "core/gen/builtin_generator.h"
#include "core/worker/child_process.h"
#include "support/graph_fixtures.h"
#include "support/test_paths.h"
#include "support/worker_python.h"

using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace nova {
namespace {

ProcessResult nova_run(std::vector<std::string> args, ChildProcess::Env env = ChildProcess::minimal_env()) {
  args.insert(args.begin(), test::nova_binary().string());
  // Default projects under the build tree, not the user's (which a newer build may have written).
  if (!env.count("NOVA_PROJECTS")) env["NOVA_PROJECTS"] = (test::test_output_dir() / "cli-projects").string();
  return ChildProcess::run(args, env, 300s);
}

fs::path graph_json(const std::string& name) { return test::fixtures_dir() / "graphs" / (name + ".json"); }

// Group `group` of fixture `name`, generated and written as a candidate JSON in `dir`.
fs::path write_candidate(const fs::path& dir, const std::string& name, int group,
                         const std::function<void(nlohmann::json&)>& edit = {}) {
  ModelGraph g = test::graph_fixture(name);
  nlohmann::json j = BuiltinGenerator().generate(g, g.groups.at(static_cast<std::size_t>(group)));
  if (edit) edit(j);
  fs::path path = dir / fmt::format("group{}.candidate.json", group);
  std::ofstream(path) << j.dump(2);
  return path;
}

bool has_gpu() {
  DoctorReport r;
  probe_cuda_driver(r);
  return r.has_gpu();
}

TEST(CliInputErrors, AMalformedCandidateNamesTheFileAndTheReasonInOneShortLine) {
  auto dir = test::scratch_dir("cli_bad_candidate");
  // A candidate cut off inside its kernel source: the parser would quote all of it.
  std::string text =
      nlohmann::json(BuiltinGenerator().generate(test::graph_fixture("swish_bias_clamp"),
                                                 test::graph_fixture("swish_bias_clamp").groups[0]))
          .dump(2);
  fs::path bad = dir / "group0.candidate.json";
  std::ofstream(bad) << text.substr(0, text.find("\"cuda_source\"") + 700) << "\u0001";
  for (const char* command : {"validate", "bench"}) {
    auto r = nova_run(
        {command, graph_json("swish_bias_clamp").string(), "--group", "0", "--candidate", bad.string()});
    EXPECT_EQ(r.status.code, 2) << r.err;
    EXPECT_NE(r.err.find("candidate " + bad.string() + " is not valid JSON: parse error at line"),
              std::string::npos)
        << r.err;
    EXPECT_LT(r.err.size(), 400u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // Valid JSON that is not a candidate.
  std::ofstream(bad, std::ios::trunc) << R"({"format": "something else"})";
  auto r = nova_run(
      {"validate", graph_json("swish_bias_clamp").string(), "--group", "0", "--candidate", bad.string()});
  EXPECT_EQ(r.status.code, 2) << r.err;
  EXPECT_NE(r.err.find("is not a Nova candidate: not a Nova candidate file"), std::string::npos) << r.err;
}

TEST(CliInputErrors, AMalformedGraphNamesTheFileAndTheReason) {
  auto dir = test::scratch_dir("cli_bad_graph");
  fs::path bad = dir / "graph.json";
  std::ofstream(bad) << R"({"nodes": [ {"id": 0, "target": "aten.add.Tensor" )";
  auto gen =
      nova_run({"generate", "model.py", "--graph", bad.string(), "--all", "--out", (dir / "out").string()});
  EXPECT_EQ(gen.status.code, 2) << gen.err;
  EXPECT_NE(gen.err.find("graph " + bad.string() + " is not valid JSON: parse error at line 1"),
            std::string::npos)
      << gen.err;
  fs::path candidate = write_candidate(dir, "swish_bias_clamp", 0);
  auto val = nova_run({"validate", bad.string(), "--group", "0", "--candidate", candidate.string()});
  EXPECT_EQ(val.status.code, 2) << val.err;
  EXPECT_NE(val.err.find("graph " + bad.string() + " is not valid JSON"), std::string::npos) << val.err;
  // Well-formed JSON of the wrong shape.
  std::ofstream(bad, std::ios::trunc) << R"({"nodes": 3})";
  gen = nova_run({"generate", "model.py", "--graph", bad.string(), "--all", "--out", (dir / "out").string()});
  EXPECT_EQ(gen.status.code, 2) << gen.err;
  EXPECT_NE(gen.err.find("graph " + bad.string() + " is not a Nova model graph: "), std::string::npos)
      << gen.err;
}

TEST(CliInputErrors, ChecksThatNeedNoGpuAnswerBeforeTheGpuOne) {
  if (has_gpu()) GTEST_SKIP() << "a GPU is here: the evaluation itself runs the build and reports it";
  auto dir = test::scratch_dir("cli_before_gpu");
  const std::string graph = graph_json("mlp_block").string();
  fs::path c0 = write_candidate(dir, "mlp_block", 0);

  auto missing = nova_run({"validate", graph, "--group", "7", "--candidate", c0.string()});
  EXPECT_EQ(missing.status.code, 2) << missing.err;
  EXPECT_NE(missing.err.find("has no fusion group 7 (it has 4)"), std::string::npos) << missing.err;

  auto other_group = nova_run({"bench", graph, "--group", "1", "--candidate", c0.string()});
  EXPECT_EQ(other_group.status.code, 2) << other_group.err;
  EXPECT_NE(other_group.err.find("was written for fusion group 0, not for --group 1"), std::string::npos)
      << other_group.err;

  // A candidate whose plan takes other inputs than the group it claims.
  fs::create_directories(dir / "relabelled");
  fs::path relabelled =
      write_candidate(dir / "relabelled", "mlp_block", 0, [](nlohmann::json& j) { j["group_id"] = 1; });
  auto mismatch = nova_run({"validate", graph, "--group", "1", "--candidate", relabelled.string()});
  EXPECT_EQ(mismatch.status.code, 2) << mismatch.err;
  EXPECT_NE(mismatch.err.find("takes inputs float32["), std::string::npos) << mismatch.err;
  EXPECT_NE(mismatch.err.find("but fusion group 1 of"), std::string::npos) << mismatch.err;

  fs::create_directories(dir / "broken");  // beside c0, not over it
  fs::path broken = write_candidate(dir / "broken", "swish_bias_clamp", 0, [](nlohmann::json& j) {
    j["cuda_source"] = j["cuda_source"].get<std::string>() + "\nint broken = ;\n";
  });
  auto build = nova_run(
      {"validate", graph_json("swish_bias_clamp").string(), "--group", "0", "--candidate", broken.string()});
  EXPECT_EQ(build.status.code, 1) << build.err;
  EXPECT_NE(build.err.find("does not compile with NVRTC for sm_90: "), std::string::npos) << build.err;
  EXPECT_NE(build.err.find("error"), std::string::npos) << build.err;

  auto baselines =
      nova_run({"bench", graph, "--group", "0", "--candidate", c0.string(), "--baselines", "eager,fast"});
  EXPECT_EQ(baselines.status.code, 2) << baselines.err;
  EXPECT_NE(baselines.err.find("--baselines: 'fast' is not a baseline (eager, compile)"), std::string::npos)
      << baselines.err;

  // All well: only then the GPU.
  auto fine = nova_run({"validate", graph, "--group", "0", "--candidate", c0.string()});
  EXPECT_EQ(fine.status.code, 3) << fine.err;
  EXPECT_NE(fine.err.find("no CUDA GPU here"), std::string::npos) << fine.err;
}

// The full path: a torch extension source is built with nvcc (no GPU needed) before the GPU answer, so
// its compile error is said on a machine without one (issue #21's sweep found it said only "no GPU").
TEST(CliInputErrors, AnExtensionThatDoesNotBuildWithNvccIsSaidBeforeTheGpuAnswer) {
  if (has_gpu()) GTEST_SKIP() << "a GPU is here: the evaluation itself runs the build and reports it";
  auto dir = test::scratch_dir("cli_nvcc_before_gpu");
  const fs::path cu = dir / "broken.cu";
  std::ofstream(cu) << "#include <torch/extension.h>\n"
                       "__global__ void k(float* x) { x[0] = undeclared_name; }\n"
                       "torch::Tensor forward(torch::Tensor x) {\n"
                       "  k<<<1, 1>>>(x.data_ptr<float>());\n"
                       "  return x;\n"
                       "}\n"
                       "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"forward\", &forward); }\n";
  auto r = nova_run({"validate", (test::shared_examples_dir() / "swish_bias_clamp.py").string(), "--candidate",
                     cu.string()});
  EXPECT_EQ(r.status.code, 1) << r.err;
  EXPECT_NE(r.err.find("broken.cu does not build with nvcc for sm_90: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("broken.cu(2): error: identifier \"undeclared_name\" is undefined"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("no CUDA GPU here"), std::string::npos) << r.err;
}

TEST(CliInputErrors, AGraphsGroupSourceIsWrittenPrivatelyAndRemoved) {
  if (has_gpu()) GTEST_SKIP() << "a GPU is here: the validation would run";
  auto dir = test::scratch_dir("cli_private_tmp");
  fs::path tmp = dir / "tmp";
  fs::create_directories(tmp);
  fs::path candidate = write_candidate(dir, "swish_bias_clamp", 0);
  auto env = ChildProcess::minimal_env();
  env["TMPDIR"] = tmp.string();
  auto r = nova_run({"validate", graph_json("swish_bias_clamp").string(), "--group", "0", "--candidate",
                     candidate.string()},
                    env);
  EXPECT_EQ(r.status.code, 3) << r.err;
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(tmp)) left.push_back(e.path().filename().string());
  EXPECT_TRUE(left.empty()) << left.front();
}

TEST(CliInputErrors, ADirectoryOrANonPythonFileAsTheModelSaysSo) {
  auto dir = test::scratch_dir("cli_model_kind");
  fs::path folder = dir / "model.py";
  fs::create_directories(folder);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"intake", folder.string()},
        std::vector<std::string>{"generate", folder.string(), "--all"}}) {
    auto r = nova_run(args);
    EXPECT_EQ(r.status.code, 2) << r.err;
    EXPECT_EQ(r.err, "nova: model " + folder.string() + " is a directory, not a file\n");
  }
  fs::path notes = dir / "notes.txt";
  std::ofstream(notes) << "not a model\n";
  auto text = nova_run({"intake", notes.string()});
  EXPECT_EQ(text.status.code, 2) << text.err;
  EXPECT_NE(text.err.find("model " + notes.string() + " is not a Python file"), std::string::npos)
      << text.err;
  EXPECT_EQ(text.err.find("Traceback"), std::string::npos) << text.err;
  fs::path binary = dir / "weights.py";
  std::ofstream(binary, std::ios::binary) << std::string("PK\x03\x04\0\0\x14\0", 8);
  auto bin = nova_run({"generate", binary.string(), "--all"});
  EXPECT_EQ(bin.status.code, 2) << bin.err;
  EXPECT_NE(bin.err.find("is not Python source: it holds binary data"), std::string::npos) << bin.err;
  auto gone = nova_run({"validate", (dir / "gone.py").string(), "--candidate", notes.string()});
  EXPECT_EQ(gone.status.code, 2) << gone.err;
  EXPECT_NE(gone.err.find("model file not found: " + (dir / "gone.py").string()), std::string::npos)
      << gone.err;
}

TEST(CliInputErrors, TheArchIsCheckedAgainstNvrtcBeforeAnyWork) {
  auto dir = test::scratch_dir("cli_arch");
  fs::path model = dir / "never_read.py";
  std::ofstream(model) << "raise SystemExit('intake must not run')\n";
  auto r =
      nova_run({"generate", model.string(), "--all", "--arch", "sm_13", "--out", (dir / "out").string()});
  EXPECT_EQ(r.status.code, 2) << r.err;
  EXPECT_NE(r.err.find("--arch sm_13: NVRTC "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sm_90"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out"));
  auto ok = nova_run({"generate", "unused.py", "--graph", graph_json("swish_bias_clamp").string(), "--all",
                      "--arch", "sm_90a", "--out", (dir / "out").string()});
  EXPECT_EQ(ok.status.code, 0) << ok.out << ok.err;
}

TEST(CliInputErrors, GenerateTakesAFractionalTimeoutAndShowsIntakeProgress) {
  const std::string python = Settings{}.resolved_python();
  if (!test::has_torch(python)) GTEST_SKIP() << "no torch in " << python;
  auto dir = test::scratch_dir("cli_timeout");
  fs::path hanging = dir / "hanging.py";
  std::ofstream(hanging) << "import time\ntime.sleep(120)\n";
  const auto started = std::chrono::steady_clock::now();
  auto r =
      nova_run({"generate", hanging.string(), "--all", "--timeout", "0.5", "--out", (dir / "out").string()});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(r.status.code, 1) << r.err;
  EXPECT_LT(seconds, 60) << r.err;
  EXPECT_NE(r.err.find("nova: "), std::string::npos) << r.err;

  auto bad = nova_run({"generate", hanging.string(), "--all", "--timeout", "0"});
  EXPECT_NE(bad.status.code, 0);

  auto seed = nova_run({"generate", (test::shared_examples_dir() / "conv2d_min_add_multiply.py").string(),
                        "--all", "--timeout", "300.5", "--out", (dir / "seed").string()});
  EXPECT_EQ(seed.status.code, 0) << seed.err;
  EXPECT_NE(seed.err.find("capturing the graph"), std::string::npos) << seed.err;
  EXPECT_TRUE(fs::exists(dir / "seed" / "group0.cu"));
}

TEST(CliInputErrors, AModelWhoseForwardReturnsNothingSaysSo) {
  const std::string python = Settings{}.resolved_python();
  if (!test::has_torch(python)) GTEST_SKIP() << "no torch in " << python;
  auto dir = test::scratch_dir("cli_forward_none");
  const std::string common =
      "import torch\n\nclass Model(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n\n";
  fs::path none = dir / "returns_none.py";
  std::ofstream(none) << common
                      << "    def forward(self, x):\n        torch.relu(x)\n\n"
                         "def get_inputs():\n    return [torch.randn(4, 8)]\n\ndef get_init_inputs():\n    return []\n";
  fs::path number = dir / "returns_number.py";
  std::ofstream(number) << common
                        << "    def forward(self, x):\n        return float(x.sum())\n\n"
                           "def get_inputs():\n    return [torch.randn(4, 8)]\n\ndef get_init_inputs():\n    return []\n";
  auto r = nova_run({"intake", none.string(), "--no-project"});
  EXPECT_EQ(r.status.code, 2) << r.err;
  EXPECT_NE(r.err.find("Model.forward returned None: Nova optimizes what forward returns"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("Traceback"), std::string::npos) << r.err;
  auto g = nova_run({"generate", number.string(), "--all", "--out", (dir / "out").string(), "--no-project"});
  EXPECT_EQ(g.status.code, 2) << g.err;
  EXPECT_NE(g.err.find("Model.forward returned no tensor (a float)"), std::string::npos) << g.err;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(CliInputErrors, ValidateAndBenchTakeAFractionalTimeoutAndRefuseZero) {
  auto dir = test::scratch_dir("cli_eval_timeout");
  fs::path candidate = write_candidate(dir, "swish_bias_clamp", 0);
  for (const char* command : {"validate", "bench"}) {
    auto zero = nova_run({command, graph_json("swish_bias_clamp").string(), "--group", "0", "--candidate",
                          candidate.string(), "--timeout", "0"});
    EXPECT_EQ(zero.status.code, 2) << zero.err;
    EXPECT_NE(zero.err.find("--timeout"), std::string::npos) << zero.err;
    // A fraction of a second is a valid budget: the command gets past its options (to the GPU
    // answer on a machine without one, or to the worker's watchdog on one).
    auto half = nova_run({command, graph_json("swish_bias_clamp").string(), "--group", "0", "--candidate",
                          candidate.string(), "--timeout", "0.5"});
    EXPECT_EQ(half.err.find("--timeout"), std::string::npos) << half.err;
    if (!has_gpu()) EXPECT_EQ(half.status.code, 3) << half.err;
    else EXPECT_NE(half.status.code, 0) << "half a second cannot hold a worker's start";
  }
}

// `--version N` evaluates a version stored in the project: an unknown version, a benchmark of a version
// that was never validated, --candidate beside --version and neither of them are bad input (exit 2),
// each said in a line; a stored version gets as far as the GPU answer (exit 3 without one).
TEST(CliInputErrors, ValidateAndBenchOfAStoredVersionCheckTheProjectFirst) {
  auto dir = test::scratch_dir("cli_eval_version");
  const std::string model = (test::shared_examples_dir() / "swish_bias_clamp.py").string();
  const std::string project = (dir / "project").string();
  // The graph and the generated versions, stored without a GPU.
  auto stored = nova_run({"optimize", model, "--graph", graph_json("swish_bias_clamp").string(), "--project", project});
  ASSERT_TRUE(stored.status.code == 0 || stored.status.code == 3) << stored.err;
  auto unknown = nova_run({"validate", model, "--version", "999", "--project", project});
  EXPECT_EQ(unknown.status.code, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("no version 999 in the project"), std::string::npos) << unknown.err;
  auto unvalidated = nova_run({"bench", model, "--version", "1", "--project", project});
  EXPECT_EQ(unvalidated.status.code, 2) << unvalidated.err;
  EXPECT_NE(unvalidated.err.find("version 1 has not been validated"), std::string::npos) << unvalidated.err;
  fs::path candidate = write_candidate(dir, "swish_bias_clamp", 0);
  auto both = nova_run({"validate", model, "--version", "1", "--candidate", candidate.string()});
  EXPECT_EQ(both.status.code, 2) << both.err;
  auto neither = nova_run({"validate", model, "--project", project});
  EXPECT_EQ(neither.status.code, 2) << neither.err;
  EXPECT_NE(neither.err.find("give --candidate FILE or --version N"), std::string::npos) << neither.err;
  if (!has_gpu()) {
    auto validate = nova_run({"validate", model, "--version", "1", "--project", project});
    EXPECT_EQ(validate.status.code, 3) << validate.err;
    EXPECT_NE(validate.err.find("no CUDA GPU here"), std::string::npos) << validate.err;
  }
}

TEST(CliInputErrors, DoctorReportsABrokenSettingsFileAsAFinding) {
  auto dir = test::scratch_dir("cli_doctor_settings");
  fs::path settings = dir / "settings.json";
  std::ofstream(settings) << R"({"python": 3, "bench_l2_flush": "clean"})";
  auto env = ChildProcess::minimal_env();
  env["NOVA_SETTINGS"] = settings.string();
  auto r = nova_run({"doctor", "--no-python", "--json"}, env);
  ASSERT_EQ(r.status.code, 0) << r.err;
  auto report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report["settings"]["path"], settings.string());
  const std::string error = report["settings"]["error"].get<std::string>();
  EXPECT_NE(error.find("python is 3: expected a string"), std::string::npos) << error;
  bool noted = false;
  for (const auto& note : report["notes"])
    noted = noted || note.get<std::string>().find(error) != std::string::npos;
  EXPECT_TRUE(noted) << report["notes"].dump();
  auto text = nova_run({"doctor", "--no-python"}, env);
  EXPECT_EQ(text.status.code, 0) << text.err;
  EXPECT_NE(text.out.find("(broken: defaults used)"), std::string::npos) << text.out;
}

// `nova doctor` says what `nova report` lacks in the worker's Python (the GPU box's has none of its packages),
// from what the interpreter answers: here stand-in interpreters that answer as the worker's env_info would.
TEST(CliInputErrors, DoctorSaysWhichReportPackagesTheWorkerPythonLacks) {
  auto dir = test::scratch_dir("cli_doctor_report_packages");
  const auto interpreter = [&](const std::string& name, const std::string& missing) {
    fs::path script = dir / name;
    std::ofstream(script) << "#!/bin/sh\necho '{\"executable\": \"/fake/python\", \"python\": \"3.12.3\", "
                             "\"torch_ok\": true, \"torch\": \"2.11.0\", \"torch_cuda\": \"13.0\", "
                             "\"cuda_available\": false, \"devices\": []"
                          << missing << "}'\n";
    fs::permissions(script, fs::perms::owner_all);
    return script.string();
  };
  const auto doctor = [&](const std::string& python, bool json) {
    std::vector<std::string> args{"doctor", "--python", python};
    if (json) args.push_back("--json");
    auto r = nova_run(args);
    EXPECT_EQ(r.status.code, 0) << r.err;
    return r.out;
  };
  const std::string none = interpreter("none.sh", R"(, "report_missing": ["jsonschema", "matplotlib", "weasyprint"])");
  EXPECT_NE(doctor(none, false).find("  report      nova report cannot run here: missing jsonschema, matplotlib, "
                                     "weasyprint (packaging/requirements.txt)\n"),
            std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(doctor(none, true))["python"]["report_missing"],
            (nlohmann::json{"jsonschema", "matplotlib", "weasyprint"}));
  const std::string no_pdf = interpreter("no_pdf.sh", R"(, "report_missing": ["weasyprint"])");
  EXPECT_NE(doctor(no_pdf, false).find("  report      HTML only: weasyprint is missing"), std::string::npos);
  const std::string all = interpreter("all.sh", R"(, "report_missing": [])");
  EXPECT_NE(doctor(all, false).find("  report      jsonschema, jinja2, matplotlib and weasyprint: HTML and PDF"),
            std::string::npos);
  // An interpreter that does not say (an older worker package): no line, and null in the JSON.
  const std::string silent = interpreter("silent.sh", "");
  EXPECT_EQ(doctor(silent, false).find("  report  "), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(doctor(silent, true))["python"]["report_missing"].is_null());
}

}  // namespace
}  // namespace nova
