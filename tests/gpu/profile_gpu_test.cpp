// Profiling on the GPU: the seed demo's kernels are attributed to its convolution, minimum, add and
// mul nodes; the traced GPU time agrees with CUDA-event time of the same iterations within 10%; the
// shared examples trace without dropped records. With NOVA_RECORD_FIXTURES=DIR the traces (and the
// node lists as model graphs) are copied there, to be committed as tests/fixtures/traces/.
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "core/trace/hot_op_ranking.h"
#include "core/trace/profile_runner.h"
#include "support/test_paths.h"

namespace nova {
namespace {

namespace fs = std::filesystem;

bool have_gpu(std::string* why) { return ProfileRunner::gpu_available(why); }

fs::path seed_model() {
  auto shared = test::shared_examples_dir() / "conv2d_min_add_multiply.py";
  return fs::exists(shared) ? shared : test::repo_examples_dir() / "conv2d_min_add_multiply.py";
}

ProfileResult profile(const fs::path& model, int iters, const std::string& name, bool nvtx = false,
                      bool cuda_graph = false, const std::string& attribution = "sequence") {
  ProfileOptions o;
  o.attribution = attribution;
  o.model = model.string();
  o.iters = iters;
  o.warmup = 5;
  o.nvtx = nvtx;
  o.use_cuda_graph = cuda_graph;
  o.trace_file = test::scratch_dir("profile_gpu_" + name) / (model.stem().string() + ".novatrace");
  return ProfileRunner(o).run();
}

void record_fixture(const ProfileResult& r, const std::string& stem) {
  const char* dir = std::getenv("NOVA_RECORD_FIXTURES");
  if (!dir || !*dir) return;
  fs::create_directories(dir);
  fs::copy_file(r.trace_file, fs::path(dir) / (stem + ".novatrace"), fs::copy_options::overwrite_existing);
  std::ofstream(fs::path(dir) / (stem + ".graph.json")) << nlohmann::json(r.graph).dump(1);
}

TEST(ProfileGpu, SeedDemoKernelsBelongToConvolutionMinimumAddAndMul) {
  std::string why;
  if (!have_gpu(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  ProfileResult r = profile(seed_model(), 20, "seed");
  std::cout << HotOpRanking::to_text(HotOpRanking::rank(r.attribution, HotOpRanking::By::Node));
  for (const auto& w : r.trace->warnings) ADD_FAILURE() << w;
  EXPECT_GT(r.trace->kernel_count(), 0u);
  EXPECT_EQ(r.trace->stats.dropped_records, 0u);
  EXPECT_EQ(r.attribution.iterations, 20);
  EXPECT_GT(r.attribution.attributed_fraction, 0.95);
  std::set<std::string> ops;
  for (const auto& n : r.attribution.nodes) ops.insert(n.name);
  for (const char* want : {"conv", "min", "add", "mul"}) {
    bool found = false;
    for (const auto& o : ops) found = found || o.find(want) != std::string::npos;
    EXPECT_TRUE(found) << want;
  }
  for (const auto& n : r.attribution.nodes) EXPECT_EQ(n.calls, 20) << n.name;
  ASSERT_FALSE(r.trace->devices.empty());
  EXPECT_GT(r.trace->devices[0].sm_count, 0);
  record_fixture(r, "conv2d_min_add_multiply");
}

TEST(ProfileGpu, TracedGpuTimeMatchesCudaEventTimeWithinTenPercent) {
  std::string why;
  if (!have_gpu(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  ProfileResult r = profile(seed_model(), 50, "event_time");
  ASSERT_GT(r.event_ns, 0);
  double ratio = r.traced_span_ns / r.event_ns;
  std::cout << "event " << r.event_ns / 1e3 << " us, traced span " << r.traced_span_ns / 1e3 << " us, busy "
            << r.traced_busy_ns / 1e3 << " us\n";
  RecordProperty("event_us", std::to_string(r.event_ns / 1e3));
  RecordProperty("traced_span_us", std::to_string(r.traced_span_ns / 1e3));
  EXPECT_NEAR(ratio, 1.0, 0.10);
  EXPECT_LE(r.traced_busy_ns, r.traced_span_ns * 1.001);
}

TEST(ProfileGpu, NvtxRangesPerNodeKeepAttributionAndReportWhetherMarkersArrive) {
  std::string why;
  if (!have_gpu(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  ProfileResult r = profile(seed_model(), 10, "nvtx", true);
  EXPECT_GT(r.attribution.attributed_fraction, 0.95);
  std::cout << "NVTX marker records that arrived: " << r.trace->stats.markers_seen
            << " (ranges paired: " << r.trace->markers.size() << ")\n";
  RecordProperty("nvtx_markers", std::to_string(r.trace->stats.markers_seen));
  if (r.trace->stats.markers_seen > 0) EXPECT_GE(r.trace->markers.size(), 10u * 4u);
}

TEST(ProfileGpu, CudaGraphReplayIsTraced) {
  std::string why;
  if (!have_gpu(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  ProfileResult r = profile(seed_model(), 10, "cuda_graph", false, true);
  ASSERT_GT(r.trace->kernel_count(), 0u);
  std::size_t in_graph = 0;
  for (const auto& a : r.trace->activities) in_graph += a.kind == ActivityKind::Kernel && a.graph_id != 0;
  EXPECT_EQ(in_graph, r.trace->kernel_count());
}

// The default route runs the model itself and matches its launches to one calibrated call of the
// instrumented export; it must give every node the kernels the marker route gives it.
TEST(ProfileGpu, SequenceAttributionAgreesWithNodeMarkersOnTheTransformer) {
  std::string why;
  if (!have_gpu(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  fs::path model = test::shared_examples_dir() / "tiny_transformer_block.py";
  if (!fs::exists(model)) model = test::repo_examples_dir() / "tiny_transformer_block.py";
  ProfileResult seq = profile(model, 10, "sequence", false, false, "sequence");
  ProfileResult markers = profile(model, 10, "markers", false, false, "callback");
  EXPECT_EQ(seq.worker.value("attribution_route", ""), "sequence");
  EXPECT_EQ(markers.worker.value("attribution_route", ""), "markers");
  EXPECT_EQ(seq.trace->stats.attribution_mode, 3u);
  const auto& stats = seq.worker.at("sequence");
  std::cout << "sequence: " << stats.dump() << "\n";
  EXPECT_GT(stats.value("length", 0), 0);
  EXPECT_EQ(stats.value("unmatched", -1), 0);
  EXPECT_GT(seq.attribution.attributed_fraction, 0.99);
  std::map<int, std::pair<int, int>> kernels;  // node -> (sequence, markers)
  for (const auto& n : seq.attribution.nodes) kernels[n.id].first = n.kernels;
  for (const auto& n : markers.attribution.nodes) kernels[n.id].second = n.kernels;
  ASSERT_FALSE(kernels.empty());
  for (const auto& [id, k] : kernels) EXPECT_EQ(k.first, k.second) << "node " << id;
}

TEST(ProfileGpu, SharedExamplesTraceWithoutDroppedRecords) {
  std::string why;
  if (!have_gpu(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  auto dir = test::shared_examples_dir();
  if (!fs::exists(dir)) GTEST_SKIP() << "no shared examples at " << dir;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".py") continue;
    SCOPED_TRACE(e.path().filename().string());
    ProfileResult r = profile(e.path(), 10, "shared");
    EXPECT_EQ(r.trace->stats.dropped_records, 0u);
    EXPECT_GT(r.trace->kernel_count(), 0u);
    EXPECT_GT(r.attribution.attributed_fraction, 0.9);
    record_fixture(r, e.path().stem().string());
  }
}

}  // namespace
}  // namespace nova
