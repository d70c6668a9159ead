// nova_timeline_bench [--events N] [--json FILE]: builds a trace of N kernel events (default one
// million; transformer-like: 26 graph nodes, 2-40 us kernels), then measures what a user waits for:
// opening it (read + attribute + timeline model + first paint), repainting at zooms from the whole
// trace down to microseconds (p95 over random positions, offscreen), and the peak resident memory.
// Prints each figure against its target and exits 1 if any misses.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include <QApplication>
#include <QTest>

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "core/trace/attribution.h"
#include "core/trace/injection/trace_file_writer.h"
#include "core/trace/timeline_model.h"
#include "core/trace/trace_reader.h"
#include "ui/trace/timeline_view.h"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double current_rss_mb() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1048576.0);
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

constexpr int kNodes = 26;

void write_trace(const std::filesystem::path& path, long events) {
  using namespace nova::tracefmt;
  TraceFileWriter w;
  w.open(path.string(), static_cast<std::uint32_t>(getpid()), 130000, 0);
  DeviceRecord d{};
  d.name = w.intern("NVIDIA H200 (synthetic)");
  d.sm_count = 132;
  w.write(RecordType::Device, d);
  std::vector<std::uint32_t> names;
  for (int i = 0; i < 40; ++i) names.push_back(w.intern(fmt::format("_Z14kernel_variantILi{}EEvPfS0_i", i)));
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> dur(2000, 40000), gap(500, 5000), per_node(1, 3);
  std::uint64_t t = 1'000'000;
  std::uint32_t corr = 1;
  long made = 0;
  for (std::uint64_t iter = 0; made < events; ++iter) {
    w.write(RecordType::Iteration, IterationRecord{t, iter});
    for (int node = 0; node < kNodes && made < events; ++node) {
      for (int k = per_node(rng); k > 0 && made < events; --k, ++made) {
        KernelRecord r{};
        r.start = t;
        r.end = t + static_cast<std::uint64_t>(dur(rng));
        r.name = names[(node * 3 + k) % names.size()];
        r.stream = 7;
        r.correlation = corr;
        r.grid[0] = 1024, r.grid[1] = r.grid[2] = 1;
        r.block[0] = 256, r.block[1] = r.block[2] = 1;
        w.write(RecordType::Kernel, r);
        w.write(RecordType::ExternalCorrelation,
                ExternalCorrelationRecord{static_cast<std::uint64_t>(node), corr, 3});
        ++corr;
        t = r.end + static_cast<std::uint64_t>(gap(rng));
      }
    }
  }
  StatsRecord s{};
  s.enabled_kinds = 1ull << 10;
  s.flags = 3;
  s.records_written = w.records_written();
  w.write(RecordType::Stats, s);
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<std::size_t>(p * (v.size() - 1) + 0.5))];
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  long events = 1'000'000;
  std::string json_out;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--events") events = std::stol(argv[i + 1]);
    if (a == "--json") json_out = argv[i + 1];
  }
  auto path =
      std::filesystem::temp_directory_path() / fmt::format("nova_timeline_bench_{}.novatrace", getpid());
  write_trace(path, events);
  QApplication app(argc, argv);
  double rss_before = peak_rss_mb(), rss_start = current_rss_mb();

  // Open: what the studio does when a profile finishes.
  auto t0 = Clock::now();
  auto trace = std::make_shared<nova::Trace>(nova::TraceReader::read(path));
  double rss_trace = current_rss_mb(), peak_trace = peak_rss_mb();
  double read_s = seconds_since(t0);
  nova::ModelGraph graph;
  for (int n = 0; n < kNodes; ++n) {
    nova::GraphNode node;
    node.id = n;
    node.op = fmt::format("op{}", n);
    graph.nodes.push_back(node);
  }
  auto attribution = nova::Attribution::compute(*trace, graph);
  double rss_attr = current_rss_mb(), peak_attr = peak_rss_mb();
  double attr_s = seconds_since(t0);
  auto model = std::make_shared<nova::TimelineModel>(trace, attribution, graph);
  double rss_model = current_rss_mb(), peak_model = peak_rss_mb();
  double model_s = seconds_since(t0);
  nova::ui::TimelineView view;
  view.resize(1600, 200);
  view.setModel(model);
  view.show();
  if (!QTest::qWaitForWindowExposed(&view)) {
    std::fprintf(stderr, "the timeline window was never exposed\n");
    return 2;
  }
  view.repaint();
  double open_s = seconds_since(t0);
  std::printf(
      "open stages (cumulative s): read %.3f, attribute %.3f, timeline model %.3f, first paint %.3f\n",
      read_s, attr_s, model_s, open_s);
  std::printf(
      "memory (current / peak MB): start %.1f / %.1f; trace read %.1f / %.1f; attributed %.1f / %.1f; "
      "timeline model %.1f / %.1f\n",
      rss_start, rss_before, rss_trace, peak_trace, rss_attr, peak_attr, rss_model, peak_model);
  std::filesystem::remove(path);

  // Repaints at several zooms, random positions; a hover-style repaint of an unchanged range too.
  nlohmann::json zooms = nlohmann::json::array();
  std::vector<double> all;
  std::mt19937 rng(2);
  const double begin = static_cast<double>(model->begin_ns()),
               span = static_cast<double>(model->end_ns()) - begin;
  bool lod_ok = true, painted = false;
  for (double zoom : {1.0, 0.1, 0.01, 1e-3, 1e-4, 1e-5, 1e-6}) {
    std::vector<double> ms;
    std::uniform_real_distribution<double> at(0, 1 - zoom);
    for (int k = 0; k < 40; ++k) {
      double a = begin + at(rng) * span;
      view.setRange(a, a + span * zoom);
      auto t = Clock::now();
      view.repaint();
      ms.push_back(seconds_since(t) * 1e3);
      for (int n : view.lastPaintedItems()) lod_ok = lod_ok && n <= view.plotWidth();
      painted = painted || !view.lastPaintedItems().empty();
    }
    all.insert(all.end(), ms.begin(), ms.end());
    zooms.push_back(
        {{"visible_ns", span * zoom}, {"p50_ms", percentile(ms, 0.5)}, {"p95_ms", percentile(ms, 0.95)}});
    std::printf("zoom %-8g visible %12.0f ns   repaint p50 %6.2f ms  p95 %6.2f ms\n", zoom, span * zoom,
                percentile(ms, 0.5), percentile(ms, 0.95));
  }
  std::vector<double> hover;
  for (int k = 0; k < 40; ++k) {
    auto t = Clock::now();
    view.repaint();
    hover.push_back(seconds_since(t) * 1e3);
  }
  double p95 = percentile(all, 0.95);
  double rss = peak_rss_mb();
  if (!painted) {
    std::fprintf(stderr, "nothing was painted: the figures would be meaningless\n");
    return 2;
  }
  bool ok = open_s <= 1.5 && p95 <= 16 && rss <= 250 && lod_ok;
  std::printf("events %ld (timeline items %zu)\n", events, model->item_count());
  std::printf("open (read + attribute + model + first paint): %.3f s   [target <= 1.5 s] %s\n", open_s,
              open_s <= 1.5 ? "ok" : "MISSED");
  std::printf("repaint p95 over all zooms: %.2f ms   [target <= 16 ms] %s\n", p95,
              p95 <= 16 ? "ok" : "MISSED");
  std::printf("repaint of an unchanged range (hover) p95: %.2f ms\n", percentile(hover, 0.95));
  std::printf("peak RSS: %.1f MB (%.1f MB before opening)   [target <= 250 MB] %s\n", rss, rss_before,
              rss <= 250 ? "ok" : "MISSED");
  std::printf("at most one item per pixel: %s\n", lod_ok ? "yes" : "NO");
  if (!json_out.empty())
    std::ofstream(json_out) << nlohmann::json{
        {"events", events},
        {"open_s", open_s},
        {"repaint_p95_ms", p95},
        {"hover_p95_ms", percentile(hover, 0.95)},
        {"peak_rss_mb", rss},
        {"zooms", zooms},
        {"one_item_per_pixel",
         lod_ok}}.dump(2);
  return ok ? 0 : 1;
}
