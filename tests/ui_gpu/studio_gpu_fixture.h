#pragma once
// What the studio's GPU tests (tests/ui_gpu) share: the StudioGpu fixture (a private settings file and
// projects folder, skipped without a CUDA device), a shared example to open, and pictures of the window
// in <test output>/studio-gpu/. Not in an anonymous namespace: gtest wants one fixture class for the
// suite across the files.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include <QSignalSpy>
#include <QTest>
#include <QWidget>

#include <gtest/gtest.h>

#include "core/env/resource_paths.h"
#include "core/trace/profile_runner.h"
#include "support/test_paths.h"
#include "ui/shell/main_window.h"
#include "ui/shell/placeholder_panel.h"

namespace nova::ui {

inline constexpr int kIntakeMs = 300'000;  // a cold worker imports torch and captures the graph

// A picture of WIDGET as the user sees it, in <test output>/studio-gpu/NAME.png.
inline void saveScreenshot(QWidget& widget, const std::string& name) {
  QTest::qWait(300);  // let the docks lay out and paint
  const std::filesystem::path dir = test::test_output_dir() / "studio-gpu";
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / (name + ".png");
  EXPECT_TRUE(widget.grab().save(QString::fromStdString(file.string()))) << file;
  std::cout << "screenshot " << file.string() << "\n";
}

// A private settings file and projects folder, so the run neither reads nor changes the user's and
// intake always runs (no stored graph); skipped without a CUDA device.
class StudioGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!ProfileRunner::gpu_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
    dir_ = test::scratch_dir("studio");
    setenv("NOVA_SETTINGS", (dir_ / "settings.json").c_str(), 1);
    setenv("NOVA_PROJECTS", (dir_ / "projects").c_str(), 1);
    std::cout << "worker python " << default_python() << ", tracer " << ProfileRunner::tracer_library().string()
              << ", resources " << resources_dir().string() << "\n";
  }
  // The shared example FILE becomes model_; a fatal failure when it is missing (wrap the call in
  // ASSERT_NO_FATAL_FAILURE).
  void useExample(const std::string& file) {
    model_ = test::shared_examples_dir() / file;
    if (!std::filesystem::exists(model_)) GTEST_FAIL() << "no shared example at " << model_ << " (set NOVA_SHARED)";
  }
  // Opens model_ in W and waits for its intake to succeed; a fatal failure otherwise (wrap the call in
  // ASSERT_NO_FATAL_FAILURE). A spy on candidatesReady made before the call sees the generator's job.
  void openModel(MainWindow& w) {
    QSignalSpy settled(&w, &MainWindow::modelSettled);
    ASSERT_TRUE(w.openModel(QString::fromStdString(model_.string())));
    ASSERT_TRUE(settled.count() > 0 || settled.wait(kIntakeMs)) << "intake did not end in " << kIntakeMs / 1000 << " s";
    ASSERT_TRUE(settled.first().at(1).toBool()) << "intake failed: " << w.panel("graph")->message().toStdString();
    ASSERT_NE(w.graph(), nullptr);
  }
  std::filesystem::path dir_, model_;
};

}  // namespace nova::ui
