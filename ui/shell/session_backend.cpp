#include "ui/shell/session_backend.h"

#include "core/doctor/doctor_report.h"

namespace nova::ui {

SessionBackend SessionBackend::resolved() const {
  SessionBackend out = *this;
  if (!out.factory)
    out.factory = [](SessionOptions options) { return std::make_unique<ProjectSession>(std::move(options)); };
  if (!out.gpu)
    out.gpu = [] {
      DoctorReport report;
      probe_cuda_driver(report);
      if (report.has_gpu()) return QString();
      return report.driver_error.empty() ? QObject::tr("no CUDA device found")
                                         : QString::fromStdString(report.driver_error);
    };
  return out;
}

}  // namespace nova::ui
