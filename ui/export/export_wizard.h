#pragma once
#include <cstdint>
#include <vector>

#include <QString>
#include <QWizard>

#include "core/env/settings.h"
#include "core/export/export_plan.h"
#include "core/jobs/job.h"
#include "ui/export/export_choices.h"

namespace nova::ui {

class StudioSession;
class ExportVersionsPage;
class ExportOptionsPage;
class ExportSummaryPage;
class ExportRunPage;

// The studio's Export wizard (File > Export package…), the studio's `nova export`: which version ships
// per fusion group (pre-selected as the export would ship it: the user's choice for export, else the
// selection policy's; versions that cannot ship are shown with the reason and cannot be chosen), the
// package name, target architectures, output folder and nvcc build check (each checked as typed), a
// summary of what ships and what stays PyTorch with Amdahl's estimate and the equivalent command
// line, then the export as a job of the open session (Jobs panel, cancel), and where the package is
// and how to install it, or why nothing was written. Closes when the session goes.
class ExportWizard : public QWizard {
  Q_OBJECT
 public:
  enum PageId { Versions, Options, Summary, Run };
  ExportWizard(StudioSession& studio, const Settings& settings, QWidget* parent = nullptr);

  // Why the project cannot be exported (ExportChoices::read failed); empty when it can.
  const QString& problem() const { return problem_; }
  ExportChoices& choices() { return choices_; }
  StudioSession& studio() const { return studio_; }
  ExportVersionsPage* versionsPage() const { return versions_; }
  ExportOptionsPage* optionsPage() const { return options_; }
  ExportSummaryPage* summaryPage() const { return summary_; }
  ExportRunPage* runPage() const { return run_; }

  ExportOptions exportOptions() const;
  QString commandLine() const;
  // Why the nvcc build check cannot run here (no nvcc in the CUDA toolkit); empty when it can.
  QString nvccProblem() const;
  // The plan with the wizard's selections, the project unchanged. Throws ExportError.
  ExportPlan preview() const;
  // Stores the selections, plans and submits the export job; the job's id, or 0 with `error`.
  int startExport(QString* error);
  int job() const { return job_; }

  void reject() override;  // cancels an export under way

 signals:
  // The export job ended: `ok` with the package's folder, or why nothing was written.
  void exportEnded(bool ok, const QString& message);

 private:
  void follow(const nova::JobInfo& info);

  StudioSession& studio_;
  const Settings& settings_;
  ExportChoices choices_;
  QString problem_;
  int job_ = 0;
  std::vector<std::int64_t> shipped_;  // the versions the export under way ships
  ExportVersionsPage* versions_;
  ExportOptionsPage* options_;
  ExportSummaryPage* summary_;
  ExportRunPage* run_;
};

}  // namespace nova::ui
