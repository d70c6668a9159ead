#include "core/jobs/job.h"

namespace nova {

std::string to_string(JobLane lane) {
  switch (lane) {
    case JobLane::Gpu:
      return "gpu";
    case JobLane::GpuShared:
      return "gpu-shared";
    case JobLane::Cpu:
      return "cpu";
  }
  return "cpu";
}

std::string to_string(JobState state) {
  switch (state) {
    case JobState::Queued:
      return "queued";
    case JobState::Running:
      return "running";
    case JobState::Succeeded:
      return "succeeded";
    case JobState::Failed:
      return "failed";
    case JobState::Cancelled:
      return "cancelled";
    case JobState::Superseded:
      return "superseded";
    case JobState::TimedOut:
      return "timed out";
  }
  return "unknown";
}

bool is_finished(JobState state) { return state != JobState::Queued && state != JobState::Running; }

void to_json(nlohmann::json& j, const JobInfo& i) {
  j = {{"id", i.id},
       {"key", i.key},
       {"title", i.title},
       {"lane", to_string(i.lane)},
       {"device", i.device},
       {"state", to_string(i.state)},
       {"progress", i.progress},
       {"message", i.message},
       {"log", i.log},
       {"elapsed_s", i.elapsed_s},
       {"budget_s", i.budget_s},
       {"result", i.result},
       {"error", i.error}};
}

}  // namespace nova
