#include "ui/export/export_command_line.h"

#include <QRegularExpression>

#include "core/export/export_plan.h"
#include "core/export/export_planner.h"
#include "core/project/project_location.h"

namespace nova::ui {

QString ExportCommandLine::quoted(const QString& text) {
  static const QRegularExpression safe(R"(^[A-Za-z0-9_./:=+@%,-]+$)");
  if (safe.match(text).hasMatch()) return text;
  QString q = text;
  q.replace("'", R"('\'')");
  return "'" + q + "'";
}

QString ExportCommandLine::build(const Parts& p) {
  QString c = "nova export " + quoted(p.model);
  const QString defaultProject = QString::fromStdString(project_folder_for(p.model.toStdString()).string());
  if (!p.project.isEmpty() && p.project != defaultProject) c += " --project " + quoted(p.project);
  c += " --out " + quoted(p.out);
  if (!p.name.isEmpty() && p.name.toStdString() != ExportPlanner::default_package_name(p.model.toStdString()))
    c += " --name " + quoted(p.name);
  if (p.arch.toStdString() != ExportOptions{}.arch_list) c += " --arch " + quoted(p.arch);
  if (p.checkBuild) c += " --check-build";
  return c;
}

}  // namespace nova::ui
