// `nova llm` through the built binary, against the scripted loopback server: without a GPU it asks
// for the first candidate, stores it, and stops at its evaluation with the engine's "needs a GPU"
// error (exit 3); the API key, given in an environment variable, reaches the provider and no file of
// the project, the settings or the output. Bad input (an unknown provider, an unset key variable, a
// group the model lacks) is an error naming what is wrong (exit 2). `nova optimize --llm` searches every
// group; the consent to unsandboxed runs is stored in the project.
#include <algorithm>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/doctor/doctor_report.h"
#include "core/llm/llm_search_store.h"
#include "core/project/project_store.h"
#include "core/sandbox/sandbox_probe.h"
#include "core/sandbox/unsandboxed_consent.h"
#include "core/worker/child_process.h"
#include "support/llm_server/scripted_llm_server.h"
#include "support/test_paths.h"

namespace nova {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kKey = "sk-cli-secret-7f3a9";

struct LlmCli : ::testing::Test {
  fs::path dir = test::scratch_dir(std::string("llm_cli_") +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::path model = test::shared_examples_dir() / "matmul_scaling_residual_add.py";
  fs::path graph = test::fixtures_dir() / "graphs" / "matmul_scaling_residual_add.json";

  ChildProcess::Env env(const test::ScriptedLlmServer& server, bool with_key = true) {
    LlmProvider p = server.provider(LlmProtocol::openai_chat);
    p.name = "scripted";
    p.api_key_env = "NOVA_LLM_TEST_KEY";
    std::ofstream(dir / "settings.json")
        << json{{"llm_providers", json::array({p})}, {"llm_default_provider", "scripted"}}.dump(2);
    ChildProcess::Env e = ChildProcess::minimal_env();
    e["NOVA_SETTINGS"] = (dir / "settings.json").string();
    if (with_key) e["NOVA_LLM_TEST_KEY"] = kKey;
    return e;
  }
  ProcessResult nova(std::vector<std::string> args, const ChildProcess::Env& env) {
    args.insert(args.begin(), {test::nova_binary().string(), "llm", model.string(), "--graph", graph.string(),
                               "--project", (dir / "project").string()});
    // Where the sandbox cannot start (a container without user namespaces), these tests of the search
    // run with the project's consent; the sandbox's own tests cover the refusal.
    if (!SandboxProbe::probe("bwrap").available &&
        std::find(args.begin(), args.end(), "--allow-unsandboxed") == args.end() &&
        std::find(args.begin(), args.end(), "--require-sandbox") == args.end())
      args.push_back("--allow-unsandboxed");
    return ChildProcess::run(args, env, 300s);
  }
  // One round of one lineage on group 0.
  ProcessResult one_round(const test::ScriptedLlmServer& server) {
    return nova({"--group", "0", "--lineages", "1", "--rounds", "1"}, env(server));
  }
  // A script of one answer, tests/fixtures/llm/FILE.
  static json one_answer(const std::string& file) {
    return {{"responses", json::array({{{"type", "openai"},
                                        {"text_file", (test::fixtures_dir() / "llm" / file).string()},
                                        {"usage", {{"prompt_tokens", 10}, {"completion_tokens", 5}}}}})}};
  }
  // After `nova llm` stopped without a GPU (exit 3): the search's one candidate, stored as a version and
  // waiting for a GPU (nullopt, and the test failed, otherwise).
  std::optional<LlmCandidateRecord> stored_pending(const ProcessResult& r) {
    EXPECT_TRUE(r.status.exited);
    EXPECT_EQ(r.status.code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find("needs a GPU"), std::string::npos) << r.err;
    LlmSearchStore store(dir / "project");
    const auto searches = store.searches();
    if (searches.size() != 1) {
      ADD_FAILURE() << searches.size() << " searches stored";
      return std::nullopt;
    }
    auto candidates = store.candidates(searches[0].id);
    if (candidates.size() != 1 || !candidates[0].version_id) {
      ADD_FAILURE() << candidates.size() << " candidates stored, the first without a version";
      return std::nullopt;
    }
    EXPECT_EQ(candidates[0].outcome, "pending") << candidates[0].detail;
    return candidates[0];
  }
};

bool has_gpu() {
  DoctorReport r;
  probe_cuda_driver(r);
  return r.has_gpu();
}

TEST_F(LlmCli, WithoutAGpuTheFirstCandidateIsStoredThenItStopsAndTheKeyIsNowhere) {
  if (has_gpu()) GTEST_SKIP() << "this machine has a GPU: the no-GPU stop is tested where there is none";
  test::ScriptedLlmServer server(one_answer("slower.md"), dir / "server");
  const ProcessResult r = one_round(server);
  // The candidate is stored, as a version and as the search's record, waiting for a GPU.
  auto candidate = stored_pending(r);
  ASSERT_TRUE(candidate);
  ProjectStore project = ProjectStore::open(dir / "project");
  EXPECT_EQ(project.version(*candidate->version_id).origin.kind, OriginKind::llm);
  // The key went to the provider and nowhere else.
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0]["headers"]["Authorization"], std::string("Bearer ") + kKey);
  EXPECT_EQ(r.out.find(kKey), std::string::npos);
  EXPECT_EQ(r.err.find(kKey), std::string::npos);
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir / "project")) {
    if (!entry.is_regular_file()) continue;
    ++files;
    EXPECT_EQ(test::read_text(entry.path()).find(kKey), std::string::npos) << entry.path();
  }
  EXPECT_GT(files, 0);
  EXPECT_EQ(test::read_text(dir / "settings.json").find(kKey), std::string::npos);
}

// An answer in KernelBench's form (ModelNew + load_inline): `nova llm` reads it with the workers' Python
// into a full-path version that records its form, and stops at its evaluation without a GPU.
TEST_F(LlmCli, AnAnswerInKernelBenchsFormIsStoredAsAFullPathVersionWithoutAGpu) {
  if (has_gpu()) GTEST_SKIP() << "this machine has a GPU: the no-GPU stop is tested where there is none";
  test::ScriptedLlmServer server(one_answer("model_new_linear.md"), dir / "server");
  auto candidate = stored_pending(one_round(server));
  ASSERT_TRUE(candidate);
  const CandidateVersion v = ProjectStore::open(dir / "project").version(*candidate->version_id);
  const json plan = json::parse(v.plan_json);
  EXPECT_EQ(plan["path"], "full");
  EXPECT_EQ(plan["origin"]["answer_form"], "model_new");
  EXPECT_NE(v.source.find("return linear_scale_cuda(nova_input_0, nova_input_1, nova_input_2);"), std::string::npos)
      << v.source;
  EXPECT_NE(v.source.find("__global__ void linear_scale_model_new"), std::string::npos);
}

// A provider that never answers (nothing listens at its address): every request ends in an error after
// its retries, so the search tried nothing; that is a failure (exit 1) with the reason, not a finished
// search that "brought nothing better" (issue #21's sweep found exit 0).
TEST_F(LlmCli, AProviderThatNeverAnswersIsAFailureWithItsReason) {
  LlmProvider p;
  p.name = "unreachable";
  p.base_url = "http://127.0.0.1:9/v1";  // the discard port: nothing listens there
  p.model = "m";
  p.connect_timeout_s = 2;
  std::ofstream(dir / "settings.json")
      << json{{"llm_providers", json::array({p})}, {"llm_default_provider", "unreachable"}}.dump(2);
  ChildProcess::Env e = ChildProcess::minimal_env();
  e["NOVA_SETTINGS"] = (dir / "settings.json").string();
  ProcessResult r = nova({"--group", "0", "--lineages", "1", "--rounds", "1"}, e);
  EXPECT_TRUE(r.status.exited);
  EXPECT_EQ(r.status.code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("no answer from the provider in 1 request(s): cannot connect to http://127.0.0.1:9/v1"),
            std::string::npos)
      << r.err;
}

TEST_F(LlmCli, BadInputNamesWhatIsWrong) {
  test::ScriptedLlmServer server({{"responses", json::array()}}, dir / "server");
  ProcessResult unknown = nova({"--group", "0", "--provider", "nope"}, env(server));
  EXPECT_EQ(unknown.status.code, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("no LLM provider named 'nope'"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("scripted"), std::string::npos) << unknown.err;
  ProcessResult no_key = nova({"--group", "0"}, env(server, false));
  EXPECT_EQ(no_key.status.code, 2) << no_key.err;
  EXPECT_NE(no_key.err.find("NOVA_LLM_TEST_KEY"), std::string::npos) << no_key.err;
  ProcessResult group = nova({"--group", "9"}, env(server));
  EXPECT_EQ(group.status.code, 2) << group.err;
  EXPECT_NE(group.err.find("--group 9"), std::string::npos) << group.err;
  EXPECT_TRUE(server.requests().empty());  // nothing was asked
}

// `nova optimize --llm`: after the builtin generator, the LLM search on every group of the model (here
// bmm_softmax's two), one request each with 1 lineage x 1 round; without a GPU each stores its first
// candidate and the run stops with exit 3 as nova optimize does. The key is in no file of the project.
TEST_F(LlmCli, OptimizeWithLlmSearchesEveryGroupAndStopsWithoutAGpu) {
  if (has_gpu()) GTEST_SKIP() << "this machine has a GPU: the no-GPU stop is tested where there is none";
  test::ScriptedLlmServer server({{"responses", json::array({{{"type", "openai"},
                                                             {"text_file", (test::fixtures_dir() / "llm" / "slower.md").string()}},
                                                            {{"type", "openai"},
                                                             {"text_file", (test::fixtures_dir() / "llm" / "slower.md").string()}}})}},
                                 dir / "server");
  const fs::path bmm = test::repo_examples_dir() / "bmm_softmax.py";
  const fs::path bmm_graph = test::fixtures_dir() / "graphs" / "bmm_softmax.json";
  std::vector<std::string> args = {test::nova_binary().string(), "optimize", bmm.string(), "--graph",
                                   bmm_graph.string(), "--project", (dir / "project").string(), "--llm",
                                   "--lineages", "1", "--rounds", "1"};
  if (!SandboxProbe::probe("bwrap").available) args.push_back("--allow-unsandboxed");  // as nova() does
  ProcessResult r = ChildProcess::run(args, env(server), 300s);
  EXPECT_EQ(r.status.code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("llm: group 0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("llm: group 1"), std::string::npos) << r.err;
  EXPECT_EQ(server.requests().size(), 2u);
  LlmSearchStore store(dir / "project");
  ASSERT_EQ(store.searches().size(), 2u);
  for (const auto& search : store.searches()) EXPECT_EQ(store.candidates(search.id).size(), 1u);
  for (const auto& entry : fs::recursive_directory_iterator(dir / "project"))
    if (entry.is_regular_file()) EXPECT_EQ(test::read_text(entry.path()).find(kKey), std::string::npos) << entry.path();
  EXPECT_EQ(r.out.find(kKey), std::string::npos);
  EXPECT_EQ(r.err.find(kKey), std::string::npos);
}

TEST_F(LlmCli, OptimizesLlmOptionsNeedLlmAndTheConsentIsStoredInTheProject) {
  test::ScriptedLlmServer server({{"responses", json::array()}}, dir / "server");
  ProcessResult r = ChildProcess::run({test::nova_binary().string(), "optimize", model.string(), "--graph",
                                       graph.string(), "--project", (dir / "project").string(), "--rounds", "2"},
                                      env(server), 60s);
  EXPECT_EQ(r.status.code, 2) << r.err;
  EXPECT_NE(r.err.find("--llm"), std::string::npos) << r.err;
  // --allow-unsandboxed is said and stored; --require-sandbox withdraws it.
  // (--group 9: the model has no such group, so nothing is asked after the consent is stored.)
  ProcessResult allow = nova({"--group", "9", "--allow-unsandboxed"}, env(server));
  EXPECT_NE(allow.err.find("now allows LLM-written code to run unsandboxed"), std::string::npos) << allow.err;
  EXPECT_TRUE(UnsandboxedConsent::allowed(dir / "project"));
  ProcessResult require = nova({"--group", "9", "--require-sandbox"}, env(server));
  EXPECT_NE(require.err.find("only in the sandbox"), std::string::npos) << require.err;
  EXPECT_FALSE(UnsandboxedConsent::allowed(dir / "project"));
  ProcessResult both = nova({"--group", "0", "--allow-unsandboxed", "--require-sandbox"}, env(server));
  EXPECT_EQ(both.status.code, 2) << both.err;
  EXPECT_TRUE(server.requests().empty());
}

}  // namespace
}  // namespace nova
