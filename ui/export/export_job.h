#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "core/export/export_plan.h"
#include "core/jobs/job_queue.h"

namespace nova::ui {

// The Export wizard's export as a job of the session's queue (CPU lane, shown in the Jobs panel):
// first the model file is checked to rebuild its Model from get_init_inputs() (ModelRebuildCheck, as
// `nova export` does), then PackageWriter writes the package into a temporary folder beside `out` and
// moves it into place, after the optional nvcc build check (PackageBuildCheck, sm_90 as `nova export --check-build`). Cancel is
// honoured between steps; a failure or a cancel leaves nothing behind. Its result: {"out", "package",
// "shipped"}; a failure's error is the ExportError's message.
class ExportJob {
 public:
  struct BuildCheck {
    std::filesystem::path nvcc;
    std::string python;         // the interpreter whose torch the sources compile against
    std::string arch = "90";
  };
  struct Request {
    ExportPlan plan;
    std::filesystem::path out;
    std::string command;  // the equivalent `nova export` line, for the package's README
    std::filesystem::path model;  // the model file, checked to rebuild its Model before anything is written
    std::string python;           // the interpreter that checks it
    std::optional<BuildCheck> check;
  };
  static constexpr const char* kKey = "export";
  static int submit(JobQueue& queue, Request request);
};

}  // namespace nova::ui
