// The LLM search (core/llm/llm_search.h) end to end without a GPU: the real client talks to the
// scripted loopback server, which serves real kernels for group 0 of matmul_scaling_residual_add
// (tests/fixtures/llm: one that does not compile, a side stream, a wrong one, a cached-result cheat,
// one correct but slower than the builtin, one faster, prose without code) between faults (429 with
// Retry-After, 500, 529, a cut stream, garbage); the engine's session checks and compiles each with
// NVRTC for real, and a worker runner answers validation and benchmarks as the H200 harness does for
// such kernels (recorded results, the candidate's times scaled). The search must end with the faster
// kernel selected by the engine's policy and every attempt accounted for; it stops early, keeps its
// budgets, stops on a refused key, and resumes after a restart. The LLM's code is evaluated in the sandbox
// (the builtin bar is not); where the sandbox cannot start it is refused before anything is asked, unless
// the project allows unsandboxed runs, whose results (and nova status) then say sandboxed: false.
#include "core/llm/llm_search.h"

#include <fstream>
#include <mutex>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/env/resource_paths.h"
#include "core/jobs/worker_run_error.h"
#include "core/llm/llm_search_store.h"
#include "core/sandbox/sandbox_probe.h"
#include "core/worker/child_process.h"
#include "core/sandbox/sandbox_refused.h"
#include "core/sandbox/unsandboxed_consent.h"
#include "core/session/project_evidence.h"
#include "core/worker/no_gpu_error.h"
#include "support/graph_fixtures.h"
#include "support/llm_server/scripted_llm_server.h"
#include "support/test_paths.h"

namespace nova {
namespace {
using nlohmann::json;

json fixture_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  EXPECT_TRUE(in) << "missing fixture " << p;
  return json::parse(in);
}

// The recorded passing validation turned into a failing one, as the harness reports it.
json failing(json v, const std::string& problem, double max_abs, bool runs_agree) {
  v["passed"] = false;
  v["failures"] = json::array({problem});
  for (auto& t : v["trials"]) {
    t["ok"] = false;
    t["runs_agree"] = runs_agree;
    t["problems"] = json::array({problem});
    for (auto& o : t["outputs"]) o["vs_eager"]["max_abs"] = max_abs, o["vs_eager"]["ok"] = max_abs == 0;
  }
  return v;
}

// Answers the worker's evaluate as the harness does for the scripted kernels, told apart by name.
class HarnessByKernel : public WorkerRunner {
 public:
  json run(const std::string& cmd, const json& args, const WorkerCall& call) override {
    EXPECT_EQ(cmd, "evaluate");
    const std::string what = args.dump();
    ++calls;
    {
      std::lock_guard lock(mutex);
      sandboxed.push_back(call.sandbox.has_value());
    }
    json passed =
        fixture_json(test::fixtures_dir() / "validation" / "mlp_block_g1.mm_without_bias.h200.json");
    if (what.find("linear_scale_nobias") != std::string::npos)
      return {
          {"validation",
           failing(passed, "output 0: max abs error 0.73 vs eager, above the tolerance 1e-4", 0.73, true)}};
    if (what.find("linear_scale_cached") != std::string::npos)
      return {{"validation",
               failing(passed, "the output did not change with new inputs: a result kept across calls", 0,
                       false)}};
    double scale = 1.0;  // the builtin candidate: as recorded
    if (what.find("linear_scale_rowwise") != std::string::npos) scale = 3.0;
    if (what.find("linear_scale_tiled") != std::string::npos) scale = 0.5;
    json bench = fixture_json(test::fixtures_dir() / "bench" / "matmul_scaling_residual_add_g0.h200.json");
    for (auto& m : bench["measurements"])
      if (m["variant"] == "candidate")
        for (auto& x : m["samples"]) x = x.get<double>() * scale;
    return {{"validation", passed}, {"benchmark", bench}};
  }
  std::atomic<int> calls{0};
  std::mutex mutex;
  std::vector<bool> sandboxed;  // per call: whether it carried a sandbox
};

json answer(const std::string& file, json extra = json::object()) {
  json j = {{"type", "openai"},
            {"text_file", (test::fixtures_dir() / "llm" / file).string()},
            {"chunk", 40},
            {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", 500}}}};
  j.update(extra);
  return j;
}
json status(int code, json headers = json::object()) {
  return {{"type", "status"},
          {"status", code},
          {"headers", headers},
          {"body", R"({"error":{"message":"scripted"}})"}};
}

struct LlmSearchFixture : ::testing::Test {
  std::filesystem::path model = test::shared_examples_dir() / "matmul_scaling_residual_add.py";
  std::filesystem::path dir = test::scratch_dir(
      std::string("llm_search_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  HarnessByKernel* harness = nullptr;
  std::unique_ptr<ProjectSession> session;
  std::vector<std::string> said;

  void SetUp() override {
    SessionOptions o;
    o.model = model;
    o.project = dir / "project";
    o.python = "python3";  // never started: the harness is scripted
    auto runner = std::make_unique<HarnessByKernel>();
    harness = runner.get();
    session = std::make_unique<ProjectSession>(o, std::move(runner));
    session->import_graph(test::graph_fixture("matmul_scaling_residual_add"));
    JobInfo info = session->wait(session->generate());
    ASSERT_EQ(info.state, JobState::Succeeded) << info.error;
    // The harness is scripted: these tests run where the sandbox cannot start too (the sandbox's own
    // tests below turn the consent off).
    UnsandboxedConsent::set(dir / "project", true);
  }
  // The session again, with another bubblewrap (one that does not exist: the sandbox cannot start).
  void reopen(const std::string& bwrap) {
    session.reset();
    SessionOptions o;
    o.model = model;
    o.project = dir / "project";
    o.python = "python3";
    o.bwrap = bwrap;
    auto runner = std::make_unique<HarnessByKernel>();
    harness = runner.get();
    session = std::make_unique<ProjectSession>(o, std::move(runner));
  }
  LlmSearchReport search(test::ScriptedLlmServer& server, LlmSearchOptions options, bool resume = true,
                         const std::string& key = "") {
    LlmRetryPolicy retry;
    retry.base_delay = std::chrono::milliseconds(20);
    LlmClient client(server.provider(LlmProtocol::openai_chat), key, retry);
    LlmSearch s(*session, client, 0, options, [&](const std::string& line) { said.push_back(line); });
    return s.run(CancelToken(), resume);
  }
  static LlmSearchOptions shape(int lineages, int rounds) {
    LlmSearchOptions o;
    o.lineages = lineages;
    o.rounds = rounds;
    o.guard_python = default_python();  // kernelguard on every answer, as nova llm runs it
    return o;
  }
  test::ScriptedLlmServer serve(const std::vector<json>& responses) {
    return test::ScriptedLlmServer({{"responses", responses}}, dir / "server");
  }
  static std::vector<std::string> outcomes(const LlmSearchReport& r) {
    std::vector<std::string> out;
    for (const auto& c : r.candidates) out.push_back(c.outcome);
    return out;
  }
  static std::size_t attempts(const LlmSearchReport& r) {
    std::size_t n = 0;
    for (const auto& c : r.candidates) n += c.attempts.size();
    return n;
  }
};

TEST_F(LlmSearchFixture, FaultsAndBadKernelsEndWithTheFasterKernelSelectedAndEveryAttemptAccounted) {
  json script = {{"responses",
                  json::array({answer("does_not_compile.md"),  // r1 l1
                               status(429, {{"Retry-After", "1"}}),
                               answer("wrong.md"),  // r1 l2
                               status(500),
                               answer("side_stream.md"),                         // r2 l1
                               answer("cached.md", {{"unknown_events", true}}),  // r2 l2
                               answer("slower.md", {{"cut_after", 3}}),
                               answer("slower.md"),  // r3 l1
                               {{"type", "garbage"}},
                               answer("faster.md"),  // r3 l2
                               status(529),
                               answer("faster.md"),       // r4 l1
                               answer("no_code.md")})}};  // r4 l2
  test::ScriptedLlmServer server(script, dir / "server");
  LlmSearchOptions o = shape(2, 4);
  o.idle_rounds = 4;
  LlmSearchReport r = search(server, o);
  EXPECT_EQ(r.state, "finished") << r.stop_reason;
  EXPECT_EQ(outcomes(r), (std::vector<std::string>{"build_failed", "wrong", "refused", "wrong", "slower",
                                                   "best", "duplicate", "no_code"}));
  // Every request the server answered is an attempt of a stored candidate.
  EXPECT_EQ(attempts(r), server.requests().size());
  EXPECT_EQ(server.requests().size(), 13u);
  // The engine's selection chose the faster kernel.
  const auto& faster = r.candidates[5];
  ASSERT_TRUE(faster.version_id);
  EXPECT_EQ(r.chosen, faster.version_id);
  EXPECT_EQ(r.candidates[0].lineage, 1);
  EXPECT_EQ(faster.lineage, 2);
  EXPECT_EQ(faster.round, 3);
  // Stored as versions with their origin and parent.
  CandidateVersion v = session->store().version(*faster.version_id);
  EXPECT_EQ(v.origin.kind, OriginKind::llm);
  EXPECT_EQ(v.origin.provider, "scripted-openai");
  EXPECT_EQ(v.origin.model, "scripted-model");
  EXPECT_EQ(v.origin.round, 3);
  EXPECT_EQ(v.parent_id, faster.parent_version);
  EXPECT_NE(v.source.find("linear_scale_tiled"), std::string::npos);
  EXPECT_EQ(faster.reasoning,
            "Each block owns one row of x; keep it in shared memory and let each thread produce one column.");
  // The duplicate and the prose made no version; the 429 waited its Retry-After.
  EXPECT_FALSE(r.candidates[6].version_id);
  EXPECT_FALSE(r.candidates[7].version_id);
  EXPECT_DOUBLE_EQ(r.candidates[1].attempts[0].waited_s, 1.0);
  // Tokens and money add up over the answers that came back (7 with usage).
  EXPECT_EQ(r.tokens, 8 * 1500);
  EXPECT_NEAR(r.cost_usd, 8 * (1000 * 3.0 + 500 * 15.0) / 1e6, 1e-12);
  // The first prompt: the group's functional source with shapes and dtypes, the bar, the contract.
  const std::string first = r.candidates[0].prompt;
  EXPECT_NE(first.find("torch.ops.aten.linear.default"), std::string::npos);
  EXPECT_NE(first.find("input:0: x float32[128, 64]"), std::string::npos) << first;
  EXPECT_NE(first.find("output:0: add float32[128, 128]"), std::string::npos) << first;
  EXPECT_NE(first.find("builtin generator's kernel"), std::string::npos);
  EXPECT_NE(first.find("NVIDIA H200"), std::string::npos);
  auto requests = server.requests();
  EXPECT_NE(requests[0]["body"]["messages"][0]["content"].get<std::string>().find("candidate contract"),
            std::string::npos);
  // Round 2 of lineage 1 got NVRTC's diagnostics with line numbers, digested.
  const std::string fix = r.candidates[2].prompt;
  EXPECT_NE(fix.find("It did not compile"), std::string::npos) << fix;
  EXPECT_NE(fix.find("line 6: error: identifier \"scale\" is undefined"), std::string::npos) << fix;
  // Round 3 of lineage 2 was told what the harness found in the cheat.
  EXPECT_NE(r.candidates[5].prompt.find("a result kept across calls"), std::string::npos);
  // The search's records survive in the project.
  LlmSearchStore store(session->project_dir());
  EXPECT_EQ(store.search(r.search_id).state, "finished");
  EXPECT_EQ(store.candidates(r.search_id).size(), 8u);
}

TEST_F(LlmSearchFixture, ARoundThatBringsNothingBetterStopsTheSearch) {
  test::ScriptedLlmServer server = serve({answer("slower.md"), answer("faster.md")});
  LlmSearchOptions o = shape(1, 5);
  LlmSearchReport r = search(server, o);
  EXPECT_EQ(outcomes(r), std::vector<std::string>{"slower"});
  EXPECT_NE(r.stop_reason.find("round 1 brought nothing better"), std::string::npos) << r.stop_reason;
  EXPECT_EQ(r.chosen, r.bar_version);  // the builtin kernel stays the choice
  EXPECT_EQ(server.requests().size(), 1u);
}

// A correct kernel timed within the noise of the best so far (their 95% intervals against eager
// overlap) is a tie, said with both intervals, not "slower"; the best so far stays the choice.
TEST_F(LlmSearchFixture, AKernelWithinTheNoiseOfTheBestIsATie) {
  test::ScriptedLlmServer server = serve({answer("faster.md"), answer("faster_again.md")});
  LlmSearchOptions o = shape(1, 2);
  o.idle_rounds = 2;
  LlmSearchReport r = search(server, o);
  ASSERT_EQ(outcomes(r), (std::vector<std::string>{"best", "tie"}));
  EXPECT_NE(r.candidates[1].detail.find("within the noise"), std::string::npos) << r.candidates[1].detail;
  EXPECT_EQ(r.chosen, r.candidates[0].version_id);
}

TEST_F(LlmSearchFixture, TheMoneyBudgetStopsTheSearch) {
  test::ScriptedLlmServer server = serve({answer("slower.md"), answer("faster.md")});
  LlmSearchOptions o = shape(2, 2);
  o.usd_budget = 0.005;  // one answer costs $0.0105
  LlmSearchReport r = search(server, o);
  EXPECT_EQ(r.candidates.size(), 1u);
  EXPECT_NE(r.stop_reason.find("budget of $0.01 is spent"), std::string::npos) << r.stop_reason;
}

TEST_F(LlmSearchFixture, ARefusedKeyEndsTheSearchAndSaysSo) {
  test::ScriptedLlmServer server = serve({status(401), answer("faster.md")});
  LlmSearchOptions o = shape(2, 5);
  LlmSearchReport r = search(server, o, true, "sk-wrong");
  EXPECT_EQ(r.state, "failed");
  EXPECT_NE(r.stop_reason.find("refused the API key"), std::string::npos) << r.stop_reason;
  EXPECT_EQ(outcomes(r), std::vector<std::string>{"llm_error"});
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST_F(LlmSearchFixture, WithoutAGpuItStoresTheCandidateAndResumesThereLater) {
  test::ScriptedLlmServer server = serve({answer("slower.md"), answer("faster.md")});
  LlmSearchOptions o = shape(1, 2);
  o.idle_rounds = 2;
  o.can_evaluate = false;
  EXPECT_THROW(search(server, o), NoGpuError);
  EXPECT_EQ(harness->calls, 0);
  LlmSearchStore store(session->project_dir());
  ASSERT_EQ(store.searches().size(), 1u);
  auto stored = store.candidates(store.searches()[0].id);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].outcome, "pending");
  ASSERT_TRUE(stored[0].version_id);
  // A restart (on a machine with a GPU): the same search, the stored answer evaluated, round 2 asked.
  o.can_evaluate = true;
  LlmSearchReport r = search(server, o);
  EXPECT_TRUE(r.resumed);
  EXPECT_EQ(r.search_id, store.searches()[0].id);
  EXPECT_EQ(store.searches().size(), 1u);
  EXPECT_EQ(outcomes(r), (std::vector<std::string>{"slower", "best"}));
  EXPECT_EQ(r.candidates[0].version_id, stored[0].version_id);
  EXPECT_EQ(r.chosen, r.candidates[1].version_id);
  EXPECT_EQ(server.requests().size(), 2u);
}


TEST_F(LlmSearchFixture, ACancelMidAnswerStoresNothingHalfWrittenAndTheSearchResumesLater) {
  test::ScriptedLlmServer server =
      serve({answer("slower.md", {{"chunk", 4}, {"delay_s", 0.2}}), answer("faster.md")});
  LlmSearchOptions o = shape(1, 1);
  LlmClient client(server.provider(LlmProtocol::openai_chat), "");
  CancelToken cancel;
  LlmSearch s(*session, client, 0, o, {}, [&](int, int, const std::string&) { cancel.cancel(); });
  const auto started = std::chrono::steady_clock::now();
  LlmSearchReport r = s.run(cancel);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(15));  // the answer takes 25 s
  EXPECT_EQ(r.state, "stopped");
  EXPECT_TRUE(r.candidates.empty());
  LlmSearchReport again = search(server, o);
  EXPECT_TRUE(again.resumed);
  EXPECT_EQ(again.search_id, r.search_id);
  EXPECT_EQ(outcomes(again), std::vector<std::string>{"best"});
}

TEST_F(LlmSearchFixture, TheLlmsCodeRunsInTheSandboxTheBuiltinBarDoesNot) {
  const SandboxStatus status = SandboxProbe::probe("bwrap");
  if (!status.available) GTEST_SKIP() << "the sandbox cannot start here: " << status.reason;
  test::ScriptedLlmServer server = serve({answer("slower.md")});
  LlmSearchReport r = search(server, shape(1, 1));
  ASSERT_EQ(outcomes(r), std::vector<std::string>{"slower"});
  EXPECT_EQ(r.sandboxed, true);
  EXPECT_EQ(harness->sandboxed, (std::vector<bool>{false, true}));  // the bar, then the LLM's candidate
  auto validation = ProjectEvidence::latest_validation(session->store(), *r.candidates[0].version_id);
  ASSERT_TRUE(validation);
  EXPECT_EQ(validation->environment.value("sandboxed", json()), true);
  auto bar = ProjectEvidence::latest_validation(session->store(), *r.bar_version);
  ASSERT_TRUE(bar);
  EXPECT_FALSE(bar->environment.contains("sandboxed"));  // builtin code: not the sandbox's business
}

TEST_F(LlmSearchFixture, WhereTheSandboxCannotStartLlmCodeIsRefusedUnlessTheProjectAllowsIt) {
  reopen("/nonexistent/bwrap");
  UnsandboxedConsent::set(dir / "project", false);
  test::ScriptedLlmServer server = serve({answer("slower.md")});
  try {
    search(server, shape(1, 1));
    ADD_FAILURE() << "the search ran without the sandbox";
  } catch (const SandboxRefused& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("/nonexistent/bwrap"), std::string::npos) << what;
    EXPECT_NE(what.find("--allow-unsandboxed"), std::string::npos) << what;
  }
  EXPECT_TRUE(server.requests().empty());  // refused before anything was paid for
  EXPECT_EQ(harness->calls, 0);

  UnsandboxedConsent::set(dir / "project", true);
  EXPECT_TRUE(UnsandboxedConsent::allowed(dir / "project"));
  LlmSearchReport r = search(server, shape(1, 1));
  ASSERT_EQ(outcomes(r), std::vector<std::string>{"slower"});
  EXPECT_EQ(r.sandboxed, false);
  EXPECT_EQ(harness->sandboxed, (std::vector<bool>{false, false}));
  auto validation = ProjectEvidence::latest_validation(session->store(), *r.candidates[0].version_id);
  ASSERT_TRUE(validation);
  EXPECT_EQ(validation->environment.value("sandboxed", json()), false);
  // nova status says which LLM versions ran unsandboxed.
  ProcessResult status = ChildProcess::run({test::nova_binary().string(), "status", model.string(), "--project",
                                            (dir / "project").string()},
                                           ChildProcess::minimal_env(), std::chrono::seconds(120));
  EXPECT_EQ(status.status.code, 0) << status.err;
  EXPECT_NE(status.out.find(fmt::format("sandboxed: false for the LLM-written v{}", *r.candidates[0].version_id)),
            std::string::npos)
      << status.out;

  // The engine itself refuses an LLM version without the consent, whoever asks (nova validate --version).
  UnsandboxedConsent::set(dir / "project", false);
  EXPECT_THROW(session->evaluate(*r.candidates[0].version_id), SandboxRefused);
  EXPECT_NO_THROW(session->wait(session->evaluate(*r.bar_version)));  // builtin code runs as before
}

}  // namespace
}  // namespace nova
