#pragma once
#include <QString>

namespace nova::ui {

// The `nova export` command line that makes the same package as the Export wizard, as the shell
// takes it (arguments quoted where needed), in the CLI's order: MODEL, --project (only when the
// project is not the model's default one), --out, --name (only when not the default), --arch (only
// when not the default), --check-build. The wizard shows it and writes it into the package's README.
class ExportCommandLine {
 public:
  struct Parts {
    QString model, project, out, name, arch;
    bool checkBuild = false;
  };
  static QString build(const Parts& parts);
  // `text` as one shell word: unchanged when it holds only safe characters, else in single quotes.
  static QString quoted(const QString& text);
};

}  // namespace nova::ui
