#include "core/trace/gpu_iterations.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "core/trace/trace_reader.h"
#include "support/test_paths.h"

namespace nova {
namespace {

// Recorded on the H100 in session 24 (`nova profile` of mlp_block, 20 iterations of 7 kernels, one stream).
Trace mlp_block_h100() {
  return TraceReader::read(test::fixtures_dir() / "traces" / "h100_session24" / "mlp_block.novatrace");
}

std::vector<std::uint64_t> kernel_starts(const Trace& t) {
  std::vector<std::uint64_t> s;
  for (const auto& a : t.activities)
    if (a.kind == ActivityKind::Kernel) s.push_back(a.start);
  std::sort(s.begin(), s.end());
  return s;
}

TEST(GpuIterations, EachIterationStartsAtItsFirstKernelNotAtItsHostMark) {
  Trace t = mlp_block_h100();
  ASSERT_EQ(t.iterations.size(), 20u);
  auto kernels = kernel_starts(t);
  ASSERT_EQ(kernels.size(), 140u);
  auto starts = GpuIterations::starts(t);
  ASSERT_EQ(starts.size(), 20u);
  for (std::size_t k = 0; k < starts.size(); ++k) {
    EXPECT_EQ(starts[k].second, t.iterations[k].second);
    EXPECT_EQ(starts[k].first, kernels[7 * k]) << "iteration " << k;  // its first of 7 kernels
    EXPECT_GE(starts[k].first, t.iterations[k].first);                // the GPU runs behind the host
  }
  // What the studio drew before: every host mark inside the first few iterations' kernels.
  EXPECT_LT(t.iterations.back().first, kernels[7 * 5]);
  EXPECT_GT(starts.back().first, kernels[7 * 19] - 1);
}

// nova profile records no launch calls: the iterations are found as equal runs of launches.
TEST(GpuIterations, TheRecordedTraceHasNoLaunchCallsAndSplitsByLaunchOrder) {
  Trace t = mlp_block_h100();
  EXPECT_TRUE(t.api_calls.empty());
  // An extra launch breaks the equal runs: no projection rather than a wrong one.
  t.activities.push_back(t.activities.back());
  t.activities.back().correlation += 1000;
  t.activities.back().start += 1000;
  EXPECT_TRUE(GpuIterations::starts(t).empty());
}

TEST(GpuIterations, RunsWhoseNodesDifferAreNotIterations) {
  Trace t = mlp_block_h100();
  ASSERT_FALSE(t.node_of_correlation.empty()) << "the fixture names the node of each launch";
  std::sort(t.activities.begin(), t.activities.end(),
            [](const GpuActivity& a, const GpuActivity& b) { return a.correlation < b.correlation; });
  // Iteration 1 launches its first two nodes the other way round.
  auto entry = [&](std::uint32_t correlation) {
    return std::find_if(t.node_of_correlation.begin(), t.node_of_correlation.end(),
                        [&](const auto& e) { return e.first == correlation; });
  };
  auto a = entry(t.activities[7].correlation), b = entry(t.activities[8].correlation);
  ASSERT_TRUE(a != t.node_of_correlation.end() && b != t.node_of_correlation.end());
  ASSERT_NE(a->second, b->second);
  std::swap(a->second, b->second);
  auto starts = GpuIterations::starts(t);
  EXPECT_TRUE(starts.empty());
}

// With launch calls (API records): the first activity launched after each host mark.
TEST(GpuIterations, WithLaunchCallsEachIterationStartsAtTheFirstActivityLaunchedAfterItsMark) {
  Trace t = mlp_block_h100();
  std::sort(t.activities.begin(), t.activities.end(),
            [](const GpuActivity& a, const GpuActivity& b) { return a.correlation < b.correlation; });
  // A launch call 1 us after each of the 7 kernels' iteration mark, then evenly spaced.
  for (std::size_t i = 0; i < t.activities.size(); ++i) {
    HostSpan call;
    call.start = t.iterations[i / 7].first + 1000 + 100 * (i % 7);
    call.end = call.start + 50;
    call.correlation = t.activities[i].correlation;
    t.api_calls.push_back(call);
  }
  auto kernels = kernel_starts(t);
  auto starts = GpuIterations::starts(t);
  ASSERT_EQ(starts.size(), 20u);
  for (std::size_t k = 0; k < starts.size(); ++k) EXPECT_EQ(starts[k].first, kernels[7 * k]) << k;
  // A mark after every launch: that iteration launched nothing, and has no start.
  t.iterations.emplace_back(t.api_calls.back().end + 1000, 20);
  starts = GpuIterations::starts(t);
  ASSERT_EQ(starts.size(), 20u);
  EXPECT_EQ(starts.back().second, 19u);
}

}  // namespace
}  // namespace nova

namespace nova {
namespace {

// Every recorded `nova profile` trace of the shared examples finds all its iterations on the GPU, in order.
TEST(GpuIterations, EveryRecordedProfileFindsAllItsIterations) {
  int traces = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(test::fixtures_dir() / "traces")) {
    if (entry.path().extension() != ".novatrace") continue;
    Trace t = TraceReader::read(entry.path());
    if (t.iterations.empty()) continue;
    ++traces;
    auto starts = GpuIterations::starts(t);
    ASSERT_EQ(starts.size(), t.iterations.size()) << entry.path();
    for (std::size_t k = 1; k < starts.size(); ++k) EXPECT_GT(starts[k].first, starts[k - 1].first) << entry.path();
  }
  EXPECT_GE(traces, 2);
}

}  // namespace
}  // namespace nova
