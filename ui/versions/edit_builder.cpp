#include "ui/versions/edit_builder.h"

#include <algorithm>

#include <QMetaObject>

#include "core/build/nvrtc_compiler.h"
#include "core/project/project_error.h"
#include "core/project/project_store.h"

namespace nova::ui {

EditBuilder::EditBuilder(ProjectStore& store, QString arch, QObject* parent)
    : QObject(parent), store_(store), arch_(std::move(arch)) {}

EditBuilder::~EditBuilder() {
  for (auto& r : running_) r.wait();
}

void EditBuilder::build(qint64 id) {
  std::string source;
  try {
    source = store_.version(id).source;
  } catch (const ProjectError& e) {
    emit built(id, false, {}, tr("v%1 cannot be built: %2").arg(id).arg(e.what()));
    return;
  }
  const unsigned serial = ++serial_;
  ++pending_;
  emit started(id);
  running_.erase(std::remove_if(running_.begin(), running_.end(),
                                [](const std::future<void>& r) {
                                  return r.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
                                }),
                 running_.end());
  running_.push_back(std::async(std::launch::async, [this, id, serial, source, arch = arch_.toStdString()] {
    NvrtcResult r;
    std::string failure;
    try {
      r = NvrtcCompiler().compile(source, "v" + std::to_string(id) + ".cu", arch);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    QMetaObject::invokeMethod(
        this,
        [this, id, serial, r, failure] {
          --pending_;
          BuildLogRecord log;
          log.version_id = id;
          log.tool = "nvrtc";
          log.ok = failure.empty() && r.ok;
          log.log = failure.empty() ? r.log : "NVRTC could not run: " + failure;
          if (log.ok && log.log.empty()) log.log = "NVRTC " + NvrtcCompiler::nvrtc_version() + " for " + r.arch + ": ok";
          std::vector<Diagnostic> diagnostics = parse_diagnostics(log.log);
          QString stored;
          try {
            store_.add_build_log(log);
          } catch (const ProjectError& e) {
            stored = tr(" (the log was not stored: %1)").arg(e.what());
          }
          if (serial != serial_) return;  // a newer build replaced this one
          int errors = 0, warnings = 0;
          for (const auto& d : diagnostics) {
            errors += d.severity == DiagnosticSeverity::error;
            warnings += d.severity == DiagnosticSeverity::warning;
          }
          QString summary =
              !failure.empty() ? tr("v%1 was not built: NVRTC could not run: %2").arg(id).arg(failure.c_str())
              : log.ok ? tr("v%1 built with NVRTC for %2: %3 warnings").arg(id).arg(arch_).arg(warnings)
                       : tr("v%1 failed to build: %2 errors, %3 warnings (see the diagnostics list)")
                             .arg(id)
                             .arg(errors)
                             .arg(warnings);
          emit built(id, log.ok, diagnostics, summary + stored);
        },
        Qt::QueuedConnection);
  }));
}

}  // namespace nova::ui
