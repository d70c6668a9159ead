#include "core/export/model_rebuild_check.h"

#include <chrono>

#include <fmt/format.h>

#include "core/export/export_error.h"
#include "core/export/package_writer.h"
#include "core/worker/child_process.h"

namespace nova {

void ModelRebuildCheck::check(const std::string& python, const std::filesystem::path& model) {
  const auto script = PackageWriter::templates_dir() / "check_model.py";
  ProcessResult r;
  try {
    r = ChildProcess::run({python, script.string(), std::filesystem::absolute(model).string()},
                          ChildProcess::minimal_env(), std::chrono::minutes(5));
  } catch (const std::exception& e) {
    throw CannotRun(fmt::format("cannot run {} to check the model: {}", python, e.what()));
  }
  if (r.timed_out) throw ExportError(fmt::format("checking {} took longer than 5 minutes", model.string()));
  if (!(r.status.exited && r.status.code == 0)) {
    std::string why = r.err;
    while (!why.empty() && (why.back() == '\n' || why.back() == '\r')) why.pop_back();
    throw ExportError(why.empty() ? fmt::format("checking {} failed ({})", model.string(), r.status.describe()) : why);
  }
}

}  // namespace nova
