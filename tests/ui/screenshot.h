#pragma once
// Saves a widget's picture under the test output folder for a person to look at after the UI tests.
#include <QString>
#include <QWidget>

#include <filesystem>
#include "support/test_paths.h"

namespace nova::test {

inline bool save_screenshot(QWidget& widget, const std::string& name) {
  std::filesystem::create_directories(nova::test::test_output_dir());
  auto path = nova::test::test_output_dir() / (name + ".png");
  return widget.grab().save(QString::fromStdString(path.string()));
}

}  // namespace nova::test
