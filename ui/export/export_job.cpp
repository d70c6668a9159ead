#include "ui/export/export_job.h"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "core/export/export_error.h"
#include "core/export/model_rebuild_check.h"
#include "core/export/package_build_check.h"
#include "core/export/package_writer.h"
#include "core/jobs/job_context.h"

namespace nova::ui {

int ExportJob::submit(JobQueue& queue, Request request) {
  auto r = std::make_shared<const Request>(std::move(request));
  JobSpec spec;
  spec.key = kKey;
  spec.title = fmt::format("export package {}", r->plan.package_name);
  spec.lane = JobLane::Cpu;
  spec.work = [r](JobContext& ctx) -> nlohmann::json {
    const bool checking = r->check && r->plan.shipped() > 0;
    // Steps: the model check, sources, (include folders, one per compiled file), the move; the
    // fraction is a guide.
    const double steps = checking ? 4.0 + 1 + r->plan.shipped() : 3.0;
    double done = 0;
    auto say = [&](const std::string& message) {
      ctx.token().throw_if_cancelled();  // the writer removes its temporary folder on the way out
      ctx.progress(message, std::min(0.95, done++ / steps));
      ctx.log(message);
    };
    say(fmt::format("checking that {} rebuilds its Model from get_init_inputs()", r->model.filename().string()));
    try {
      ModelRebuildCheck::check(r->python, r->model);
    } catch (const ModelRebuildCheck::CannotRun& e) {
      throw ExportError(e.what());
    }
    std::function<void(const std::filesystem::path&)> check;
    if (checking)
      check = [&](const std::filesystem::path& dir) {
        say("finding the include folders of " + r->check->python + "'s torch");
        const auto includes = PackageBuildCheck::include_dirs(r->check->python);
        PackageBuildCheck::compile(dir, r->check->nvcc, includes, r->check->arch, say);
        ctx.token().throw_if_cancelled();
      };
    PackageWriter::write(r->plan, r->out, r->command, say, check);
    ctx.progress("wrote " + r->out.string(), 1.0);
    return {{"out", std::filesystem::absolute(r->out).lexically_normal().string()},
            {"package", r->plan.package_name},
            {"shipped", r->plan.shipped()}};
  };
  return queue.submit(std::move(spec));
}

}  // namespace nova::ui
