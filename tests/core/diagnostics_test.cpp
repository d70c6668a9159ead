// Diagnostics parsed from real logs: NVRTC and nvcc on a broken kernel and g++ on a broken host
// file, recorded in tests/fixtures/diagnostics, and the same compilers run live here to check the
// recordings still match what today's toolkit prints.
#include "core/build/diagnostics.h"
#include "core/env/build_info.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/build/nvrtc_compiler.h"
#include "core/worker/child_process.h"
#include "support/test_paths.h"

namespace nova {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path fixture(const std::string& name) { return test::fixtures_dir() / "diagnostics" / name; }

const std::vector<Diagnostic> kBrokenKernelErrors = {
    {"broken_kernel.cu", 9, 0, DiagnosticSeverity::error, "identifier \"channel\" is undefined"},
    {"broken_kernel.cu", 11, 0, DiagnosticSeverity::error,
     "a value of type \"float *\" cannot be used to initialize an entity of type \"float4 *\""},
};

TEST(Diagnostics, ParsesTheRecordedNvrtcLog) {
  auto d = parse_diagnostics(read(fixture("nvrtc_broken_kernel.log")));
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0], kBrokenKernelErrors[0]);
  EXPECT_EQ(d[1], kBrokenKernelErrors[1]);
  EXPECT_EQ(d[2], (Diagnostic{"broken_kernel.cu", 6, 0, DiagnosticSeverity::warning,
                              "variable \"unused_lane\" was declared but never referenced"}));
}

TEST(Diagnostics, ParsesTheRecordedNvccLog) {
  EXPECT_EQ(parse_diagnostics(read(fixture("nvcc_broken_kernel.log"))), kBrokenKernelErrors);
}

TEST(Diagnostics, ParsesTheRecordedGccLogWithColumns) {
  auto d = parse_diagnostics(read(fixture("host_launcher_gcc.log")));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].file, "host_launcher.cpp");
  EXPECT_EQ(d[0].line, 8);
  EXPECT_EQ(d[0].column, 36);
  EXPECT_EQ(d[0].severity, DiagnosticSeverity::error);
  EXPECT_NE(d[0].message.find("missing_offset"), std::string::npos);
  EXPECT_EQ(d[1].line, 11);
  EXPECT_EQ(d[1].column, 26);
  EXPECT_EQ(d[1].severity, DiagnosticSeverity::warning);
}

TEST(Diagnostics, KeepsInstantiationContextAndNotes) {
  auto d = parse_diagnostics(
      "k.cu(4): error: no operator \"+\" matches these operands\n"
      "          detected during instantiation of \"void f<T>(T) [with T=int]\" at line 9\n"
      "k.cu:5:1: note: declared here\n"
      "k.cu(7): catastrophic error: cannot open source file \"missing.h\"\n");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].message,
            "no operator \"+\" matches these operands\n"
            "detected during instantiation of \"void f<T>(T) [with T=int]\" at line 9");
  EXPECT_EQ(d[1].severity, DiagnosticSeverity::note);
  EXPECT_EQ(d[2].severity, DiagnosticSeverity::error);
  EXPECT_EQ(d[2].line, 7);
}

TEST(Diagnostics, LiveNvrtcLogMatchesTheRecording) {
  NvrtcCompiler compiler(test::scratch_dir("diagnostics_nvrtc"));
  NvrtcResult r = compiler.compile(read(fixture("broken_kernel.cu")), "broken_kernel.cu", "sm_90");
  EXPECT_FALSE(r.ok);  // it must fail to compile
  EXPECT_EQ(parse_diagnostics(r.log), parse_diagnostics(read(fixture("nvrtc_broken_kernel.log")))) << r.log;
}

TEST(Diagnostics, LiveNvccLogMatchesTheRecording) {
  fs::path nvcc = fs::path(nova::build_info::cuda_toolkit_dir()) / "bin" / "nvcc";
  ASSERT_TRUE(fs::exists(nvcc)) << nvcc;
  fs::path out = test::scratch_dir("diagnostics_nvcc") / "broken_kernel.o";
  auto r = ChildProcess::run(
      {nvcc.string(), "-arch=sm_90", "-c", fixture("broken_kernel.cu").string(), "-o", out.string()},
      ChildProcess::minimal_env(), 180s);
  ASSERT_FALSE(r.timed_out);
  EXPECT_FALSE(r.status.exited && r.status.code == 0);
  auto live = parse_diagnostics(r.out + r.err);
  ASSERT_EQ(live.size(), kBrokenKernelErrors.size()) << r.out << r.err;
  for (size_t i = 0; i < live.size(); ++i) {
    EXPECT_TRUE(live[i].file.ends_with("broken_kernel.cu")) << live[i].file;
    EXPECT_EQ(live[i].line, kBrokenKernelErrors[i].line);
    EXPECT_EQ(live[i].message, kBrokenKernelErrors[i].message);
  }
}

}  // namespace
}  // namespace nova
