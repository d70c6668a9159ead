#include "core/session/optimization_run.h"

#include <chrono>
#include <map>

#include <fmt/format.h>

#include "core/session/stored_generation.h"
#include "core/select/selection_policy.h"
#include "core/session/project_evidence.h"

namespace nova {
namespace {
double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

OptimizationRun::OptimizationRun(ProjectSession& session, OptimizationOptions options, Say say)
    : session_(session), options_(std::move(options)), say_(std::move(say)) {}

OptimizationRun::Need OptimizationRun::need_of(std::int64_t version) const {
  auto validation = ProjectEvidence::latest_validation(session_.store(), version);
  if (!validation) return Need::validate;
  // The worker check is the one a run adds when the worker gave no answer (it crashed, was killed,
  // ran out of its budget, or failed in the harness): nothing was learned of the candidate itself.
  for (const auto& c : validation->checks)
    if (c.name == "worker" && !c.passed) return Need::validate_again;
  if (validation->passed && !ProjectEvidence::latest_benchmark(session_.store(), version)) return Need::bench;
  return Need::nothing;
}

JobInfo OptimizationRun::run_job(int id, const std::string& what) {
  JobInfo info = session_.wait(id);
  if (info.state != JobState::Succeeded)
    throw std::runtime_error(fmt::format("{} {}: {}", what, to_string(info.state), info.error));
  return info;
}

OptimizationReport OptimizationRun::run() {
  const auto started = std::chrono::steady_clock::now();
  OptimizationReport report;
  auto say = [&](const std::string& line) {
    if (say_) say_(line);
  };

  // 1. The graph.
  if (options_.graph) {
    session_.import_graph(*options_.graph);
    say(fmt::format("graph: taken from the given graph file ({} groups)", options_.graph->groups.size()));
  } else if (!options_.fresh_intake && session_.model_unchanged()) {
    say("graph: the project's graph was captured from this exact model text; intake skipped (--fresh to redo)");
  } else {
    say("intake: capturing the graph in a worker");
    JobInfo info = run_job(session_.intake(), "intake");
    // The worker's start (Python and torch, imported once a session by the standby the intake takes) is
    // named apart: it is the session's, not the model's.
    say(fmt::format("intake: {} nodes, {} fusion groups in {:.1f} s{}", info.result.value("nodes", 0),
                    info.result.value("groups", 0), info.result.value("seconds", 0.0),
                    ProjectSession::worker_start_note(info.result.value("worker_start_seconds", 0.0))));
  }
  auto graph = session_.graph();
  if (!graph) throw std::runtime_error("the project holds no graph after intake");
  report.warnings = graph->warnings;
  for (const auto& w : graph->warnings) say("warning: " + w);

  // 2. Generation (only the groups not generated yet, or by an older generator revision).
  {
    JobInfo info = run_job(session_.generate(options_.generate), "generation");
    say(fmt::format("generate: {} group(s) generated, {} version(s) added, {} declined, {} failed to compile",
                    info.result.value("groups", 0), info.result.value("added", 0), info.result.value("declined", 0),
                    info.result.value("failed_builds", 0)));
  }
  if (!options_.needs_gpu) {
    report.evidence = ProjectEvidence::read(session_.store(), *graph);
    report.selection = SelectionPolicy::select(report.evidence);
    report.seconds = seconds_since(started);
    return report;
  }

  // 3. Which versions: each group's newest builtin version of each rule (the primary and its
  //    alternatives) that has no final result yet (--remeasure evaluates every one again). A run that
  //    was stopped resumes here: a version that passed but has no benchmark is benchmarked, and one
  //    whose validation ended without the worker's answer is validated again.
  std::vector<StoredGroup> stored = stored_groups(session_.store());
  std::vector<std::int64_t> todo;
  std::vector<std::int64_t> passed;
  int again = 0;
  for (const auto& g : graph->groups) {
    const StoredGroup* s = find_stored_group(stored, g);
    if (!s) continue;
    std::map<std::string, std::int64_t> newest;  // rule -> version
    for (const auto& v : session_.store().versions(s->record_id))
      if (v.origin.kind == OriginKind::builtin) newest[v.origin.rule] = v.id;
    for (const auto& [rule, id] : newest) {
      switch (options_.remeasure ? Need::validate : need_of(id)) {
        case Need::validate_again: ++again; [[fallthrough]];
        case Need::validate: todo.push_back(id); break;
        case Need::bench: passed.push_back(id); break;
        case Need::nothing: break;
      }
    }
  }
  say(fmt::format("evaluate: {} version(s) to validate{}{}", todo.size(),
                  again ? fmt::format(" ({} again: their last validation ended without the worker's answer)", again)
                        : "",
                  passed.empty() ? "" : fmt::format(", {} validated earlier still to benchmark", passed.size())));

  // 4. Validation side by side (correctness, not time).
  EvaluateOptions validate = options_.evaluate;
  validate.steps = EvaluateOptions::Steps::validate;
  std::vector<std::pair<std::int64_t, int>> jobs;
  for (auto id : todo) jobs.emplace_back(id, session_.evaluate(id, validate));
  int done = 0;
  for (const auto& [id, job] : jobs) {
    JobInfo info = session_.wait(job);
    ++done;
    ++report.evaluated;
    std::string verdict = info.state == JobState::Succeeded
                              ? info.result.value("validation", nlohmann::json::object()).value("verdict", "")
                              : to_string(info.state) + ": " + info.error;
    bool ok = info.state == JobState::Succeeded &&
              info.result.value("validation", nlohmann::json::object()).value("passed", false);
    if (ok) {
      passed.push_back(id);
      ++report.passed;
    } else {
      report.failures.push_back(fmt::format("v{}: {}", id, verdict));
    }
    say(fmt::format("[{}/{}] validate v{}: {}", done, jobs.size(), id, verdict));
  }

  // 5. Benchmarks: each alone on its GPU (one at a time per device; several devices run in parallel).
  EvaluateOptions bench = options_.evaluate;
  bench.steps = EvaluateOptions::Steps::bench;
  jobs.clear();
  for (auto id : passed) jobs.emplace_back(id, session_.evaluate(id, bench));
  done = 0;
  for (const auto& [id, job] : jobs) {
    JobInfo info = session_.wait(job);
    ++done;
    std::string what;
    if (info.state == JobState::Succeeded && info.result.contains("benchmark")) {
      ++report.benchmarked;
      what = info.result["benchmark"]["verdict"].value("sentence", "");
    } else {
      what = to_string(info.state) + ": " + info.error;
      report.failures.push_back(fmt::format("v{}: benchmark {}", id, what));
    }
    say(fmt::format("[{}/{}] bench v{} (device {}): {}", done, passed.size(), id, info.device, what));
  }

  // 6. The selection over everything the project now holds.
  report.evidence = ProjectEvidence::read(session_.store(), *graph);
  report.selection = SelectionPolicy::select(report.evidence);
  report.seconds = seconds_since(started);
  return report;
}

}  // namespace nova
