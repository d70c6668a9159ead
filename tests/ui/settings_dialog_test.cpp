// The settings dialog on the offscreen platform: it shows the settings it was given, and what the
// user changes comes back in settings(), the benchmark choices included.
#include "ui/shell/settings_dialog.h"

#include <filesystem>

#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QSpinBox>
#include <QTest>

#include <gtest/gtest.h>
#include "support/test_paths.h"

namespace nova::ui {
namespace {

TEST(SettingsDialog, ShowsAndReturnsTheBenchmarkChoices) {
  Settings given;
  given.bench_copy_reference = false;
  given.bench_l2_flush = "dirty";
  SettingsDialog d(given);
  auto* copy = d.findChild<QCheckBox*>("copyReference");
  auto* flush = d.findChild<QComboBox*>("l2Flush");
  ASSERT_NE(copy, nullptr);
  ASSERT_NE(flush, nullptr);
  EXPECT_FALSE(copy->isChecked());
  EXPECT_EQ(flush->currentData().toString(), "dirty");
  EXPECT_FALSE(d.settings().bench_copy_reference);
  EXPECT_EQ(d.settings().bench_l2_flush, "dirty");

  copy->setChecked(true);
  flush->setCurrentIndex(flush->findData("clean"));
  EXPECT_TRUE(d.settings().bench_copy_reference);
  EXPECT_EQ(d.settings().bench_l2_flush, "clean");
  EXPECT_TRUE(flush->currentText().startsWith("Clean: 256 MB written, then 2x L2 read"));

  // GPU lanes and the Ray cluster: shown as given, and what the user types comes back trimmed.
  auto* lanes = d.findChild<QSpinBox*>("gpuLanes");
  auto* ray = d.findChild<QLineEdit*>("rayAddress");
  auto* kind = d.findChild<QLineEdit*>("rayGpuKind");
  ASSERT_TRUE(lanes && ray && kind);
  EXPECT_EQ(lanes->value(), 1);
  EXPECT_TRUE(ray->text().isEmpty());
  EXPECT_EQ(lanes->minimum(), 1);  // no zero lanes
  lanes->setValue(2);
  ray->setText("  10.0.0.5:6379 ");
  kind->setText("H100");
  EXPECT_EQ(d.settings().gpu_lanes, 2);
  EXPECT_EQ(d.settings().ray_address, "10.0.0.5:6379");
  EXPECT_EQ(d.settings().ray_gpu_kind, "H100");

  d.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&d));
  QPixmap shot = d.grab();
  ASSERT_FALSE(shot.isNull());
  EXPECT_TRUE(shot.save(
      QString::fromStdString((nova::test::test_output_dir() / "settings_dialog.png").string())));
}

}  // namespace
}  // namespace nova::ui
