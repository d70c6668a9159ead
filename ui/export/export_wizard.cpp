#include "ui/export/export_wizard.h"

#include <QDir>

#include "core/export/export_error.h"
#include "core/export/export_planner.h"
#include "core/export/package_build_check.h"
#include "core/jobs/job_queue.h"
#include "core/session/project_session.h"
#include "ui/export/export_command_line.h"
#include "ui/export/export_job.h"
#include "ui/export/export_options_page.h"
#include "ui/export/export_run_page.h"
#include "ui/export/export_summary_page.h"
#include "ui/export/export_versions_page.h"
#include "ui/shell/studio_session.h"

namespace nova::ui {

ExportWizard::ExportWizard(StudioSession& studio, const Settings& settings, QWidget* parent)
    : QWizard(parent), studio_(studio), settings_(settings) {
  setWindowTitle(tr("Export package"));
  setWizardStyle(QWizard::ClassicStyle);
  setOption(QWizard::NoBackButtonOnLastPage);
  setButtonText(QWizard::CommitButton, tr("&Export"));
  try {
    if (!studio_.session()) throw ExportError("no model is open");
    choices_ = ExportChoices::read(studio_.session()->store(), studio_.session()->model_unchanged());
  } catch (const std::exception& e) {
    problem_ = QString::fromUtf8(e.what());
  }
  versions_ = new ExportVersionsPage(*this);
  options_ = new ExportOptionsPage(*this);
  summary_ = new ExportSummaryPage(*this);
  run_ = new ExportRunPage(*this);
  setPage(Versions, versions_);
  setPage(Options, options_);
  setPage(Summary, summary_);
  setPage(Run, run_);
  resize(860, 600);
  connect(&studio_, &StudioSession::jobChanged, this, &ExportWizard::follow);
  // The project goes with its session: nothing here may read it afterwards.
  connect(&studio_, &StudioSession::closing, this, &QWidget::close);
}

ExportOptions ExportWizard::exportOptions() const {
  ExportOptions o;
  o.package_name = options_->packageName().toStdString();
  o.arch_list = options_->archList().toStdString();
  return o;
}

QString ExportWizard::commandLine() const {
  ExportCommandLine::Parts p;
  p.model = QString::fromStdString(choices_.modelPath());
  if (studio_.session()) p.project = QString::fromStdString(studio_.session()->project_dir().string());
  p.out = options_->outFolder();
  p.name = options_->packageName();
  p.arch = options_->archList();
  p.checkBuild = options_->checkBuild();
  return ExportCommandLine::build(p);
}

QString ExportWizard::nvccProblem() const {
  try {
    PackageBuildCheck::nvcc(settings_.resolved_cuda_toolkit());
    return {};
  } catch (const std::exception& e) {
    return QString::fromUtf8(e.what());
  }
}

ExportPlan ExportWizard::preview() const {
  if (!studio_.session()) throw ExportError("no model is open");
  ProjectSession& s = *studio_.session();
  return choices_.preview(s.store(), s.model_unchanged(), exportOptions());
}

int ExportWizard::startExport(QString* error) {
  try {
    if (!studio_.session()) throw ExportError("no model is open");
    ProjectSession& s = *studio_.session();
    choices_.apply(s.store());
    ExportJob::Request r;
    r.plan = ExportPlanner::plan(s.store(), s.model_unchanged(), exportOptions());
    r.out = QDir::cleanPath(options_->outFolder()).toStdString();
    r.command = commandLine().toStdString();
    r.model = s.options().model;
    r.python = s.options().python;
    if (options_->checkBuild())
      r.check = ExportJob::BuildCheck{PackageBuildCheck::nvcc(settings_.resolved_cuda_toolkit()), s.options().python};
    shipped_.clear();
    for (const auto& g : r.plan.groups)
      if (g.ships()) shipped_.push_back(*g.version_id);
    job_ = ExportJob::submit(s.jobs(), std::move(r));
    return job_;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return 0;
  }
}

void ExportWizard::follow(const JobInfo& info) {
  if (job_ == 0 || info.id != job_) return;
  run_->showJob(info);
  if (!is_finished(info.state)) return;
  job_ = 0;
  if (info.state != JobState::Succeeded) {
    emit exportEnded(false, info.state == JobState::Cancelled ? tr("the export was cancelled.")
                                                              : QString::fromStdString(info.error));
    return;
  }
  const std::string out = info.result.value("out", "");
  // The project records what was delivered where, as `nova export` does.
  if (studio_.session())
    for (std::int64_t version : shipped_) studio_.session()->store().add_export({0, version, out, ""});
  emit exportEnded(true, QString::fromStdString(out));
}

void ExportWizard::reject() {
  if (job_ != 0 && studio_.session()) studio_.session()->jobs().cancel(job_);
  job_ = 0;
  QWizard::reject();
}

}  // namespace nova::ui
