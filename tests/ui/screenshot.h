#pragma once
// Saves a widget's picture under NOVA_TEST_OUTPUT for a person to look at after the UI tests.
#include <QString>
#include <QWidget>

#include <filesystem>

namespace nova::test {

inline bool save_screenshot(QWidget& widget, const std::string& name) {
  std::filesystem::create_directories(NOVA_TEST_OUTPUT);
  auto path = std::filesystem::path(NOVA_TEST_OUTPUT) / (name + ".png");
  return widget.grab().save(QString::fromStdString(path.string()));
}

}  // namespace nova::test
