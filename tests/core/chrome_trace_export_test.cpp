// The Chrome trace export, parsed back: one complete event per activity with its args, the op row,
// NVTX ranges, and process/thread names Perfetto shows.
#include "core/trace/chrome_trace_export.h"

#include <fstream>

#include <gtest/gtest.h>

#include "core/trace/trace_reader.h"
#include "support/synthetic_trace.h"
#include "support/test_paths.h"

namespace nova {
namespace {

TEST(ChromeTraceExport, WritesEventsPerfettoCanRead) {
  auto dir = test::scratch_dir("chrome_export");
  auto p = test::seed_profile(dir, 2);
  ChromeTraceExport::write(dir / "seed.json", *p.trace, p.attribution, p.graph);

  std::ifstream in(dir / "seed.json");
  auto j = nlohmann::json::parse(in);
  ASSERT_TRUE(j["traceEvents"].is_array());
  int kernels = 0, copies = 0, ops = 0, nvtx = 0, names = 0;
  for (const auto& e : j["traceEvents"]) {
    std::string ph = e["ph"];
    if (ph == "M") {
      ++names;
      continue;
    }
    std::string cat = e["cat"];
    if (cat == "kernel") {
      ++kernels;
      EXPECT_EQ(e["tid"], 7);
      EXPECT_TRUE(e["args"].contains("node"));
      EXPECT_EQ(e["args"]["grid"], nlohmann::json({512, 1, 1}));
      EXPECT_EQ(e["args"]["registers per thread"], 32);
    } else if (cat == "memcpy") {
      ++copies;
      EXPECT_EQ(e["args"]["bytes"], 4);
      EXPECT_FALSE(e["args"].contains("node"));
    } else if (cat == "op") {
      ++ops;
      EXPECT_EQ(e["tid"], ChromeTraceExport::kOpsThread);
    } else if (cat == "nvtx") {
      ++nvtx;
    }
  }
  EXPECT_EQ(kernels, 8);
  EXPECT_EQ(copies, 2);
  EXPECT_EQ(ops, 8);
  EXPECT_EQ(nvtx, 8);
  EXPECT_GE(names, 4);
  // The first event is the first copy at time 0; the convolution follows 3 us later for 17.7 us.
  const auto& first_kernel = *std::find_if(j["traceEvents"].begin(), j["traceEvents"].end(),
                                           [](const auto& e) { return e.value("cat", "") == "kernel"; });
  EXPECT_DOUBLE_EQ(first_kernel["ts"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(first_kernel["dur"].get<double>(), 17.7);
  EXPECT_NE(first_kernel["name"].get<std::string>().find("implicit_convolve_sgemm<float"), std::string::npos);
}

}  // namespace
}  // namespace nova
