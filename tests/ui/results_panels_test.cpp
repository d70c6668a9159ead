// The results and jobs panels on the offscreen platform, with screenshots to look at. The inputs
// are widget-test data (seeded random samples), not measurements.
#include <fstream>
#include <random>
#include <thread>

#include <QApplication>
#include <QPushButton>
#include <QTableView>
#include <QBarCategoryAxis>
#include <QLegend>
#include <QLegendMarker>
#include <QFontMetrics>
#include <QTest>

#include <gtest/gtest.h>

#include "support/test_paths.h"
#include "ui/jobs/job_list_model.h"
#include "ui/jobs/jobs_panel.h"
#include "ui/results/benchmark_chart.h"
#include "ui/results/correctness_table.h"
#include "ui/results/results_panel.h"
#include "ui/results/roofline_chart.h"

namespace nova::ui {
namespace {
using namespace std::chrono_literals;

void save(QWidget& w, const char* name) {
  QPixmap shot = w.grab();
  ASSERT_FALSE(shot.isNull());
  auto path = nova::test::test_output_dir() / name;
  std::filesystem::create_directories(path.parent_path());
  EXPECT_TRUE(shot.save(QString::fromStdString(path.string())));
}

BenchmarkResult widget_test_benchmark(double candidate_us = 12.0) {
  std::mt19937 rng(7);
  nlohmann::json measurements = nlohmann::json::array();
  const std::pair<const char*, double> variants[] = {
      {"eager", 44.0}, {"compile", 30.0}, {"candidate", candidate_us}};
  for (const char* mode : {"cold", "warm", "graph", "wall"})
    for (auto [variant, base] : variants) {
      std::lognormal_distribution<double> jitter(0.0, 0.05);
      double scale = std::string(mode) == "wall" ? 1.6 : std::string(mode) == "warm" ? 0.85 : 1.0;
      std::vector<double> s;
      for (int i = 0; i < 100; ++i) s.push_back(base * scale * jitter(rng));
      measurements.push_back({{"variant", variant}, {"mode", mode}, {"samples", s}});
    }
  return nlohmann::json{
      {"candidate", "epilogue"},
      {"path", "fast"},
      {"measurements", measurements},
      {"environment", {{"gpu", "test GPU"}, {"driver", "0"}, {"cuda", "13.0"}, {"torch", "2.11"}}},
      {"method", {{"calls", 100}}}}
      .get<BenchmarkResult>();
}

ValidationResult widget_test_validation() {
  ValidationResult v;
  v.candidate = "epilogue";
  v.path = "fast";
  v.passed = false;
  v.verdict = "failed: output 0: max abs error 0.0156 exceeds tolerance 0.0001";
  for (int i = 0; i < 3; ++i) {
    TrialSummary t;
    t.seed = 1234 + i;
    t.ok = i != 2;
    t.max_abs_vs_eager = i == 2 ? 0.0156 : 3e-6;
    t.max_rel_vs_eager = i == 2 ? 2e-3 : 1e-6;
    t.max_abs_vs_fp64 = i == 2 ? 0.0156 : 1.6e-5;
    t.eager_max_abs_vs_fp64 = 1.5e-5;
    if (!t.ok) t.problems.push_back("output 0: max abs error 0.0156 exceeds tolerance 0.0001");
    v.trials.push_back(t);
  }
  v.checks = {{"static: kernel launched", true, "min_add_mul"},
              {"second_shape", true, "specialised to shape [128, 3, 32, 32]"}};
  v.flags = {"library-backed: calls aten.conv2d.default through PyTorch",
             "specialised to shape [128, 3, 32, 32]"};
  return v;
}

TEST(ResultsPanel, ShowsTrialsChecksAChartAndSpeedupsInWords) {
  ResultsPanel p;
  p.resize(1000, 760);
  p.setValidation(widget_test_validation());
  BenchmarkResult b = widget_test_benchmark();
  p.setBenchmark(b);
  p.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&p));
  EXPECT_EQ(p.table()->rowCount(), 3 + 2);
  EXPECT_EQ(p.table()->item(2, 1)->text(), "FAILED");
  EXPECT_EQ(p.table()->item(0, 2)->text(), "3e-06");
  EXPECT_EQ(p.chart()->boxCount(), 12);
  EXPECT_TRUE(p.verdictText().contains("exceeds tolerance"));
  // Speedups are ratios of the medians of this one run.
  const Speedup& s = b.speedups.front();
  double expected = b.find(s.baseline, s.mode)->summary.median / b.find("candidate", s.mode)->summary.median;
  EXPECT_NEAR(s.value, expected, 1e-12);
  EXPECT_TRUE(p.speedupText().contains(
      QString("%1x faster than PyTorch eager (GPU time, L2 flushed)").arg(expected, 0, 'f', 2)))
      << p.speedupText().toStdString();
  EXPECT_TRUE(p.benchmarkVerdictText().startsWith("Benchmark: ships: faster than eager beyond the noise (cold "))
      << p.benchmarkVerdictText().toStdString();
  save(p, "results_panel.png");
}

TEST(ResultsPanel, ShowsTheCopyOfTheSameBytesAsTheMemoryFloor) {
  // Device run N: layernorm_gelu's kernel with the copy reference timed alongside (cold and wall).
  std::ifstream f(test::fixtures_dir() / "bench" / "layernorm_gelu_g0.copy_reference.h200.json");
  BenchmarkResult b = nlohmann::json::parse(f).get<BenchmarkResult>();
  ResultsPanel p;
  p.resize(1000, 760);
  p.setBenchmark(b);
  p.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&p));
  EXPECT_EQ(p.chart()->boxCount(), 2 * 4);  // cold and wall; eager, torch.compile, candidate, copy
  EXPECT_TRUE(p.speedupText().contains(
      "At 98% of the speed of a copy of the same 134.2 MB (36.77 us, 3.65 TB/s; GPU time, L2 flushed)"))
      << p.speedupText().toStdString();
  EXPECT_FALSE(p.speedupText().contains("than copy")) << p.speedupText().toStdString();
  // Recorded before the clean flush existed: its cold calls inherited the flush's dirty lines.
  EXPECT_TRUE(
      p.methodText().contains("L2 flush: before each cold call 268.4 MB were written, leaving the L2 "
                              "full of dirty lines"))
      << p.methodText().toStdString();
  save(p, "results_panel_copy.png");
}

TEST(RooflineChart, PlacesTheVersionAndBaselinesUnderTheCopysMemoryRoof) {
  std::ifstream f(test::fixtures_dir() / "bench" / "layernorm_gelu_g0.copy_reference.h200.json");
  ASSERT_TRUE(f) << "missing fixture layernorm_gelu_g0.copy_reference.h200.json";
  BenchmarkResult b = nlohmann::json::parse(f).get<BenchmarkResult>();
  const double flops = 4.0e8;
  auto bandwidth = RooflineChart::bandwidthOf(b);
  ASSERT_TRUE(bandwidth);
  EXPECT_NEAR(*bandwidth / 1e12, 3.65, 0.01);  // 134.2 MB in 36.77 us, as the speedup text says
  auto dots = RooflineChart::dotsOf(b, flops, 1.0, "v7", true, true);
  ASSERT_EQ(dots.size(), 3u);
  EXPECT_EQ(dots[0].label, "v7");
  EXPECT_TRUE(dots[0].shown);
  EXPECT_TRUE(dots[1].baseline && dots[2].baseline);
  for (const auto& d : dots) {
    EXPECT_NEAR(d.intensity, flops / 134.2e6, 0.01);  // the copy's bytes, not the 1.0 given
    // Nothing beats the measured memory roof at its intensity by more than the noise.
    EXPECT_LT(d.flops_per_s, *bandwidth * d.intensity * 1.1) << d.label.toStdString();
  }
  RooflineChart chart;
  chart.resize(600, 420);
  chart.setDots(dots, bandwidth, "not measured");
  EXPECT_EQ(chart.dotCount(), 3);
  EXPECT_EQ(chart.title(), "Roofline (cold) · dashed roof 3.65 TB/s (copy)");
  chart.clear("Roofline: not measured (no benchmark yet)");
  EXPECT_EQ(chart.dotCount(), 0);
  EXPECT_EQ(chart.title(), "Roofline: not measured (no benchmark yet)");
}

// Every label of both charts fits at the size the studio gives them (about 450 and 330 px wide beside each
// other; the GPU box's screenshots showed "GPU ti…", "copy of the …", "PyTorc…", "memo…" cut short): each
// category label within its share of the plot, and the legend's entries, with their markers, within the
// legend's width.
TEST(ResultsPanel, TheChartsLabelsFitTheWidthTheStudioGivesThem) {
  std::ifstream f(test::fixtures_dir() / "bench" / "layernorm_gelu_g0.copy_reference.h200.json");
  ASSERT_TRUE(f) << "missing fixture layernorm_gelu_g0.copy_reference.h200.json";
  const BenchmarkResult b = nlohmann::json::parse(f).get<BenchmarkResult>();
  auto legend_fits = [](QChart* chart) {
    const QFontMetrics fm(chart->legend()->font());
    double needed = 0;
    for (auto* marker : chart->legend()->markers())
      if (marker->isVisible()) needed += fm.horizontalAdvance(marker->label()) + 2 * fm.height() + 8;
    return std::make_pair(needed, chart->legend()->geometry().width());
  };
  BenchmarkChart bench;
  bench.resize(450, 280);
  bench.setResult(b);
  bench.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&bench));
  auto* categories = qobject_cast<QBarCategoryAxis*>(bench.chart()->axes(Qt::Horizontal).value(0));
  ASSERT_TRUE(categories);
  const QFontMetrics axis_fm(categories->labelsFont());
  for (const QString& c : categories->categories())
    EXPECT_LE(axis_fm.horizontalAdvance(c), bench.chart()->plotArea().width() / categories->count()) << c.toStdString();
  auto [bench_needed, bench_width] = legend_fits(bench.chart());
  EXPECT_LE(bench_needed, bench_width);
  EXPECT_TRUE(bench.toolTip().contains("cold: GPU time with the L2 flushed before each call"));
  save(bench, "benchmark_chart_450.png");

  RooflineChart roof;
  roof.resize(330, 280);
  roof.setDots(RooflineChart::dotsOf(b, 4.0e8, 1.0, "v7", true, true), RooflineChart::bandwidthOf(b), "none");
  roof.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&roof));
  auto [roof_needed, roof_width] = legend_fits(roof.chart());
  EXPECT_LE(roof_needed, roof_width);
  // The title and the axis titles within the plot's width (the chart's margins are not theirs).
  const double plot_width = roof.chart()->plotArea().width() + 60;  // the y axis' labels sit left of the plot
  EXPECT_LE(QFontMetrics(roof.chart()->titleFont()).horizontalAdvance(roof.title()), plot_width);
  for (auto* axis : roof.chart()->axes())
    EXPECT_LE(QFontMetrics(axis->titleFont()).horizontalAdvance(axis->titleText()), plot_width)
        << axis->titleText().toStdString();
  save(roof, "roofline_chart_330.png");
}

TEST(ResultsPanel, SaysTheColdModeLeftNoDirtyLineToWriteBack) {
  // Device run Q: the same kernel with the default, clean flush.
  std::ifstream f(test::fixtures_dir() / "bench" / "layernorm_gelu_g0.flush_clean.h200.json");
  ResultsPanel p;
  p.setBenchmark(nlohmann::json::parse(f).get<BenchmarkResult>());
  EXPECT_TRUE(
      p.methodText().contains("then 125.8 MB of another buffer read, so no line of the call's data was "
                              "cached and no dirty line was left for it to write back."))
      << p.methodText().toStdString();
  EXPECT_TRUE(p.methodText().startsWith("Measured on NVIDIA H200")) << p.methodText().toStdString();
}

TEST(ResultsPanel, SaysSoWhenTheBenchmarkDeclinesTheCandidate) {
  ResultsPanel p;
  p.setBenchmark(widget_test_benchmark(47.0));  // slower than eager's 44 in every mode
  EXPECT_TRUE(p.benchmarkVerdictText().startsWith("Benchmark: declined: slower than eager (cold 0.9"))
      << p.benchmarkVerdictText().toStdString();
  EXPECT_TRUE(p.benchmarkVerdictText().endsWith("; eager is kept for this group"));
}

TEST(JobsPanel, ListsJobsWithProgressAndCancelsTheSelectedOne) {
  JobsPanel panel;
  JobQueue q({1, 1, {}});  // goes first: its last events are posted to a panel that still exists
  panel.setQueue(&q);
  // As the studio session relays its queue's listener: to the panel, on the GUI thread.
  q.set_listener([&panel](const JobInfo& info) {
    QMetaObject::invokeMethod(&panel, [&panel, info] { panel.apply(info); }, Qt::QueuedConnection);
  });
  panel.resize(900, 420);
  panel.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&panel));
  auto slow = [](std::string title, JobLane lane, int steps) {
    JobSpec s;
    s.key = title;
    s.title = title;
    s.lane = lane;
    s.work = [steps](JobContext& ctx) {
      for (int i = 0; i < steps; ++i) {
        ctx.token().throw_if_cancelled();
        std::this_thread::sleep_for(10ms);
        ctx.progress("step " + std::to_string(i + 1) + " of " + std::to_string(steps), double(i + 1) / steps);
        ctx.log("step " + std::to_string(i + 1));
      }
      return nlohmann::json::object();
    };
    return s;
  };
  int done = q.submit(slow("compile candidate 2 (NVRTC)", JobLane::Cpu, 3));
  q.wait(done, 5s);
  int running = q.submit(slow("validate candidate 3", JobLane::Gpu, 3000));
  int queued = q.submit(slow("benchmark candidate 3", JobLane::Gpu, 5));
  JobSpec failing;
  failing.title = "validate candidate 4";
  failing.lane = JobLane::Cpu;
  failing.work = [](JobContext&) -> nlohmann::json {
    throw std::runtime_error("worker crashed: SIGSEGV while validating candidate 4");
  };
  int failed = q.submit(std::move(failing));
  q.wait(failed, 5s);
  QTest::qWait(600);
  JobListModel* m = panel.model();
  ASSERT_EQ(m->rowCount(), 4);
  EXPECT_EQ(m->job(m->rowOf(done))->state, JobState::Succeeded);
  EXPECT_EQ(m->job(m->rowOf(running))->state, JobState::Running);
  EXPECT_GT(m->job(m->rowOf(running))->progress, 0.0);
  EXPECT_EQ(m->job(m->rowOf(queued))->state, JobState::Queued);
  EXPECT_EQ(m->job(m->rowOf(failed))->state, JobState::Failed);
  EXPECT_EQ(m->data(m->index(m->rowOf(failed), JobListModel::Message), Qt::DisplayRole).toString(),
            "worker crashed: SIGSEGV while validating candidate 4");
  panel.selectJob(running);
  QTest::qWait(100);
  save(panel, "jobs_panel.png");
  ASSERT_TRUE(panel.cancelButton()->isEnabled());
  QTest::mouseClick(panel.cancelButton(), Qt::LeftButton);
  EXPECT_EQ(q.wait(running, 5s)->state, JobState::Cancelled);
  EXPECT_EQ(q.wait(queued, 5s)->state, JobState::Succeeded);
  QTest::qWait(400);
  EXPECT_EQ(m->job(m->rowOf(running))->state, JobState::Cancelled);
  // Following another queue (another model's session) starts an empty list.
  JobQueue other(JobQueue::Options{});
  panel.setQueue(&other);
  EXPECT_EQ(m->rowCount(), 0);
  EXPECT_FALSE(panel.cancelButton()->isEnabled());
}

}  // namespace
}  // namespace nova::ui
