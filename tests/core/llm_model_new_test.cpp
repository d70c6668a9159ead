// An LLM's answer in KernelBench's form (a ```python block with load_inline and class ModelNew,
// tests/fixtures/llm/model_new_*.md): the parser hands it on and prefers the fast-path pair when both
// are there; KernelBenchForm reads it with the workers' Python (nothing of it runs) into a full-path
// candidate whose extension passes the static checks, or refuses it with a sentence for the model
// (PyTorch compute in forward, sources built at run time, Python that does not parse). Through the
// search, without a GPU: the refusal goes back to the model, the answer is stored as a version that
// records its form, the worker builds and evaluates the extension (build_ext, then evaluate with the
// extension's source and no launch plan), and the next prompt says which form the parent came in.
#include <fstream>
#include <mutex>
#include <sstream>

#include <gtest/gtest.h>

#include "core/env/resource_paths.h"
#include "core/llm/kernelbench_form.h"
#include "core/llm/llm_answer_parser.h"
#include "core/llm/llm_search.h"
#include "core/llm/llm_search_store.h"
#include "core/sandbox/sandbox_probe.h"
#include "core/sandbox/unsandboxed_consent.h"
#include "core/session/stored_generation.h"
#include "core/verify/static_checker.h"
#include "support/graph_fixtures.h"
#include "support/llm_server/scripted_llm_server.h"
#include "support/test_paths.h"

namespace nova {
namespace {
using nlohmann::json;

std::string fixture(const std::string& name) {
  std::ifstream in(test::fixtures_dir() / "llm" / name);
  EXPECT_TRUE(in) << "missing fixture " << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

json fixture_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  EXPECT_TRUE(in) << "missing fixture " << p;
  return json::parse(in);
}

// The skeleton the search hands the parser for group 0 of swish_bias_clamp.
Candidate swish_base() {
  Candidate c;
  c.group_id = 0;
  c.origin.kind = "llm";
  c.summary = "LLM candidate for sigmoid, mul, add, clamp";
  c.plan.inputs = {{"x", {64, 32, 128, 128}, "float32"}, {"p_bias", {32, 1, 1}, "float32"}};
  c.plan.outputs = {{"clamp", {64, 32, 128, 128}, "float32"}};
  return c;
}

ParsedAnswer read(const std::string& file) {
  ParsedAnswer parsed = LlmAnswerParser::parse(fixture(file), swish_base());
  EXPECT_FALSE(parsed.candidate);
  EXPECT_EQ(parsed.problem, "");
  EXPECT_NE(parsed.model_new_source.find("class ModelNew"), std::string::npos) << file;
  return KernelBenchForm(default_python()).read(parsed.model_new_source, swish_base());
}

TEST(LlmModelNew, TheParserHandsTheLoadInlineBlockOnAndPrefersTheFastPathPair) {
  ParsedAnswer p = LlmAnswerParser::parse(fixture("model_new_swish.md"), swish_base());
  EXPECT_EQ(p.model_new_source.rfind("import torch\n", 0), 0u) << p.model_new_source;
  EXPECT_NE(p.model_new_source.find("self.swish_bias_clamp.swish_bias_clamp_cuda(x, p_bias)"), std::string::npos);
  // Both forms in one answer: the device code and its launch plan win.
  ParsedAnswer both = LlmAnswerParser::parse(fixture("swish_vec2.md") + "\n" + fixture("model_new_swish.md"),
                                             swish_base());
  ASSERT_TRUE(both.candidate) << both.problem;
  EXPECT_EQ(both.candidate->path, "fast");
  EXPECT_EQ(both.model_new_source, "");
  // Neither form: the sentence names both.
  ParsedAnswer prose = LlmAnswerParser::parse(fixture("no_code.md"), swish_base());
  EXPECT_FALSE(prose.candidate);
  EXPECT_NE(prose.problem.find("KernelBench's form that calls load_inline"), std::string::npos) << prose.problem;
}

TEST(LlmModelNew, ACorrectElementwiseAnswerBecomesAFullPathCandidateThatPassesTheStaticChecks) {
  ParsedAnswer p = read("model_new_swish.md");
  ASSERT_TRUE(p.candidate) << p.problem;
  const Candidate& c = *p.candidate;
  EXPECT_EQ(c.path, "full");
  EXPECT_EQ(c.origin.answer_form, "model_new");
  EXPECT_EQ(c.cuda_source, "");
  EXPECT_TRUE(c.plan.steps.empty());
  EXPECT_EQ(c.plan.inputs, swish_base().plan.inputs);  // the group's, never the answer's
  EXPECT_NE(c.summary.find("ModelNew form, forward = swish_bias_clamp_cuda(input:0, input:1)"), std::string::npos)
      << c.summary;
  EXPECT_NE(c.extension_source.find("return swish_bias_clamp_cuda(nova_input_0, nova_input_1);"), std::string::npos);
  StaticReport s = StaticChecker().check_extension(c.extension_source);
  EXPECT_FALSE(s.refused()) << s.refusals.front();
  EXPECT_EQ(s.kernels, std::vector<std::string>{"swish_bias_clamp_kernel"});
  EXPECT_EQ(s.launched, std::vector<std::string>{"swish_bias_clamp_kernel"});
  // The form and the path survive the candidate's JSON, as a version's plan_json keeps them.
  const Candidate back = json::parse(plan_json(c)).get<Candidate>();
  EXPECT_EQ(back.path, "full");
  EXPECT_EQ(back.origin.answer_form, "model_new");
  EXPECT_EQ(back.extension_source, "");  // the version's source holds it
  // The same extension hashes the same; the fast path's form of the group does not.
  EXPECT_EQ(LlmAnswerParser::code_hash(c), LlmAnswerParser::code_hash(*read("model_new_swish.md").candidate));
  Candidate fast = *LlmAnswerParser::parse(fixture("swish_vec2.md"), swish_base()).candidate;
  EXPECT_NE(LlmAnswerParser::code_hash(c), LlmAnswerParser::code_hash(fast));
}

TEST(LlmModelNew, TorchComputeInForwardIsRefusedNamingTheStatement) {
  ParsedAnswer p = read("model_new_torch_ops.md");
  EXPECT_FALSE(p.candidate);
  EXPECT_EQ(p.problem,
            "ModelNew.forward does more than return one call of the loaded function (line 45: "
            "`s = torch.sigmoid(x)`): PyTorch compute besides the kernel call is not allowed, do it in the kernel");
}

TEST(LlmModelNew, SourcesBuiltAtRunTimeAreRefused) {
  ParsedAnswer p = read("model_new_runtime_sources.md");
  EXPECT_FALSE(p.candidate);
  EXPECT_EQ(p.problem,
            "cuda_sources is an f-string (line 7): sources built at run time cannot be read; write the source as "
            "a plain string literal");
}

TEST(LlmModelNew, PythonThatDoesNotParseIsRefusedWithItsLine) {
  ParsedAnswer p = read("model_new_syntax_error.md");
  EXPECT_FALSE(p.candidate);
  EXPECT_EQ(p.problem, "the Python does not parse: '(' was never closed (line 17)");
}

TEST(LlmModelNew, WithoutTheWorkersPythonItSaysSoAndAnInterpreterThatCannotRunIsNamed) {
  const std::string python = LlmAnswerParser::parse(fixture("model_new_swish.md"), swish_base()).model_new_source;
  ParsedAnswer none = KernelBenchForm("").read(python, swish_base());
  EXPECT_FALSE(none.candidate);
  EXPECT_NE(none.problem.find("needs the workers' Python"), std::string::npos) << none.problem;
  ParsedAnswer missing = KernelBenchForm("/nonexistent/python3").read(python, swish_base());
  EXPECT_FALSE(missing.candidate);
  EXPECT_NE(missing.problem.find("/nonexistent/python3"), std::string::npos) << missing.problem;
}

// Answers the worker's commands for the search below: the builtin bar's evaluation as recorded, the
// extension's build, and its evaluation (passed, twice as fast as the bar), keeping what it was asked.
class FullPathHarness : public WorkerRunner {
 public:
  json run(const std::string& cmd, const json& args, const WorkerCall& call) override {
    std::lock_guard lock(mutex);
    calls.push_back({cmd, args});
    sandboxed.push_back(call.sandbox.has_value());
    if (cmd == "build_ext") return {{"build_s", 52.0}, {"module", "nova_ext_0123"}, {"file", ""}, {"extension", ""}};
    EXPECT_EQ(cmd, "evaluate");
    json passed = fixture_json(test::fixtures_dir() / "validation" / "mlp_block_g1.mm_without_bias.h200.json");
    json bench = fixture_json(test::fixtures_dir() / "bench" / "matmul_scaling_residual_add_g0.h200.json");
    if (args.contains("extension_source"))
      for (auto& m : bench["measurements"])
        if (m["variant"] == "candidate")
          for (auto& x : m["samples"]) x = x.get<double>() * 0.5;
    return {{"validation", passed}, {"benchmark", bench}};
  }
  std::mutex mutex;
  std::vector<std::pair<std::string, json>> calls;
  std::vector<bool> sandboxed;  // per call: whether it carried a sandbox
};

json answer(const std::string& file) {
  return {{"type", "openai"},
          {"text_file", (test::fixtures_dir() / "llm" / file).string()},
          {"chunk", 40},
          {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", 500}}}};
}

// The search over three scripted answers (one that does not parse, then the same ModelNew answer twice),
// with `bwrap` as the sandbox program, and what the worker was asked.
struct ModelNewSearch {
  LlmSearchReport report;
  std::vector<std::pair<std::string, json>> calls;
  std::vector<bool> sandboxed;
  CandidateVersion version;  // the stored ModelNew answer
  std::string system_prompt;
};

ModelNewSearch search_with(const std::string& name, const std::string& bwrap) {
  const std::filesystem::path dir = test::scratch_dir(name);
  SessionOptions o;
  o.model = test::shared_examples_dir() / "matmul_scaling_residual_add.py";
  o.project = dir / "project";
  o.python = "python3";  // never started: the harness is scripted
  o.bwrap = bwrap;
  auto runner = std::make_unique<FullPathHarness>();
  FullPathHarness* harness = runner.get();
  ProjectSession session(o, std::move(runner));
  session.import_graph(test::graph_fixture("matmul_scaling_residual_add"));
  JobInfo generated = session.wait(session.generate());
  EXPECT_EQ(generated.state, JobState::Succeeded) << generated.error;
  UnsandboxedConsent::set(dir / "project", true);  // where the sandbox cannot start, run without it

  test::ScriptedLlmServer server(
      {{"responses",
        json::array({answer("model_new_syntax_error.md"), answer("model_new_linear.md"), answer("model_new_linear.md")})}},
      dir / "server");
  LlmSearchOptions options;
  options.lineages = 1;
  options.rounds = 3;
  options.idle_rounds = 3;
  options.guard_python = default_python();
  LlmRetryPolicy retry;
  retry.base_delay = std::chrono::milliseconds(20);
  LlmClient client(server.provider(LlmProtocol::openai_chat), "", retry);
  LlmSearch search(session, client, 0, options, nullptr);
  ModelNewSearch out;
  out.report = search.run(CancelToken(), true);
  out.calls = harness->calls;
  out.sandboxed = harness->sandboxed;
  for (const auto& c : out.report.candidates)
    if (c.version_id && out.version.id == 0) out.version = session.store().version(*c.version_id);
  auto requests = server.requests();
  if (!requests.empty()) out.system_prompt = requests[0]["body"]["messages"][0]["content"].get<std::string>();
  return out;
}

TEST(LlmModelNew, TheSearchStoresTheFormBuildsTheExtensionInTheWorkerAndTellsTheModelItsRefusals) {
  // No sandbox here (its program does not exist; the project consents): the CPU lane builds the extension.
  ModelNewSearch s = search_with("llm_model_new_search", "/nonexistent/bwrap");
  const LlmSearchReport& r = s.report;
  ASSERT_EQ(r.candidates.size(), 3u) << r.stop_reason;
  // Round 1 did not parse: no version, and round 2's prompt tells the model why.
  EXPECT_EQ(r.candidates[0].outcome, "no_code");
  EXPECT_EQ(r.candidates[0].detail, "the Python does not parse: '(' was never closed (line 17)");
  EXPECT_NE(r.candidates[1].prompt.find("could not be used: the Python does not parse"), std::string::npos)
      << r.candidates[1].prompt;
  // Round 2: stored as a full-path version that records its form; the worker built and evaluated it.
  const auto& model_new = r.candidates[1];
  ASSERT_TRUE(model_new.version_id);
  EXPECT_EQ(model_new.outcome, "best") << model_new.detail;
  EXPECT_EQ(r.chosen, model_new.version_id);
  const CandidateVersion& v = s.version;
  EXPECT_EQ(v.id, *model_new.version_id);
  EXPECT_EQ(v.origin.kind, OriginKind::llm);
  EXPECT_NE(v.source.find("auto nova_group_forward(torch::Tensor nova_input_0, torch::Tensor nova_input_1, "
                          "torch::Tensor nova_input_2) { return linear_scale_cuda(nova_input_0, nova_input_1, "
                          "nova_input_2); }"),
            std::string::npos)
      << v.source;
  const json plan = json::parse(v.plan_json);
  EXPECT_EQ(plan["path"], "full");
  EXPECT_EQ(plan["origin"]["answer_form"], "model_new");
  std::vector<std::string> commands;
  for (const auto& [cmd, args] : s.calls) {
    commands.push_back(cmd);
    if (cmd == "build_ext" || args.contains("extension_source")) {
      EXPECT_EQ(args["extension_source"], v.source);
      EXPECT_FALSE(args.contains("candidate"));
      EXPECT_FALSE(args.contains("cubin_b64"));
    }
  }
  // The builtin bar (fast path), then the extension: built on the CPU lane, then evaluated.
  EXPECT_EQ(commands, (std::vector<std::string>{"evaluate", "build_ext", "evaluate"}));
  EXPECT_EQ(s.sandboxed, (std::vector<bool>{false, false, false}));
  // Round 3 answered the same extension again: not evaluated twice; its prompt named the parent's form.
  EXPECT_EQ(r.candidates[2].outcome, "duplicate");
  EXPECT_NE(r.candidates[2].prompt.find("It was your answer in KernelBench's ModelNew form"), std::string::npos)
      << r.candidates[2].prompt;
  EXPECT_NE(r.candidates[2].prompt.find("linear_scale_model_new"), std::string::npos);
  // The prompt of every request offers the form.
  EXPECT_NE(s.system_prompt.find("Also accepted: KernelBench's `ModelNew` form"), std::string::npos);
}

TEST(LlmModelNew, InTheSandboxTheEvaluatingWorkerBuildsTheExtensionItself) {
  if (!SandboxProbe::probe("bwrap").available) GTEST_SKIP() << "the sandbox cannot start here";
  // A sandboxed worker keeps nothing once it ends, so no separate build job: the evaluation builds it.
  ModelNewSearch s = search_with("llm_model_new_sandbox", "bwrap");
  ASSERT_EQ(s.report.candidates.size(), 3u) << s.report.stop_reason;
  EXPECT_EQ(s.report.candidates[1].outcome, "best") << s.report.candidates[1].detail;
  std::vector<std::string> commands;
  for (const auto& call : s.calls) commands.push_back(call.first);
  EXPECT_EQ(commands, (std::vector<std::string>{"evaluate", "evaluate"}));
  EXPECT_EQ(s.sandboxed, (std::vector<bool>{false, true}));  // the builtin bar runs outside it
  EXPECT_EQ(s.calls[1].second["extension_source"], s.version.source);
}

}  // namespace
}  // namespace nova
