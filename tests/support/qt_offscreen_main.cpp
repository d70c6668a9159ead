// The main() of the Qt test executables (nova_ui_tests, nova_ui_gpu_tests): a QApplication on the
// offscreen platform, then every test of the executable.
#include <QApplication>

#include <gtest/gtest.h>

int main(int argc, char** argv) {
  // Test discovery runs this binary too: always offscreen, never a real display.
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  Q_INIT_RESOURCE(nova);  // resources/nova.qrc lives in the static nova_ui library
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
