#include "ui/llm/llm_search_job.h"

#include <fmt/format.h>

#include "core/jobs/job_context.h"
#include "core/session/project_session.h"
#include "core/worker/no_gpu_error.h"

namespace nova::ui {

int LlmSearchJob::start(ProjectSession& session, const LlmProvider& provider, const std::string& key, int group,
                        const LlmSearchOptions& options) {
  JobSpec spec;
  spec.key = fmt::format("llm:group{}", group);
  spec.title = fmt::format("LLM search on group {} ({}/{})", group, provider.name, provider.model);
  spec.lane = JobLane::Cpu;
  // The job's thread only emits; this object lives on the GUI thread, so the signals are queued there.
  // It outlives the job: the session (whose destructor cancels the job and waits) goes first.
  LlmSearchJob* self = this;
  spec.work = [self, &session, provider, key, group, options](JobContext& ctx) -> nlohmann::json {
    LlmClient client(provider, key);
    LlmSearch search(
        session, client, group, options,
        [self, &ctx](const std::string& line) {
          ctx.log(line);
          ctx.progress(line);
          emit self->said(QString::fromStdString(line));
        },
        [self](int lineage, int round, const std::string& delta) {
          emit self->textArrived(lineage, round, QString::fromStdString(delta));
        });
    LlmSearchReport report;
    try {
      report = search.run(ctx.token());
    } catch (const NoGpuError& e) {
      emit self->failed(QString::fromUtf8(e.what()), true);
      throw;
    } catch (const Cancelled& e) {
      emit self->ended("stopped", QString::fromUtf8(e.what()), 0);
      throw;
    } catch (const std::exception& e) {
      emit self->failed(QString::fromUtf8(e.what()), false);
      throw;
    }
    emit self->ended(QString::fromStdString(report.state), QString::fromStdString(report.stop_reason),
                     report.search_id);
    if (report.state == "failed") throw std::runtime_error(report.stop_reason);
    return {{"search_id", report.search_id},     {"state", report.state},
            {"stop_reason", report.stop_reason}, {"tokens", report.tokens},
            {"cost_usd", report.cost_usd},       {"candidates", report.candidates.size()}};
  };
  return session.jobs().submit(std::move(spec));
}

}  // namespace nova::ui
