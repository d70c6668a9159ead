// nova-studio: the desktop studio. `nova-studio [MODEL.py]` opens a model at start; `--help` and
// `--version` answer without a display.
#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QMessageBox>
#include <QTimer>

#include "core/env/build_info.h"
#include "core/env/private_files.h"
#include "core/env/settings.h"
#include "ui/shell/main_window.h"

namespace {

struct StudioOptions {
  QCommandLineOption generator{"generator", "generator for this session: builtin (default)", "name", "builtin"};
  QCommandLineOption screenshot{"screenshot", "save a picture of the window once the model is loaded, then quit",
                                "file.png"};
};

void describe(QCommandLineParser& parser, const StudioOptions& o) {
  QCoreApplication::setApplicationName("Nova Studio");
  QCoreApplication::setApplicationVersion(nova::build_info::version());
  parser.setApplicationDescription("Nova Studio: fused CUDA kernels for PyTorch models");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addOption(o.generator);
  parser.addOption(o.screenshot);
  parser.addPositionalArgument("model", "a PyTorch model file to open");
}

}  // namespace

int main(int argc, char** argv) {
  nova::make_new_files_private();  // projects, graphs, inputs and candidates hold the client's code
  StudioOptions options;
  {
    // --help, --version and bad options are answered before any window system is touched, so
    // they work without a display (over ssh, in a package's smoke test).
    QCoreApplication probe(argc, argv);
    QCommandLineParser parser;
    describe(parser, options);
    parser.process(probe);
  }
  QApplication app(argc, argv);
  Q_INIT_RESOURCE(nova);  // resources/nova.qrc lives in the static nova_ui library
  QApplication::setWindowIcon(QIcon(":/nova/nova.svg"));
  QCommandLineParser parser;
  describe(parser, options);
  parser.process(app);
  const QCommandLineOption& generator = options.generator;
  const QCommandLineOption& screenshot = options.screenshot;

  nova::Settings settings;
  QString settingsError;
  try {
    settings = nova::Settings::load();
  } catch (const std::exception& e) {
    settingsError = e.what();
  }
  if (parser.isSet(generator)) {
    if (parser.value(generator) != "builtin") {
      fprintf(stderr, "nova-studio: generator '%s' is not available in this version; use 'builtin'\n",
              qPrintable(parser.value(generator)));
      return 2;
    }
    settings.default_generator = "builtin";
  }

  nova::ui::MainWindow window(settings);
  window.show();
  if (!settingsError.isEmpty())
    QMessageBox::warning(&window, "Settings",
                         settingsError + "\nDefaults are used; saving will replace the file.");
  if (parser.isSet(screenshot)) {
    // Grab once the studio has settled on the model (or failed to open it), then leave.
    QString file = parser.value(screenshot);
    auto grab = [&window, file] {
      window.grab().save(file);
      QApplication::quit();
    };
    // Settled means the candidates are in the editor too (or intake failed).
    QObject::connect(&window, &nova::ui::MainWindow::candidatesReady, &window,
                     [grab] { QTimer::singleShot(300, grab); });
    QObject::connect(&window, &nova::ui::MainWindow::modelSettled, &window, [grab](const QString&, bool ok) {
      if (!ok) QTimer::singleShot(300, grab);
    });
    if (parser.positionalArguments().isEmpty()) QTimer::singleShot(500, grab);
  }
  if (!parser.positionalArguments().isEmpty() && !window.openModel(parser.positionalArguments().first()))
    if (parser.isSet(screenshot)) return 2;
  return app.exec();
}
