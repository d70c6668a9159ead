// The delivery form of a builtin candidate (a complete torch extension source) compiles with nvcc
// against the worker Python's torch headers: what a client's `pip install` will build.
#include <fstream>
#include "core/env/build_info.h"
#include <sstream>

#include <gtest/gtest.h>

#include "core/env/settings.h"
#include "core/gen/builtin_generator.h"
#include "core/worker/child_process.h"
#include "support/graph_fixtures.h"
#include "support/test_paths.h"

namespace nova {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Compiles a candidate's extension source with nvcc (object file only), as `pip install` would.
void expect_extension_compiles(const Candidate& c, const std::string& module) {
  fs::path dir = test::scratch_dir("extension_build");
  fs::path source = dir / (module + ".cu");
  std::ofstream(source) << c.extension_source;

  // Include folders of the worker Python's torch and of Python itself (pybind11 needs Python.h).
  auto env = ChildProcess::minimal_env();
  auto paths = ChildProcess::run({Settings{}.resolved_python(), "-c",
                                  "import sysconfig; from torch.utils.cpp_extension import include_paths\n"
                                  "print('\\n'.join(include_paths() + [sysconfig.get_paths()['include']]))"},
                                 env, 120s);
  ASSERT_TRUE(paths.status.exited && paths.status.code == 0) << paths.err;
  std::vector<std::string> cmd = {std::string(nova::build_info::cuda_toolkit_dir()) + "/bin/nvcc",
                                  "-c",
                                  "-std=c++17",
                                  "-arch=sm_90",
                                  "-D_GLIBCXX_USE_CXX11_ABI=1",
                                  "-DTORCH_EXTENSION_NAME=" + module,
                                  source.string(),
                                  "-o",
                                  (dir / (module + ".o")).string()};
  std::istringstream lines(paths.out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) cmd.push_back("-I" + line);
  auto r = ChildProcess::run(cmd, env, 900s);
  ASSERT_FALSE(r.timed_out);
  EXPECT_TRUE(r.status.exited && r.status.code == 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(dir / (module + ".o")));
}

TEST(ExtensionBuild, TheSeedCandidatesExtensionCompilesWithNvcc) {
  ModelGraph g = test::graph_fixture("conv2d_min_add_multiply");
  Candidate c = BuiltinGenerator().generate(g, g.groups[0]);
  ASSERT_FALSE(c.declined.has_value());
  expect_extension_compiles(c, "nova_seed_ext");
}

TEST(ExtensionBuild, AHalfPrecisionLibraryPlusEpilogueExtensionCompilesWithNvcc) {
  // tiny_transformer_block's qkv projection with every tensor in fp16: a library linear whose fp16
  // result three kernels read (the head split), passed to them as __half pointers.
  ModelGraph g = test::graph_fixture("tiny_transformer_block", "float16");
  Candidate c = BuiltinGenerator().generate(g, g.groups[1]);
  ASSERT_FALSE(c.declined.has_value()) << *c.declined;
  ASSERT_EQ(c.plan.temps.size(), 1u);
  EXPECT_EQ(c.plan.temps[0].dtype, "float16");
  EXPECT_NE(c.extension_source.find("reinterpret_cast<__half*>(temp_0.data_ptr())"), std::string::npos);
  expect_extension_compiles(c, "nova_half_ext");
}

TEST(ExtensionBuild, ATensorCoreGemmAlternativeExtensionCompilesWithNvcc) {
  // The attention's qkv projection on the 3xTF32 tensor-core path, its head split stored straight
  // into the three outputs: the GEMM header is inlined, the kernel asks for 96 KB of dynamic shared
  // memory before its launch, and the extension returns q, v and k transposed.
  ModelGraph g = test::graph_fixture("tiny_transformer_block");
  std::vector<Candidate> alternatives = BuiltinGenerator().alternatives(g, g.groups[1]);
  ASSERT_EQ(alternatives.size(), 1u);
  const Candidate& c = alternatives[0];
  ASSERT_EQ(c.origin.rule, "gemm_tf32x3");
  ASSERT_EQ(c.plan.outputs.size(), 3u);
  expect_extension_compiles(c, "nova_tf32x3_ext");
}

TEST(ExtensionBuild, ATensorCoreConvolutionAlternativeExtensionCompilesWithNvcc) {
  // The 1x3 convolution as an implicit GEMM on the 3xTF32 path, its leaky_relu input materialized
  // first: both headers inlined, 98 KB of dynamic shared memory asked for before the launch, the
  // temporary passed as the kernel's last argument.
  ModelGraph g = test::graph_fixture("coverage/depthwise_grouped_conv_relu");
  std::vector<Candidate> alternatives = BuiltinGenerator().alternatives(g, g.groups[2]);
  ASSERT_EQ(alternatives.size(), 1u);
  ASSERT_EQ(alternatives[0].origin.rule, "conv2d_tf32x3");
  expect_extension_compiles(alternatives[0], "nova_conv_tf32x3_ext");
}

TEST(ExtensionBuild, ATensorCoreTransposedConvolutionExtensionCompilesWithNvcc) {
  // The transposed 3-D convolution by output phase: the weights' layout kernel, then the phases' implicit
  // GEMMs, the layout's temp passed to both.
  ModelGraph g = test::graph_fixture("coverage/conv_transpose3d_avgpool_gelu");
  std::vector<Candidate> alternatives = BuiltinGenerator().alternatives(g, g.groups[0]);
  ASSERT_EQ(alternatives.size(), 1u);
  ASSERT_EQ(alternatives[0].origin.rule, "conv_transpose3d_tf32x3");
  expect_extension_compiles(alternatives[0], "nova_conv_transpose_tf32x3_ext");
}

}  // namespace
}  // namespace nova
