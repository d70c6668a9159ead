#include "core/llm/llm_search.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/build/diagnostics.h"
#include "core/gen/group_context.h"
#include "core/llm/kernel_guard.h"
#include "core/llm/kernelbench_form.h"
#include "core/llm/llm_answer_parser.h"
#include "core/llm/llm_error.h"
#include "core/llm/llm_feedback.h"
#include "core/llm/llm_search_store.h"
#include "core/llm/prompt_template.h"
#include "core/sandbox/sandbox_policy.h"
#include "core/select/selection_policy.h"
#include "core/session/project_evidence.h"
#include "core/session/stored_generation.h"
#include "core/worker/no_gpu_error.h"

namespace nova {
namespace {
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Outcomes after which a lineage keeps refining its own candidate (it has something to fix).
bool needs_fixing(const std::string& outcome) {
  return outcome == "build_failed" || outcome == "refused" || outcome == "wrong" || outcome == "crashed";
}

std::string tensor_line(const std::string& ref, const PlanTensor& t) {
  std::string shape;
  for (auto d : t.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  return fmt::format("- {}: {} {}[{}]\n", ref, t.name, t.dtype, shape);
}

}  // namespace

void to_json(nlohmann::json& j, const LlmSearchOptions& o) {
  j = {{"lineages", o.lineages},
       {"rounds", o.rounds},
       {"keep_best", o.keep_best},
       {"idle_rounds", o.idle_rounds},
       {"wall_budget_s", o.wall_budget_s ? nlohmann::json(*o.wall_budget_s) : nlohmann::json()},
       {"token_budget", o.token_budget ? nlohmann::json(*o.token_budget) : nlohmann::json()},
       {"usd_budget", o.usd_budget ? nlohmann::json(*o.usd_budget) : nlohmann::json()}};
}

struct LlmSearch::State {
  explicit State(const std::filesystem::path& project) : store(project) {}
  ModelGraph graph;
  FusionGroup group;
  int64_t record_id = 0;
  Candidate base;
  LlmSearchStore store;
  int64_t search_id = 0;
  std::vector<LlmCandidateRecord> records;
  std::map<std::string, int64_t> hashes;  // code hash -> the version that has it
  std::optional<int64_t> bar;
  std::optional<BenchmarkResult> bar_benchmark;
  Clock::time_point started = Clock::now();
  long long tokens = 0;
  double cost = 0;
  std::string group_text;
};

LlmSearch::LlmSearch(ProjectSession& session, LlmClient& client, int group_id, LlmSearchOptions options,
                     Say say, OnText on_text)
    : session_(session),
      client_(client),
      group_id_(group_id),
      options_(std::move(options)),
      say_(std::move(say)),
      on_text_(std::move(on_text)) {
  if (options_.lineages < 1 || options_.rounds < 1 || options_.keep_best < 1 || options_.idle_rounds < 1)
    throw std::invalid_argument("lineages, rounds, keep_best and idle_rounds must be at least 1");
}

std::optional<int64_t> LlmSearch::chosen() const {
  auto graph = session_.graph();
  if (!graph) return std::nullopt;
  Selection sel = SelectionPolicy::select(ProjectEvidence::read(session_.store(), *graph));
  const GroupSelection* g = sel.group(group_id_);
  return g ? g->chosen : std::nullopt;
}

std::vector<int64_t> LlmSearch::best_parents(const State& s) const {
  std::vector<std::pair<double, int64_t>> ranked;
  std::vector<int64_t> versions;
  if (s.bar) versions.push_back(*s.bar);
  for (const auto& r : s.records)
    if (r.version_id) versions.push_back(*r.version_id);
  for (int64_t v : versions)
    if (auto cold = LlmEvaluation::read(session_.store(), v).cold_us()) ranked.push_back({*cold, v});
  std::sort(ranked.begin(), ranked.end());
  std::vector<int64_t> out;
  for (std::size_t i = 0; i < ranked.size() && static_cast<int>(i) < options_.keep_best; ++i)
    out.push_back(ranked[i].second);
  return out;
}

std::optional<std::string> LlmSearch::budget_exhausted(const State& s) const {
  if (options_.wall_budget_s && seconds_since(s.started) >= *options_.wall_budget_s)
    return fmt::format("the wall-time budget of {:.0f} s is spent", *options_.wall_budget_s);
  if (options_.token_budget && s.tokens >= *options_.token_budget)
    return fmt::format("the token budget of {} is spent ({} used)", *options_.token_budget, s.tokens);
  if (options_.usd_budget && s.cost >= *options_.usd_budget)
    return fmt::format("the budget of ${:.2f} is spent (${:.4f} used)", *options_.usd_budget, s.cost);
  return std::nullopt;
}

std::string LlmSearch::prompt_for(State& s, int lineage, std::optional<int64_t>& parent) const {
  const LlmCandidateRecord* last = nullptr;
  for (const auto& r : s.records)
    if (r.lineage == lineage) last = &r;
  const std::vector<int64_t> parents = best_parents(s);
  std::string note;
  if (!last) {
    parent = s.bar;
  } else if (last->version_id &&
             (needs_fixing(last->outcome) ||
              std::find(parents.begin(), parents.end(), *last->version_id) != parents.end() ||
              parents.empty())) {
    parent = last->version_id;
  } else if (!last->version_id) {
    parent = last->parent_version;
    note = fmt::format("\nYour previous answer could not be used: {}\n", last->detail);
  } else {
    parent = parents[static_cast<std::size_t>(lineage - 1) % parents.size()];
  }
  std::optional<double> best_cold;
  std::string best = "Nothing correct has been measured yet.";
  if (auto c = chosen()) {
    if (auto cold = LlmEvaluation::read(session_.store(), *c).cold_us()) {
      best_cold = cold;
      best = fmt::format("v{} takes {:.2f} µs cold (the engine's current choice for this group).", *c, *cold);
    }
  }
  const std::string hardware = LlmFeedback::hardware(s.bar_benchmark);
  const std::string bar = LlmFeedback::bar(s.bar_benchmark);
  if (!parent) {
    return PromptTemplate::load("first_round.md")
               .render({{"group", s.group_text}, {"bar", bar}, {"hardware", hardware}}) +
           note;
  }
  auto stored = stored_candidate(session_.store(), *parent);
  const CandidateVersion pv = session_.store().version(*parent);
  const LlmEvaluation evaluation = LlmEvaluation::read(session_.store(), *parent);
  std::optional<std::string> compiler_log;
  const bool full_path = stored && stored->candidate.path == "full";
  if (evaluation.build_failure() && stored && !full_path)  // NVRTC again (cached by content) for its whole log
    compiler_log = session_.compiler()
                       .compile(pv.source, "candidate.cu",
                                options_.evaluate.arch.empty() ? "sm_90" : options_.evaluate.arch,
                                stored->candidate.nvrtc_options)
                       .log;
  if (!evaluation.validation && last && last->version_id == parent && last->outcome == "refused")
    note = fmt::format("\nIt was refused before running: {}\n", last->detail);
  const std::string feedback =
      evaluation.validation || note.empty()
          ? LlmFeedback::digest(evaluation, pv.source, s.group, best_cold, compiler_log) + note
          : note;
  const std::string form_note =
      full_path ? "\nIt was your answer in KernelBench's ModelNew form, built as the torch extension above "
                  "with nvcc (full path). Answer in either form.\n"
                : "";
  nlohmann::json plan = stored ? nlohmann::json{{"temps", stored->candidate.plan.temps},
                                                {"steps", stored->candidate.plan.steps}}
                               : nlohmann::json::object();
  return PromptTemplate::load("refine_round.md")
      .render({{"group", s.group_text},
               {"bar", bar},
               {"hardware", hardware},
               {"parent_source", pv.source},
               {"parent_plan", plan.dump(2)},
               {"feedback", fmt::format("(v{}, {})\n{}{}", *parent, pv.origin.describe(), feedback, form_note)},
               {"best", best}});
}

void LlmSearch::evaluate_bar(State& s, const CancelToken& cancel) {
  if (!s.bar) return;
  auto e = LlmEvaluation::read(session_.store(), *s.bar);
  if (!e.validation && options_.can_evaluate) {
    if (say_) say_(fmt::format("evaluating the builtin candidate v{} (the bar)", *s.bar));
    LlmCandidateRecord none;
    none.version_id = s.bar;
    evaluate(s, none, cancel);
    e = LlmEvaluation::read(session_.store(), *s.bar);
  }
  s.bar_benchmark = e.benchmark;
}

void LlmSearch::evaluate(State& s, LlmCandidateRecord& record, const CancelToken& cancel) {
  const int64_t v = *record.version_id;
  if (!options_.can_evaluate)
    throw NoGpuError(
        fmt::format("no CUDA device: evaluating v{} needs a GPU. The search stored what it did (search {}) "
                    "and resumes there on a machine with one",
                    v, s.search_id));
  const auto started = Clock::now();
  int job = session_.evaluate(v, options_.evaluate);
  for (int step = 0; step < 2; ++step) {  // the build job, then the GPU job it queued
    std::optional<JobInfo> info;
    while (!(info = session_.jobs().wait(job, std::chrono::milliseconds(100))) || !is_finished(info->state)) {
      if (!info) throw std::runtime_error(fmt::format("evaluating v{}: its job {} is gone", v, job));
      if (cancel.cancelled()) {
        session_.jobs().cancel(job);
        throw Cancelled(cancel.reason());
      }
    }
    if (info->state != JobState::Succeeded)
      throw std::runtime_error(fmt::format("evaluating v{} failed: {}", v, info->error));
    if (step == 0 && info->result.contains("gpu_job") && info->result["gpu_job"].is_number())
      job = info->result["gpu_job"].get<int>();
    else
      break;
  }
  record.evaluation_s = seconds_since(started);
  if (record.id == 0) return;  // the bar: nothing of the search's to classify
  const LlmEvaluation e = LlmEvaluation::read(session_.store(), v);
  std::string outcome, detail;
  if (auto log = e.build_failure()) {
    auto diagnostics = parse_diagnostics(*log);
    outcome = "build_failed";
    detail = diagnostics.empty()
                 ? log->substr(0, log->find('\n'))
                 : fmt::format("line {}: {}", diagnostics.front().line, diagnostics.front().message);
  } else if (!e.validation) {
    outcome = "unmeasured";
    detail = "no validation was stored";
  } else if (!e.validation->passed) {
    const bool refused = e.validation->verdict.rfind("refused", 0) == 0;
    outcome = refused                                                    ? "refused"
              : e.validation->verdict.find("crash") != std::string::npos ? "crashed"
                                                                         : "wrong";
    detail = e.validation->verdict;
  } else if (!e.benchmark) {
    outcome = "unmeasured";
    detail = "correct; not benchmarked";
  } else {
    const auto best = chosen();
    const auto cold = e.cold_us();
    if (best == v) {
      outcome = "best";
      detail = fmt::format("the engine's choice for the group: {}", e.benchmark->verdict.sentence);
    } else {
      // Against the best so far: each was timed against eager in its own run, so the two are compared
      // through their cold ratios to eager. Overlapping 95% intervals: within the noise, a tie.
      const std::optional<LlmEvaluation> b =
          best ? std::optional(LlmEvaluation::read(session_.store(), *best)) : std::nullopt;
      const std::optional<double> best_cold = b ? b->cold_us() : std::nullopt;
      const auto& mine = e.benchmark->verdict.cold_interval;
      const auto* theirs = b && b->benchmark ? &b->benchmark->verdict.cold_interval : nullptr;
      const bool tie = cold && best_cold && mine && theirs && *theirs && mine->high >= (*theirs)->low && (*theirs)->high >= mine->low;
      outcome = tie ? "tie" : "slower";
      if (tie)
        detail = fmt::format("{:.2f} µs cold, v{} {:.2f} µs: within the noise (cold vs eager {} [{}, {}], v{} {} [{}, {}])",
                             *cold, *best, *best_cold, format_ratio(mine->ratio), format_ratio(mine->low),
                             format_ratio(mine->high), *best, format_ratio((*theirs)->ratio),
                             format_ratio((*theirs)->low), format_ratio((*theirs)->high));
      else
        detail = cold && best_cold
                     ? fmt::format("{:.2f} µs cold; v{} takes {:.2f} µs", *cold, *best, *best_cold)
                     : e.benchmark->verdict.sentence;
    }
  }
  record.outcome = outcome;
  record.detail = detail;
  s.store.set_outcome(record.id, outcome, detail, record.evaluation_s);
}

void LlmSearch::ask(State& s, int lineage, int round, const CancelToken& cancel) {
  LlmCandidateRecord r;
  r.search_id = s.search_id;
  r.lineage = lineage;
  r.round = round;
  std::optional<int64_t> parent;
  r.prompt = prompt_for(s, lineage, parent);
  r.parent_version = parent;
  LlmRequest request;
  request.system = PromptTemplate::load("system.md").render({});
  request.messages.push_back({"user", r.prompt});
  if (say_)
    say_(fmt::format("round {} lineage {}: asking {} ({}){}", round, lineage, client_.provider().name,
                     client_.provider().model, parent ? fmt::format(", from v{}", *parent) : ""));
  const auto started = Clock::now();
  try {
    LlmCompletion c = client_.complete(request, cancel, [&](const std::string& delta) {
      if (on_text_) on_text_(lineage, round, delta);
    });
    r.answer = c.text;
    r.reasoning = c.reasoning;
    r.attempts = c.attempts;
    r.tokens_in = c.input_tokens;
    r.tokens_out = c.output_tokens;
    r.cost_usd = c.cost_usd;
  } catch (const LlmError& e) {
    if (e.kind() == LlmErrorKind::cancelled) throw Cancelled("cancelled");
    r.attempts = e.attempts();
    r.outcome = "llm_error";
    r.detail = e.what();
  }
  r.answer_s = seconds_since(started);
  s.tokens += r.tokens_in + r.tokens_out;
  s.cost += r.cost_usd;
  if (r.outcome.empty()) {
    Candidate base = s.base;
    base.origin.provider = client_.provider().name;
    base.origin.model = client_.provider().model;
    base.origin.round = round;
    ParsedAnswer parsed = LlmAnswerParser::parse(r.answer, base);
    if (!parsed.model_new_source.empty())  // KernelBench's form: read by the workers' Python
      parsed = KernelBenchForm(options_.guard_python).read(parsed.model_new_source, base);
    if (!parsed.candidate) {
      r.outcome = "no_code";
      r.detail = parsed.problem;
    } else {
      r.code_hash = LlmAnswerParser::code_hash(*parsed.candidate);
      if (auto same = s.hashes.find(r.code_hash); same != s.hashes.end()) {
        r.outcome = "duplicate";
        r.detail = fmt::format("the same code as v{}: not evaluated again", same->second);
      } else {
        CandidateVersion v;
        v.group_id = s.record_id;
        v.parent_id = parent;
        v.origin.kind = OriginKind::llm;
        v.origin.provider = base.origin.provider;
        v.origin.model = base.origin.model;
        v.origin.round = round;
        const bool full = parsed.candidate->path == "full";
        v.source = full ? parsed.candidate->extension_source : parsed.candidate->cuda_source;
        v.plan_json = plan_json(*parsed.candidate);
        KernelGuardVerdict guard;
        if (options_.guard_python.empty())
          guard.not_run = "no Python was given for it";
        else  // KernelBench's form: the answer's Python, the form kernelguard was made for
          guard = KernelGuard(options_.guard_python).check(full ? parsed.model_new_source : v.source);
        r.version_id = session_.store().add_version(v);
        s.hashes[r.code_hash] = *r.version_id;
        r.outcome = guard.should_filter ? "refused" : "pending";
        if (guard.should_filter || !guard.ran || !guard.patterns.empty()) r.detail = guard.describe();
      }
    }
  }
  r.id = s.store.add_candidate(r);
  s.records.push_back(r);
  if (r.outcome == "pending") {
    const std::string guard_note = r.detail;
    auto& stored = s.records.back();
    evaluate(s, stored, cancel);
    if (!guard_note.empty()) {
      stored.detail += " [" + guard_note + "]";
      s.store.set_outcome(stored.id, stored.outcome, stored.detail, stored.evaluation_s);
    }
  }
  const auto& done = s.records.back();
  if (say_)
    say_(fmt::format("round {} lineage {}: {}{}{} ({:.1f} s answer{}, {} tokens, ${:.4f})", round, lineage,
                     done.version_id ? fmt::format("v{} ", *done.version_id) : "", done.outcome,
                     done.detail.empty() ? "" : ": " + done.detail, done.answer_s,
                     done.version_id ? fmt::format(", {:.1f} s evaluation", done.evaluation_s) : "",
                     done.tokens_in + done.tokens_out, done.cost_usd));
}

LlmSearchReport LlmSearch::run(const CancelToken& cancel, bool resume) {
  State s(session_.project_dir());
  auto graph = session_.graph();
  if (!graph) throw std::runtime_error("the project has no graph of the model: run intake first");
  s.graph = *graph;
  auto it = std::find_if(s.graph.groups.begin(), s.graph.groups.end(),
                         [&](const FusionGroup& g) { return g.id == group_id_; });
  if (it == s.graph.groups.end()) {
    std::string ids;
    for (const auto& g : s.graph.groups) ids += (ids.empty() ? "" : ", ") + std::to_string(g.id);
    throw std::runtime_error(
        fmt::format("the model has no fusion group {} (its groups: {})", group_id_, ids));
  }
  s.group = *it;
  const std::vector<StoredGroup> stored = stored_groups(session_.store());
  const StoredGroup* sg = find_stored_group(stored, s.group);
  if (!sg)
    throw std::runtime_error(
        fmt::format("group {} has not been generated yet: run the builtin generator first", group_id_));
  s.record_id = sg->record_id;
  s.bar = sg->newest_builtin;
  GroupContext context(s.graph, s.group, GenerationTarget{});
  s.base.group_id = s.group.id;
  s.base.model_path = s.graph.model_path;
  s.base.origin.kind = "llm";
  s.base.plan = context.base_plan();
  s.base.summary = fmt::format("LLM candidate for {} ({})", context.ops_summary(), context.shapes_summary());
  s.group_text = fmt::format(
      "## The group: {} ({})\n\nIts reference, in PyTorch:\n\n```python\n{}\n```\n\nInputs, in call order:\n",
      context.ops_summary(), s.group.kind, s.group.functional_source);
  for (std::size_t i = 0; i < s.base.plan.inputs.size(); ++i)
    s.group_text += tensor_line(fmt::format("input:{}", i), s.base.plan.inputs[i]);
  s.group_text += "\nOutputs:\n";
  for (std::size_t i = 0; i < s.base.plan.outputs.size(); ++i)
    s.group_text += tensor_line(fmt::format("output:{}", i), s.base.plan.outputs[i]);
  if (s.bar)
    if (auto bar = stored_candidate(session_.store(), *s.bar))
      s.hashes[LlmAnswerParser::code_hash(bar->candidate)] = *s.bar;

  LlmSearchReport report;
  if (options_.can_evaluate) {
    // Before any answer is paid for: where the answers' code will run (SandboxRefused: nowhere).
    const SandboxDecision sandbox = SandboxPolicy::decide(session_.project_dir(), session_.options().bwrap);
    report.sandboxed = sandbox.sandboxed();
    if (say_)
      say_(sandbox.sandboxed()
               ? "LLM-written code runs in the sandbox (bubblewrap: no network, the system read-only, only its "
                 "work folder writable)"
               : fmt::format("the sandbox cannot start ({}): LLM-written code runs UNSANDBOXED, as this project "
                             "allows; its results say sandboxed: false",
                             sandbox.reason));
  }
  std::optional<LlmSearchRecord> previous = resume ? s.store.unfinished_search(s.record_id) : std::nullopt;
  if (previous) {
    s.search_id = previous->id;
    s.records = s.store.candidates(s.search_id);
    report.resumed = true;
    for (const auto& r : s.records) {
      s.tokens += r.tokens_in + r.tokens_out;
      s.cost += r.cost_usd;
      if (r.version_id && !r.code_hash.empty()) s.hashes[r.code_hash] = *r.version_id;
    }
    if (say_)
      say_(fmt::format("resuming LLM search {} ({} candidate(s) so far)", s.search_id, s.records.size()));
  } else {
    LlmSearchRecord rec;
    rec.group_record_id = s.record_id;
    rec.provider = client_.provider().name;
    rec.model = client_.provider().model;
    rec.options = options_;
    s.search_id = s.store.create_search(rec);
  }
  report.search_id = s.search_id;
  report.bar_version = s.bar;

  auto finish = [&](const std::string& state, const std::string& reason) {
    if (state != "stopped") s.store.finish_search(s.search_id, state, reason);
    report.state = state;
    report.stop_reason = reason;
    report.candidates = s.store.candidates(s.search_id);
    report.chosen = chosen();
    report.tokens = s.tokens;
    report.cost_usd = s.cost;
    report.seconds = seconds_since(s.started);
    if (say_) say_(fmt::format("LLM search {} {}: {}", s.search_id, state, reason));
    return report;
  };

  try {
    evaluate_bar(s, cancel);
    for (auto& r : s.records)  // stored but not evaluated when the last run ended
      if (r.outcome == "pending") evaluate(s, r, cancel);
    int idle = 0;
    for (int round = 1; round <= options_.rounds; ++round) {
      const auto best_before = chosen();
      bool asked = false;
      for (int lineage = 1; lineage <= options_.lineages; ++lineage) {
        const bool done = std::any_of(s.records.begin(), s.records.end(), [&](const LlmCandidateRecord& r) {
          return r.lineage == lineage && r.round == round;
        });
        if (done) continue;
        if (auto why = budget_exhausted(s)) return finish("finished", *why);
        ask(s, lineage, round, cancel);
        asked = true;
        const auto& last = s.records.back();
        if (last.outcome == "llm_error" && !last.attempts.empty() &&
            (last.attempts.back().outcome == "auth" || last.attempts.back().outcome == "spend_limit"))
          return finish("failed", last.detail);
      }
      if (!asked) continue;  // a round finished before a restart
      if (chosen() == best_before) {
        if (++idle >= options_.idle_rounds)
          return finish("finished",
                        fmt::format("round {} brought nothing better than {}", round,
                                    best_before ? fmt::format("v{}", *best_before) : std::string("eager")));
      } else {
        idle = 0;
      }
    }
    return finish("finished", fmt::format("all {} rounds done", options_.rounds));
  } catch (const Cancelled&) {
    return finish("stopped", "cancelled: the search resumes from here");
  }
}

}  // namespace nova
