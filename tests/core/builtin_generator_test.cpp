// The builtin generator on the graphs intake captured from every example model (recorded in
// tests/fixtures/graphs): every fusion group gets a candidate whose device code NVRTC compiles for
// sm_90, whose plan is consistent with its kernels, and the seed demos' code matches the golden files.
#include "core/gen/builtin_generator.h"

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/build/nvrtc_compiler.h"
#include "core/verify/static_checker.h"
#include "support/graph_fixtures.h"
#include "support/test_paths.h"

namespace nova {
namespace {
namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> all_graphs() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(test::fixtures_dir() / "graphs"))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The parameter declarations of an extern "C" kernel in the source ("const __half* __restrict__ in_x"),
// split at commas outside parentheses; empty if the kernel is not there.
std::vector<std::string> kernel_params(const std::string& source, const std::string& kernel) {
  auto pos = source.find(kernel + "(");
  if (pos == std::string::npos) return {};
  std::vector<std::string> params(1);
  int depth = 0;
  for (auto i = pos + kernel.size() + 1; i < source.size(); ++i) {
    const char c = source[i];
    if (c == ')' && depth == 0) return params;
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0)
      params.emplace_back();
    else
      params.back() += c;
  }
  return {};
}

TEST(BuiltinGenerator, HalfAndBfloat16ModelsGetKernelsThatReadEveryBufferThroughItsOwnType) {
  NvrtcCompiler nvrtc(test::scratch_dir("generator_nvrtc_half"));
  BuiltinGenerator gen;
  const std::map<std::string, std::string> storage = {
      {"float16", "__half"}, {"bfloat16", "__nv_bfloat16"}, {"float32", "float"}};
  int kernels = 0, temps_read = 0;
  for (const std::string dtype : {"float16", "bfloat16"})
    for (const auto& name : all_graphs()) {
      ModelGraph g = test::graph_fixture(name, dtype);
      for (const auto& group : g.groups) {
        SCOPED_TRACE(fmt::format("{} {} group {}", dtype, name, group.id));
        Candidate c = gen.generate(g, group);
        ASSERT_FALSE(c.declined.has_value()) << *c.declined;
        for (const auto& t : c.plan.outputs) EXPECT_EQ(t.dtype, dtype) << t.name;
        for (const auto& s : c.plan.steps) {
          if (s.type != "kernel") continue;
          ++kernels;
          auto params = kernel_params(c.cuda_source, s.kernel);
          ASSERT_EQ(params.size(), s.args.size()) << s.kernel;
          for (std::size_t i = 0; i < s.args.size(); ++i) {
            const std::string& ref = s.args[i].ref;
            if (ref.empty()) continue;
            const std::size_t k = std::stoul(ref.substr(ref.find(':') + 1));
            const auto& list = ref.rfind("input", 0) == 0    ? c.plan.inputs
                               : ref.rfind("output", 0) == 0 ? c.plan.outputs
                                                             : c.plan.temps;
            ASSERT_LT(k, list.size()) << ref;
            if (!storage.count(list[k].dtype)) continue;  // bool and integer buffers
            const std::string type = storage.at(list[k].dtype) + "*";
            EXPECT_NE(params[i].find(type), std::string::npos)
                << s.kernel << " parameter " << i << " (" << ref << ", " << list[k].dtype
                << "): " << params[i];
            if (ref.rfind("temp", 0) == 0) ++temps_read;
          }
        }
        NvrtcResult r = nvrtc.compile(c.cuda_source, name + ".cu", "sm_90");
        EXPECT_TRUE(r.ok) << r.log;
      }
    }
  EXPECT_GE(kernels, 50);
  EXPECT_GE(temps_read, 10);  // the library steps' results: half tensors, read as half
}

TEST(BuiltinGenerator, EveryGroupOfEveryExampleGeneratesAndCompilesWithNvrtc) {
  NvrtcCompiler nvrtc(test::scratch_dir("generator_nvrtc"));
  BuiltinGenerator gen;
  auto names = all_graphs();
  ASSERT_GE(names.size(), 14u);
  int groups = 0, alternatives = 0;
  for (const auto& name : names) {
    ModelGraph g = test::graph_fixture(name);
    for (const auto& group : g.groups) {
      ++groups;
      SCOPED_TRACE(name + " group " + std::to_string(group.id));
      // The primary and every alternative: each is validated and benchmarked on its own.
      auto check = [&](const Candidate& c) {
        ASSERT_FALSE(c.declined.has_value()) << *c.declined;
        EXPECT_EQ(c.origin.kind, "builtin");
        EXPECT_EQ(c.plan.inputs.size(), group.inputs.size());
        EXPECT_EQ(c.plan.outputs.size(), group.outputs.size());
        ASSERT_FALSE(c.plan.steps.empty());
        for (const auto& s : c.plan.steps) {
          if (s.type != "kernel") continue;
          EXPECT_EQ(kernel_params(c.cuda_source, s.kernel).size(), s.args.size()) << s.kernel;
          EXPECT_GE(s.grid[0], 1);
          EXPECT_LE(s.block[0] * s.block[1] * s.block[2], 1024);
        }
        // Every reference points at something the plan allocates or receives.
        for (const auto& s : c.plan.steps)
          for (const auto& a : s.args) {
            if (a.ref.empty()) continue;
            auto colon = a.ref.find(':');
            std::string kind = a.ref.substr(0, colon);
            std::size_t i = std::stoul(a.ref.substr(colon + 1));
            std::size_t n = kind == "input"    ? c.plan.inputs.size()
                            : kind == "output" ? c.plan.outputs.size()
                                               : c.plan.temps.size();
            EXPECT_LT(i, n) << a.ref;
          }
        // Validation's static checks see the same kernels the plan launches, and nothing to refuse.
        StaticReport report = StaticChecker().check_candidate(c);
        EXPECT_FALSE(report.refused()) << (report.refusals.empty() ? "" : report.refusals[0]);
        for (const auto& s : c.plan.steps)
          if (s.type == "kernel")
            EXPECT_NE(std::find(report.kernels.begin(), report.kernels.end(), s.kernel), report.kernels.end())
                << s.kernel;
        NvrtcResult r = nvrtc.compile(c.cuda_source, name + ".cu", "sm_90");
        EXPECT_TRUE(r.ok) << r.log;
        EXPECT_NE(c.extension_source.find("PYBIND11_MODULE"), std::string::npos);
      };
      check(gen.generate(g, group));
      for (const auto& alternative : gen.alternatives(g, group)) {
        SCOPED_TRACE("alternative " + alternative.origin.rule);
        check(alternative);
        ++alternatives;
      }
    }
  }
  EXPECT_GE(groups, 25);
  EXPECT_GE(alternatives, 8);  // the fp32 linear layers on tensor cores
}

TEST(BuiltinGenerator, SeedDemosPickTheFusedRulesAndMatchTheGoldenCode) {
  BuiltinGenerator gen;
  for (const auto& [name, rule] : std::vector<std::pair<std::string, std::string>>{
           {"conv2d_min_add_multiply", "conv2d_direct"}, {"matmul_scaling_residual_add", "gemm_tiled"}}) {
    ModelGraph g = test::graph_fixture(name);
    ASSERT_EQ(g.groups.size(), 1u);
    Candidate c = gen.generate(g, g.groups[0]);
    EXPECT_EQ(c.origin.rule, rule);
    ASSERT_EQ(c.plan.steps.size(), 1u) << "one launch for the whole group";
    EXPECT_TRUE(c.library_ops.empty());
    fs::path golden = test::fixtures_dir() / "golden" / (name + ".group0.cu");
    if (std::getenv("NOVA_UPDATE_GOLDEN")) {
      std::ofstream(golden) << c.cuda_source;
    }
    EXPECT_EQ(c.cuda_source, read(golden))
        << "regenerate with NOVA_UPDATE_GOLDEN=1 after a deliberate change";
  }
}

TEST(BuiltinGenerator, FusesTheWholeSeedEpilogueIntoTheConvolution) {
  ModelGraph g = test::graph_fixture("conv2d_min_add_multiply");
  Candidate c = BuiltinGenerator().generate(g, g.groups[0]);
  // min with the lifted constant, the bias add and the scale all happen before the single store.
  EXPECT_NE(c.cuda_source.find("nova::minimumf_(conv, "), std::string::npos);
  EXPECT_NE(c.cuda_source.find("* 2.0f"), std::string::npos);
  std::regex store(R"(out_mul\[[^\]]+\] =)");
  EXPECT_EQ(std::distance(std::sregex_iterator(c.cuda_source.begin(), c.cuda_source.end(), store),
                          std::sregex_iterator()),
            1);
}

TEST(BuiltinGenerator, MemoryBoundChainsUseSixteenByteAccesses) {
  for (const char* name : {"swish_bias_clamp", "softmax_rows", "layernorm_gelu"}) {
    ModelGraph g = test::graph_fixture(name);
    Candidate c = BuiltinGenerator().generate(g, g.groups[0]);
    EXPECT_NE(c.cuda_source.find("float4"), std::string::npos) << name;
  }
  // Pointwise kernels: one float4 per thread, blocks of 128, one pass over swish's 2^23 vectors.
  ModelGraph g = test::graph_fixture("swish_bias_clamp");
  Candidate c = BuiltinGenerator().generate(g, g.groups[0]);
  ASSERT_EQ(c.plan.steps.size(), 1u);
  EXPECT_EQ(c.plan.steps[0].block[0], 128);
  EXPECT_EQ(c.plan.steps[0].grid[0], 8388608 / 128);
  EXPECT_NE(c.cuda_source.find("one vector per thread"), std::string::npos);
}

TEST(BuiltinGenerator, CausalMaskEpilogueIsVectorisedAndScalarKernelsTakeFourElementsPerThread) {
  ModelGraph g = test::graph_fixture("tiny_transformer_block");
  // Group 2: the attention scores (a library matmul), then / 8 and the causal mask (ones, triu,
  // masked_fill) in one pass. The mask is computed from each lane's own coordinates, so the pass
  // reads and writes 16 bytes at a time: 2^20 vectors, one per thread.
  Candidate scores = BuiltinGenerator().generate(g, g.groups[2]);
  ASSERT_FALSE(scores.declined.has_value()) << *scores.declined;
  ASSERT_EQ(scores.plan.steps.size(), 2u);
  EXPECT_EQ(scores.plan.steps[1].grid[0], 1048576 / 128);
  EXPECT_NE(scores.cuda_source.find("*reinterpret_cast<const float4*>(tmp_matmul + (base0))"),
            std::string::npos)
      << scores.cuda_source;
  // Lane 3 of a vector compares its own column with the row: (col + 3) - row >= 1 is masked.
  EXPECT_NE(scores.cuda_source.find("((((base0 % 256) + 3) - ((base0 / 256) % 256)) >= 1LL)"),
            std::string::npos)
      << scores.cuda_source;
  // Group 1: the qkv projection, then the head split (views that move elements): no 16-byte path.
  // Each thread takes 4 elements, 128 apart, so a block covers 2 KB as the vector kernels do.
  Candidate qkv = BuiltinGenerator().generate(g, g.groups[1]);
  ASSERT_FALSE(qkv.declined.has_value()) << *qkv.declined;
  int scalar_kernels = 0;
  for (const auto& step : qkv.plan.steps)
    if (step.type == "kernel") {
      EXPECT_EQ(step.block[0], 128);
      EXPECT_EQ(step.grid[0], 1048576 / 512);
      ++scalar_kernels;
    }
  EXPECT_EQ(scalar_kernels, 3);  // q, k, v
  EXPECT_EQ(qkv.cuda_source.find("float4"), std::string::npos);
  EXPECT_NE(qkv.cuda_source.find("4 elements per thread, 128 apart"), std::string::npos) << qkv.cuda_source;
}

// softmax_rows' graph with every tensor reshaped to rows x length (all its tensors are the input's shape).
ModelGraph softmax_rows_of(std::int64_t rows, std::int64_t length) {
  ModelGraph g = test::graph_fixture("softmax_rows");
  auto reshape = [&](auto& tensors) {
    for (auto& t : tensors) {
      t.shape = {rows, length};
      t.stride = {length, 1};
    }
  };
  reshape(g.inputs);
  reshape(g.outputs);
  for (auto& n : g.nodes) reshape(n.outputs);
  return g;
}

// The row kernels' layout follows the row length (measured on the H200 for rows of 512, 768, 1024
// and 8192 floats: docs/perf-notes.md, "row kernels v6" and "revision 7"); each block reduction has
// its own scratch row, since block_reduce no longer waits before writing it.
TEST(BuiltinGenerator, RowKernelsTakeAWarpOrABlockPerRowByRowLength) {
  struct Case {
    std::string name;
    std::size_t group;
    std::int64_t block, grid;
  };
  for (const auto& c : std::vector<Case>{{"layernorm_gelu", 0, 128, 16384},  // 1024: 128 threads x 2 float4
                                         {"softmax_rows", 0, 512, 4096},     // 8192: 512 threads x 4 float4
                                         {"mlp_block", 0, 256, 512},         // 768: a warp per row
                                         {"tiny_transformer_block", 0, 256, 256}}) {  // 512: a warp per row
    SCOPED_TRACE(c.name);
    ModelGraph g = test::graph_fixture(c.name);
    Candidate k = BuiltinGenerator().generate(g, g.groups[c.group]);
    ASSERT_FALSE(k.declined.has_value()) << *k.declined;
    ASSERT_EQ(k.plan.steps.size(), 1u);
    EXPECT_EQ(k.plan.steps[0].block[0], c.block);
    EXPECT_EQ(k.plan.steps[0].grid[0], c.grid);
    if (c.block == 256) {
      EXPECT_EQ(k.cuda_source.find("block_reduce"), std::string::npos);
    } else {
      EXPECT_NE(k.cuda_source.find("__shared__ float scratch[2][32]"), std::string::npos);
      EXPECT_NE(k.cuda_source.find(", scratch[0], "), std::string::npos);
      EXPECT_NE(k.cuda_source.find(", scratch[1], "), std::string::npos);
    }
  }
  // Rows past 512 threads x 2 vectors take more steps per thread, then up to 1024 threads x 16.
  for (const auto& [length, block] :
       std::vector<std::pair<std::int64_t, std::int64_t>>{{16384, 512}, {32768, 512}, {65536, 1024}}) {
    ModelGraph g = softmax_rows_of(64, length);
    Candidate k = BuiltinGenerator().generate(g, g.groups[0]);
    ASSERT_FALSE(k.declined.has_value()) << length << ": " << *k.declined;
    EXPECT_EQ(k.plan.steps[0].block[0], block) << length;
  }
  ModelGraph longest = softmax_rows_of(64, 131072);
  Candidate too_long = BuiltinGenerator().generate(longest, longest.groups[0]);
  ASSERT_TRUE(too_long.declined.has_value());
  EXPECT_NE(too_long.declined->find("rows of 131072 elements are longer than the row kernel holds"),
            std::string::npos)
      << *too_long.declined;
}

TEST(BuiltinGenerator, LargeProblemsRunTheModelsOwnLibraryCallThenOneFusedEpiloguePass) {
  ModelGraph g = test::graph_fixture("linear_relu_bias");
  Candidate c = BuiltinGenerator().generate(g, g.groups[0]);
  EXPECT_EQ(c.origin.rule, "gemm_library+epilogue");
  ASSERT_EQ(c.plan.steps.size(), 2u);
  EXPECT_EQ(c.plan.steps[0].op, "aten.linear.default");
  EXPECT_EQ(c.plan.steps[1].type, "kernel");

  // KernelBench's compute-bound sizes of the seed problems (graphs recorded by `nova intake`): the
  // library call is eager's own (same op, same operands, no alpha/beta folding), then exactly one
  // kernel that reads its result and writes the group's output.
  for (const auto& [name, rule, op] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"matmul_scaling_residual_add_large.graph", "gemm_library+epilogue", "aten.linear.default"},
           {"conv2d_min_add_multiply_large.graph", "conv2d_library+epilogue", "aten.conv2d.default"}}) {
    SCOPED_TRACE(name);
    ModelGraph big = test::graph_fixture(name);
    ASSERT_EQ(big.groups.size(), 1u);
    const GraphNode* anchor = big.node(*big.groups[0].anchor);
    ASSERT_NE(anchor, nullptr);
    Candidate lib = BuiltinGenerator().generate(big, big.groups[0]);
    ASSERT_FALSE(lib.declined.has_value()) << *lib.declined;
    EXPECT_EQ(lib.origin.rule, rule);
    ASSERT_EQ(lib.plan.steps.size(), 2u);
    const PlanStep& call = lib.plan.steps[0];
    EXPECT_EQ(call.type, "library");
    EXPECT_EQ(call.op, op);
    EXPECT_EQ(call.op, anchor->target);
    EXPECT_TRUE(call.kwargs.is_null() || call.kwargs.empty()) << call.kwargs.dump();
    ASSERT_EQ(call.args.size(), anchor->args.size());
    for (std::size_t i = 0; i < call.args.size(); ++i) {
      EXPECT_EQ(call.args[i].ref, fmt::format("input:{}", i)) << "operand " << i;
      EXPECT_TRUE(call.args[i].view.empty()) << "operand " << i;
    }
    EXPECT_EQ(call.out, "temp:0");
    const PlanStep& epilogue = lib.plan.steps[1];
    EXPECT_EQ(epilogue.type, "kernel");
    EXPECT_EQ(epilogue.args.back().ref, "temp:0");
    EXPECT_EQ(lib.library_ops, std::vector<std::string>{op});
  }
}

TEST(BuiltinGenerator, Fp32LinearLayersGetATensorCoreGemmAsAnAlternativeToTheLibraryCall) {
  NvrtcCompiler nvrtc(test::scratch_dir("generator_nvrtc_tf32x3"));
  GenerationTarget opt_in;
  opt_in.gemm_tf32x3 = true;
  struct Expect {
    std::string graph;
    int group;
    std::int64_t m, n, tile_m;
  };
  for (const auto& x :
       std::vector<Expect>{{"mlp_block", 1, 4096, 3072, 128},
                           {"mlp_block", 3, 4096, 768, 128},
                           {"tiny_transformer_block", 8, 2048, 512, 128},
                           {"linear_relu_bias", 0, 1024, 2048, 128},
                           {"matmul_scaling_residual_add_large.graph", 0, 16384, 4096, 128}}) {
    SCOPED_TRACE(fmt::format("{} group {}", x.graph, x.group));
    ModelGraph g = test::graph_fixture(x.graph);
    const FusionGroup& group = g.groups.at(static_cast<std::size_t>(x.group));
    // The primary is eager's own library call, as measured and validated; the tensor-core form is
    // its alternative, and the primary itself where the target asks for it.
    EXPECT_EQ(BuiltinGenerator().generate(g, group).origin.rule, "gemm_library+epilogue");
    std::vector<Candidate> alternatives = BuiltinGenerator().alternatives(g, group);
    ASSERT_EQ(alternatives.size(), 1u);
    Candidate c = BuiltinGenerator(opt_in).generate(g, group);
    EXPECT_EQ(alternatives[0], c);
    EXPECT_TRUE(BuiltinGenerator(opt_in).alternatives(g, group).empty());
    ASSERT_FALSE(c.declined.has_value()) << *c.declined;
    EXPECT_EQ(c.origin.rule, "gemm_tf32x3");
    EXPECT_TRUE(c.library_ops.empty());
    ASSERT_EQ(c.plan.steps.size(), 1u);  // the epilogue is applied to the accumulators
    const PlanStep& k = c.plan.steps[0];
    EXPECT_EQ(k.type, "kernel");
    EXPECT_EQ(k.grid, (std::array<std::int64_t, 3>{x.n / 64, x.m / x.tile_m, 1}));
    EXPECT_EQ(k.block, (std::array<std::int64_t, 3>{128, 1, 1}));
    EXPECT_EQ(k.shared_bytes, 98304);  // 4 stages of a 128x32 and a 64x32 fp32 tile: above 48 KB
    EXPECT_EQ(k.args.size(), c.plan.inputs.size() + c.plan.outputs.size());
    EXPECT_NE(c.cuda_source.find("#include \"nova/gemm_tf32x3.cuh\""), std::string::npos);
    EXPECT_NE(c.cuda_source.find("nova::Tf32x3_128x64 tile;"), std::string::npos);
    EXPECT_NE(c.cuda_source.find("+ nova::to_f(in_"), std::string::npos) << "the bias is added in registers";
    NvrtcResult compiled = nvrtc.compile(c.cuda_source, x.graph + ".cu", "sm_90");
    EXPECT_TRUE(compiled.ok) << compiled.log;
    // The delivery form inlines the header: the extension is one self-contained file.
    EXPECT_EQ(c.extension_source.find("#include \"nova/"), std::string::npos);
    EXPECT_NE(c.extension_source.find("// ---- kernels/nova/gemm_tf32x3.cuh ----"), std::string::npos);
    EXPECT_NE(c.extension_source.find("cudaFuncAttributeMaxDynamicSharedMemorySize, 98304"),
              std::string::npos);
  }

  // The qkv projection's head split (outputs that are views of the result): each element is stored
  // into the view that holds it, with no epilogue pass.
  ModelGraph tiny = test::graph_fixture("tiny_transformer_block");
  Candidate qkv = BuiltinGenerator(opt_in).generate(tiny, tiny.groups[1]);
  EXPECT_EQ(qkv.origin.rule, "gemm_tf32x3");
  ASSERT_EQ(qkv.plan.steps.size(), 1u);
  EXPECT_EQ(qkv.plan.outputs.size(), 3u);
  EXPECT_NE(qkv.cuda_source.find("unsigned rest_row = unsigned(row - 0);"), std::string::npos);
  NvrtcResult qkv_compiled = nvrtc.compile(qkv.cuda_source, "qkv.cu", "sm_90");
  EXPECT_TRUE(qkv_compiled.ok) << qkv_compiled.log;
  // Where it does not apply the library path stays, with no alternative: fp16 models (3xTF32 is an
  // fp32 method).
  ModelGraph half = test::graph_fixture("mlp_block", "float16");
  EXPECT_EQ(BuiltinGenerator(opt_in).generate(half, half.groups[3]).origin.rule, "gemm_library+epilogue");
  EXPECT_TRUE(BuiltinGenerator().alternatives(half, half.groups[3]).empty());
  // The seed's small GEMM keeps its tiled FMA kernel (launch bound at 128x64 -> 128).
  ModelGraph seed = test::graph_fixture("matmul_scaling_residual_add");
  EXPECT_EQ(BuiltinGenerator(opt_in).generate(seed, seed.groups[0]).origin.rule, "gemm_tiled");
  EXPECT_TRUE(BuiltinGenerator().alternatives(seed, seed.groups[0]).empty());
  // Over a whole model, exactly its fp32 linear layers of a tile-sized output get one, and the
  // attention's two batched products (BatchedAndTransposedProducts... below).
  std::vector<int> with_alternative;
  for (const auto& group : tiny.groups)
    if (!BuiltinGenerator().alternatives(tiny, group).empty()) with_alternative.push_back(group.id);
  EXPECT_EQ(with_alternative, (std::vector<int>{1, 2, 4, 5, 7, 8}));
}

// Batched products, transposed and permuted operands and a triangular operand read in place: the
// tensor-core form reads each operand where it is (a view's strides as its leading dimension, a
// k-contiguous B as the tile's [N, K] form, an n-contiguous one through the k-major tile, a triu as a
// mask), batched over blockIdx.z, with index-dependent epilogues (masked_fill of a causal mask) on the
// accumulators.
TEST(BuiltinGenerator, BatchedAndTransposedProductsGetTheTensorCoreFormWithOperandsReadInPlace) {
  NvrtcCompiler nvrtc(test::scratch_dir("generator_nvrtc_bmm_tf32x3"));
  struct Expect {
    std::string graph;
    int group;
    std::array<std::int64_t, 3> grid;  // n tiles, m tiles, batch
    std::string alias, mainloop;       // the tile and its main loop as called
    std::int64_t shared_bytes;
  };
  for (const auto& x : std::vector<Expect>{
           // bmm(q, k.transpose(1, 2)) * scale: 32 x 128x128x64; k read as W [N, K] at its batch stride.
           // 128-row tiles would be 64 blocks for 132 multiprocessors: 64-row ones.
           {"bmm_softmax", 0, {2, 2, 32}, "nova::Tf32x3_64x64",
            "mainloop_at(in_q + bat * 8192LL, 64, in_k + bat * 8192LL, 64, 64,", 65536},
           // bmm(q, k.permute(0, 2, 1)) * 0.125, then masked_fill of a tril mask: 64 x 256x256x64 (the
           // graph as intake grouped it before the row's logsumexp joined the product's group: the masked
           // scores are the group's result, as where something else reads them).
           {"coverage/before_row_fusion/bmm_transposed_tril_logsumexp", 0, {4, 2, 64}, "nova::Tf32x3_128x64",
            "mainloop_at(in_q + bat * 16384LL, 64, in_k + bat * 16384LL, 64, 64,", 98304},
           // q.reshape(-1, 64).triu() @ proj.T: the triu is a mask on A, proj read as W [N, K].
           {"coverage/before_row_fusion/bmm_transposed_tril_logsumexp", 2, {2, 128, 1}, "nova::Tf32x3_128x64",
            "mainloop_at(in_q, 64, in_p_proj, 64, 64, blockIdx.y * 128, blockIdx.x * 64, nova_smem, "
            "nova::tf32x3::KeepUpper<0>{}, nova::tf32x3::NoMask{});",
            98304},
           // The attention's scores q @ k^T / 8 with k^T materialized by the group before ([K, N], n
           // contiguous): the k-major tile, 8 x 8 heads of 256x256x64.
           {"tiny_transformer_block", 2, {4, 2, 64}, "nova::Tf32x3Kn_128x64",
            "mainloop_kn(in_transpose + bat * 16384LL, 64, in_transpose_3 + bat * 16384LL, 256, 64,", 100352},
       }) {
    SCOPED_TRACE(fmt::format("{} group {}", x.graph, x.group));
    ModelGraph g = test::graph_fixture(x.graph);
    const FusionGroup& group = g.groups.at(static_cast<std::size_t>(x.group));
    EXPECT_NE(BuiltinGenerator().generate(g, group).origin.rule, "gemm_tf32x3");
    std::vector<Candidate> alternatives = BuiltinGenerator().alternatives(g, group);
    ASSERT_EQ(alternatives.size(), 1u);
    const Candidate& c = alternatives[0];
    ASSERT_FALSE(c.declined.has_value()) << *c.declined;
    EXPECT_EQ(c.origin.rule, "gemm_tf32x3");
    ASSERT_EQ(c.plan.steps.size(), 1u) << "operands are read in place and the epilogue is on the accumulators";
    EXPECT_EQ(c.plan.steps[0].grid, x.grid);
    EXPECT_EQ(c.plan.steps[0].shared_bytes, x.shared_bytes);
    EXPECT_NE(c.cuda_source.find(x.alias + " tile;"), std::string::npos);
    EXPECT_NE(c.cuda_source.find("tile." + x.mainloop), std::string::npos) << c.cuda_source;
    EXPECT_TRUE(StaticChecker().check_candidate(c).refusals.empty());
    NvrtcResult compiled = nvrtc.compile(c.cuda_source, "bmm.cu", "sm_90");
    EXPECT_TRUE(compiled.ok) << compiled.log;
  }
  // The attention's weights times v, its heads merged back by a reshape that copies (of a transposed
  // view): each element stored straight into its place in the merged output, out[b, s, h * 64 + d]
  // from the result's (bat = b * 8 + h, row = s, col = d).
  ModelGraph tiny = test::graph_fixture("tiny_transformer_block");
  EXPECT_EQ(BuiltinGenerator().generate(tiny, tiny.groups[4]).origin.rule, "gemm_library+epilogue");
  Candidate merged = BuiltinGenerator().alternatives(tiny, tiny.groups[4]).at(0);
  EXPECT_EQ(merged.origin.rule, "gemm_tf32x3");
  ASSERT_EQ(merged.plan.steps.size(), 1u);
  EXPECT_EQ(merged.plan.steps[0].grid, (std::array<std::int64_t, 3>{1, 4, 64}));
  EXPECT_NE(merged.cuda_source.find("const long long row = bat * 256LL + row_index, col = col_index;"),
            std::string::npos);
  EXPECT_NE(merged.cuda_source.find("out_reshape[c0 * 131072LL + c1 * 512LL + c2 * 64LL + c3]"), std::string::npos)
      << merged.cuda_source;
  NvrtcResult merged_compiled = nvrtc.compile(merged.cuda_source, "merged.cu", "sm_90");
  EXPECT_TRUE(merged_compiled.ok) << merged_compiled.log;

  // The causal mask is applied per element from the accumulator's own (bat, row, col).
  ModelGraph tril = test::graph_fixture("coverage/before_row_fusion/bmm_transposed_tril_logsumexp");
  Candidate masked = BuiltinGenerator().alternatives(tril, tril.groups[0]).at(0);
  EXPECT_NE(masked.cuda_source.find("((col - row) <= 0LL) ? 1.0f : 0.0f"), std::string::npos);
  // Staged through shared memory: four consecutive columns per 16-byte store.
  EXPECT_NE(masked.cuda_source.find("tile.store_rows(nova_smem, blockIdx.y * 128, blockIdx.x * 64,"), std::string::npos)
      << masked.cuda_source;
  EXPECT_NE(masked.cuda_source.find("*reinterpret_cast<float4*>(out_masked_fill + (bat * 256LL + row) * 256LL + col) = "
                                    "make_float4(nova_v[0], nova_v[1], nova_v[2], nova_v[3]);"),
            std::string::npos);

  // A small M x N with a long K (128x512 -> 256: 8 tiles for 132 multiprocessors, where the tiled FMA
  // kernel took 4.5x eager's time): K split in 8 slices of 64 into a partials temp, then a second kernel
  // adds them in a fixed order with the bias.
  ModelGraph small = test::graph_fixture("coverage/linear_softmax_sum");
  EXPECT_EQ(BuiltinGenerator().generate(small, small.groups[0]).origin.rule, "gemm_tiled");
  Candidate split = BuiltinGenerator().alternatives(small, small.groups[0]).at(0);
  EXPECT_EQ(split.origin.rule, "gemm_tf32x3");
  ASSERT_EQ(split.plan.steps.size(), 2u);
  EXPECT_EQ(split.plan.steps[0].grid, (std::array<std::int64_t, 3>{4, 2, 8}));
  EXPECT_EQ(split.plan.steps[1].kernel, "nova_g0_gemm_tf32x3_sum");
  ASSERT_EQ(split.plan.temps.size(), 1u);
  EXPECT_EQ(split.plan.temps[0].shape, (std::vector<std::int64_t>{8, 128, 256}));
  EXPECT_EQ(split.plan.steps[0].args.back().ref, "temp:0");
  EXPECT_EQ(split.plan.steps[1].args.back().ref, "temp:0");
  EXPECT_NE(split.cuda_source.find("tile.mainloop_at(in_x + slice * 64LL, 512, in_p_fc_weight + slice * 64LL, 512, 64,"),
            std::string::npos);
  EXPECT_NE(split.cuda_source.find("for (int s = 1; s < 8; ++s) gemm += nova_partials[s * 32768LL + i];"),
            std::string::npos);
  EXPECT_TRUE(StaticChecker().check_candidate(split).refusals.empty());
  NvrtcResult split_compiled = nvrtc.compile(split.cuda_source, "split.cu", "sm_90");
  EXPECT_TRUE(split_compiled.ok) << split_compiled.log;
  // Beside it the one-launch form (split K measured 1.41x cold but 0.87x wall: two launches and a temp per
  // call): a block per 32x32 tile over the whole K, the bias in its staged epilogue, no temp.
  const std::vector<Candidate> both = BuiltinGenerator().alternatives(small, small.groups[0]);
  ASSERT_EQ(both.size(), 2u);
  const Candidate& whole = both[1];
  EXPECT_EQ(whole.origin.rule, "gemm_tf32x3_whole_k");
  ASSERT_EQ(whole.plan.steps.size(), 1u);
  EXPECT_EQ(whole.plan.steps[0].grid, (std::array<std::int64_t, 3>{8, 4, 1}));
  EXPECT_EQ(whole.plan.steps[0].block, (std::array<std::int64_t, 3>{128, 1, 1}));
  EXPECT_EQ(whole.plan.steps[0].shared_bytes, 32768);
  EXPECT_TRUE(whole.plan.temps.empty());
  EXPECT_NE(whole.cuda_source.find("nova::Tf32x3_32x32 tile;"), std::string::npos) << whole.cuda_source;
  EXPECT_NE(whole.cuda_source.find("tile.mainloop_at(in_x, 512, in_p_fc_weight, 512, 512, blockIdx.y * 32, blockIdx.x * 32,"),
            std::string::npos);
  EXPECT_NE(whole.cuda_source.find("const float gemm = acc + nova::to_f(in_p_fc_bias[col]);"), std::string::npos);
  EXPECT_TRUE(StaticChecker().check_candidate(whole).refusals.empty());
  NvrtcResult whole_compiled = nvrtc.compile(whole.cuda_source, "whole.cu", "sm_90");
  EXPECT_TRUE(whole_compiled.ok) << whole_compiled.log;
  // With the tensor-core GEMM as the primary (--gemm-tf32x3), the split form is the primary and the
  // one-launch form its only alternative.
  GenerationTarget primary_tf32x3;
  primary_tf32x3.gemm_tf32x3 = true;
  EXPECT_EQ(BuiltinGenerator(primary_tf32x3).generate(small, small.groups[0]).plan.steps.size(), 2u);
  const std::vector<Candidate> beside = BuiltinGenerator(primary_tf32x3).alternatives(small, small.groups[0]);
  ASSERT_EQ(beside.size(), 1u);
  EXPECT_EQ(beside[0].cuda_source, whole.cuda_source);
  // Where the tensor-core form needs no split, there is no second one: tiny_transformer_block's projections.
  ModelGraph transformer = test::graph_fixture("tiny_transformer_block");
  for (const auto& g : transformer.groups)
    EXPECT_LE(BuiltinGenerator().alternatives(transformer, g).size(), 1u) << g.id;

  // Operands that are neither k- nor n-contiguous stay with the library: x.T @ y reads x's columns.
  ModelGraph gram = test::graph_fixture("coverage/linear_softmax_sum");
  EXPECT_TRUE(BuiltinGenerator().alternatives(gram, gram.groups[4]).empty());
}

TEST(BuiltinGenerator, Fp32ConvolutionsGetATensorCoreImplicitGemmAsAnAlternative) {
  NvrtcCompiler nvrtc(test::scratch_dir("generator_nvrtc_conv_tf32x3"));
  GenerationTarget opt_in;
  opt_in.gemm_tf32x3 = true;
  struct Expect {
    std::string graph;
    int group;
    std::string primary;                 // the rule of the primary, or "declined"
    std::array<std::int64_t, 3> grid;    // pixel tiles, channel tiles, groups
    std::string tile;
    std::size_t steps = 1;               // 2: the convolution's input is materialized first
    std::int64_t taps_bytes = 0;         // the table of K's taps: 8 bytes per k of K padded to 32
  };
  for (const auto& x : std::vector<Expect>{
           // 64 -> 128 channels, 3x3, stride 2, padding 1, 32x32x32 output pixels: 128-channel tiles.
           {"coverage/adaptive_global_pool", 0, "conv2d_library+epilogue", {32768 / 64, 1, 1}, "Tf32x3Gather_128x64",
            1, 576 * 8},
           // A bare grouped convolution (4 groups of 32 -> 64), (3,1) kernel, stride 2, dilation (2,1): the
           // library call alone is declined, the own kernel is not; one grid layer per group.
           {"coverage/depthwise_grouped_conv_relu", 1, "declined", {32768 / 128, 1, 4}, "Tf32x3Gather_64x128", 1,
            96 * 8},
           // leaky_relu, then a 1x3 convolution 256 -> 256 with a bias and a clamp: the activation is
           // materialized, then the convolution reads it.
           {"coverage/depthwise_grouped_conv_relu", 2, "conv2d_library+epilogue", {32768 / 64, 2, 1},
            "Tf32x3Gather_128x64", 2, 768 * 8},
           // The shared example: 8 -> 32 channels (a 64-row tile, half of it zeros), K = 72 (a partial k-tile).
           {"conv2d_relu_hardswish", 0, "conv2d_direct", {(64 * 62 * 62 + 127) / 128, 1, 1}, "Tf32x3Gather_64x128", 1,
            96 * 8}}) {
    SCOPED_TRACE(fmt::format("{} group {}", x.graph, x.group));
    ModelGraph g = test::graph_fixture(x.graph);
    const FusionGroup& group = g.groups.at(static_cast<std::size_t>(x.group));
    Candidate primary = BuiltinGenerator().generate(g, group);
    EXPECT_EQ(primary.declined ? "declined" : primary.origin.rule, x.primary);
    std::vector<Candidate> alternatives = BuiltinGenerator().alternatives(g, group);
    ASSERT_EQ(alternatives.size(), 1u);
    Candidate c = BuiltinGenerator(opt_in).generate(g, group);
    EXPECT_EQ(alternatives[0], c);
    ASSERT_FALSE(c.declined.has_value()) << *c.declined;
    EXPECT_EQ(c.origin.rule, "conv2d_tf32x3");
    EXPECT_TRUE(c.library_ops.empty());
    ASSERT_EQ(c.plan.steps.size(), x.steps);  // the epilogue is applied to the accumulators
    const PlanStep& k = c.plan.steps.back();
    EXPECT_EQ(k.type, "kernel");
    EXPECT_EQ(k.kernel, fmt::format("nova_g{}_conv2d_tf32x3", x.group));
    EXPECT_EQ(k.grid, x.grid);
    EXPECT_EQ(k.block, (std::array<std::int64_t, 3>{128, 1, 1}));
    // 4 stages of a 32-deep weight tile and a padded patch tile, then the taps' table.
    EXPECT_EQ(k.shared_bytes, 100352 + x.taps_bytes);
    EXPECT_NE(c.cuda_source.find(fmt::format("nova::ConvNchwTableGather<")), std::string::npos);
    EXPECT_NE(c.cuda_source.find(fmt::format(", {}> gather{{", x.taps_bytes / 8)), std::string::npos);
    EXPECT_NE(c.cuda_source.find("#include \"nova/conv_gather.cuh\""), std::string::npos);
    EXPECT_NE(c.cuda_source.find("nova::" + x.tile + " tile;"), std::string::npos);
    EXPECT_NE(c.cuda_source.find("tile.mainloop_gather("), std::string::npos);
    if (x.steps == 2) {
      EXPECT_EQ(c.plan.temps.size(), 1u);
      EXPECT_EQ(k.args.back().ref, "temp:0") << "the materialized input";
      EXPECT_EQ(k.args.size(), c.plan.inputs.size() + c.plan.outputs.size() + 1);
    } else {
      EXPECT_EQ(k.args.size(), c.plan.inputs.size() + c.plan.outputs.size());
    }
    NvrtcResult compiled = nvrtc.compile(c.cuda_source, "conv_tf32x3.cu", "sm_90");
    EXPECT_TRUE(compiled.ok) << compiled.log;
    // The delivery form inlines both headers.
    EXPECT_EQ(c.extension_source.find("#include \"nova/"), std::string::npos);
    EXPECT_NE(c.extension_source.find("// ---- kernels/nova/gemm_tf32x3.cuh ----"), std::string::npos);
    EXPECT_NE(c.extension_source.find("// ---- kernels/nova/conv_gather.cuh ----"), std::string::npos);
    EXPECT_NE(c.extension_source.find(
                  fmt::format("cudaFuncAttributeMaxDynamicSharedMemorySize, {}", 100352 + x.taps_bytes)),
              std::string::npos);
  }
  // A K past the four-stage table's limit (192 input channels x 3x3 = 1728): the table beside three
  // stages. Past the three-stage one (600 x 3x3 = 5400): each element decodes its k, and the kernel asks
  // for the four stages' shared memory only.
  const auto widened = [](int channels) {
    ModelGraph wide = test::graph_fixture("conv2d_min_add_multiply_large.graph");
    for (auto& t : wide.inputs)
      if (t.shape.size() == 4) t.shape[1] = channels;
    for (auto& p : wide.params)
      if (p.tensor.shape.size() == 4) p.tensor.shape[1] = channels;
    return wide;
  };
  ModelGraph wide = widened(192);
  Candidate three_stages = BuiltinGenerator(opt_in).generate(wide, wide.groups[0]);
  ASSERT_EQ(three_stages.origin.rule, "conv2d_tf32x3") << three_stages.summary;
  EXPECT_NE(three_stages.cuda_source.find("nova::ConvNchwTableGather<192, 128, 128, 3, 3, 1, 1, 0, 0, 1, 1, 126, 126, "
                                          "1728> gather{"),
            std::string::npos)
      << three_stages.cuda_source;
  EXPECT_NE(three_stages.cuda_source.find("nova::Tf32x3Gather3_128x64 tile;"), std::string::npos);
  EXPECT_EQ(three_stages.plan.steps.at(0).shared_bytes, 75264 + 1728 * 8);
  NvrtcResult three_compiled = nvrtc.compile(three_stages.cuda_source, "conv_tf32x3_three_stages.cu", "sm_90");
  EXPECT_TRUE(three_compiled.ok) << three_compiled.log;
  ModelGraph wider = widened(600);
  Candidate arithmetic = BuiltinGenerator(opt_in).generate(wider, wider.groups[0]);
  ASSERT_EQ(arithmetic.origin.rule, "conv2d_tf32x3") << arithmetic.summary;
  EXPECT_EQ(arithmetic.cuda_source.find("ConvNchwTableGather"), std::string::npos);
  EXPECT_NE(arithmetic.cuda_source.find("nova::ConvNchwGather<600, 128, 128, 3, 3, 1, 1, 0, 0, 1, 1, 126, 126> gather{"),
            std::string::npos)
      << arithmetic.cuda_source;
  EXPECT_NE(arithmetic.cuda_source.find("nova::Tf32x3Gather_128x64 tile;"), std::string::npos);
  EXPECT_EQ(arithmetic.plan.steps.at(0).shared_bytes, 100352);
  NvrtcResult arithmetic_compiled = nvrtc.compile(arithmetic.cuda_source, "conv_tf32x3_wide.cu", "sm_90");
  EXPECT_TRUE(arithmetic_compiled.ok) << arithmetic_compiled.log;
  // The grouped convolution reads its group's channels and weights, and stores its group's channels.
  ModelGraph dw = test::graph_fixture("coverage/depthwise_grouped_conv_relu");
  Candidate grouped = BuiltinGenerator(opt_in).generate(dw, dw.groups[1]);
  EXPECT_NE(grouped.cuda_source.find("nova::ConvNchwTableGather<32, 64, 64, 3, 1, 2, 2, 2, 0, 2, 1, 32, 32, 96>"),
            std::string::npos)
      << grouped.cuda_source;
  EXPECT_NE(grouped.cuda_source.find("(long long)grp * 131072LL"), std::string::npos) << "the group's 32 input channels of 64x64";
  EXPECT_NE(grouped.cuda_source.find("(long long)grp * 6144LL"), std::string::npos) << "the group's 64 x 96 weights";
  EXPECT_NE(grouped.cuda_source.find("const int co = grp * 64 + row_index;"), std::string::npos);
  // Where it does not apply, no alternative: the depthwise convolution (one channel per group), the
  // seed's small convolution (16 channels, under the size limit), fp16 (3xTF32 is an fp32 method).
  EXPECT_TRUE(BuiltinGenerator().alternatives(dw, dw.groups[0]).empty());
  EXPECT_EQ(BuiltinGenerator(opt_in).generate(dw, dw.groups[0]).origin.rule, "conv2d_depthwise");
  ModelGraph seed = test::graph_fixture("conv2d_min_add_multiply");
  EXPECT_EQ(BuiltinGenerator(opt_in).generate(seed, seed.groups[0]).origin.rule, "conv2d_direct");
  ModelGraph half = test::graph_fixture("conv2d_relu_hardswish", "float16");
  EXPECT_TRUE(BuiltinGenerator().alternatives(half, half.groups[0]).empty());
}

TEST(BuiltinGenerator, A3dConvolutionGetsTheTensorCoreImplicitGemmWithATableOfItsTaps) {
  NvrtcCompiler nvrtc(test::scratch_dir("conv3d_nvrtc"));
  // conv3d_batchnorm_mish's bare convolution: 64 -> 64 channels, 3x3x5 taps (K = 2880), stride (1, 2, 1),
  // padding (1, 1, 2), over 16 x 16x32x32 volumes. Nothing to fuse: the library call alone is declined,
  // and the alternative is the implicit GEMM with K's taps in a table beside three stages.
  ModelGraph g = test::graph_fixture("coverage/conv3d_batchnorm_mish");
  Candidate primary = BuiltinGenerator().generate(g, g.groups[0]);
  ASSERT_TRUE(primary.declined.has_value());
  EXPECT_NE(primary.declined->find("eager's aten.conv3d.default call is already the best form"), std::string::npos);
  std::vector<Candidate> alternatives = BuiltinGenerator().alternatives(g, g.groups[0]);
  ASSERT_EQ(alternatives.size(), 1u);
  const Candidate& c = alternatives[0];
  ASSERT_FALSE(c.declined.has_value()) << *c.declined;
  EXPECT_EQ(c.origin.rule, "conv3d_tf32x3");
  EXPECT_TRUE(c.library_ops.empty());
  ASSERT_EQ(c.plan.steps.size(), 1u);
  const PlanStep& k = c.plan.steps[0];
  EXPECT_EQ(k.kernel, "nova_g0_conv3d_tf32x3");
  EXPECT_EQ(k.grid, (std::array<std::int64_t, 3>{16 * 16 * 16 * 32 / 128, 1, 1}));  // 64 channels x 128 voxels
  EXPECT_EQ(k.shared_bytes, 75264 + 2880 * 8);
  EXPECT_NE(c.cuda_source.find("nova::ConvNcdhwTableGather<64, 16, 32, 32, 3, 3, 5, 1, 2, 1, 1, 1, 2, 1, 1, 1, 16, 16, "
                               "32, 2880> gather{"),
            std::string::npos)
      << c.cuda_source;
  EXPECT_NE(c.cuda_source.find("nova::Tf32x3Gather3_64x128 tile;"), std::string::npos);
  EXPECT_NE(c.cuda_source.find("const float conv = acc + nova::to_f(in_p_conv_bias[co]);"), std::string::npos);
  EXPECT_NE(c.cuda_source.find("*reinterpret_cast<float4*>(out_conv3d + (long long)(n * 64 + co) * 8192 + pix0) ="),
            std::string::npos);
  NvrtcResult compiled = nvrtc.compile(c.cuda_source, "conv3d_tf32x3.cu", "sm_90");
  EXPECT_TRUE(compiled.ok) << compiled.log;
  EXPECT_NE(c.extension_source.find("// ---- kernels/nova/conv_gather.cuh ----"), std::string::npos);
  EXPECT_NE(c.extension_source.find(fmt::format("cudaFuncAttributeMaxDynamicSharedMemorySize, {}", 75264 + 2880 * 8)),
            std::string::npos);

  // A transposed 3-D convolution: the primary is the library call, its GELU and scale fused into one pass
  // after it.
  ModelGraph t = test::graph_fixture("coverage/conv_transpose3d_avgpool_gelu");
  Candidate transposed = BuiltinGenerator().generate(t, t.groups[0]);
  ASSERT_FALSE(transposed.declined.has_value()) << *transposed.declined;
  EXPECT_EQ(transposed.origin.rule, "conv3d_library+epilogue");
  EXPECT_EQ(transposed.library_ops, std::vector<std::string>{"aten.conv_transpose3d.input"});
}

TEST(BuiltinGenerator, ADepthwiseConvolutionGetsItsOwnKernelWithTheEpilogueInRegisters) {
  // depthwise_grouped_conv_relu's group 0: 128 channels of 64x64, a 3x5 kernel with padding (2, 2) and
  // dilation (2, 1), then relu: a block per output plane (a band of all 64 rows, 18.5 KB of tile), the
  // relu before the only store. Was the library call with relu after it (0.99x eager, declined).
  NvrtcCompiler nvrtc(test::scratch_dir("depthwise_nvrtc"));
  ModelGraph g = test::graph_fixture("coverage/depthwise_grouped_conv_relu");
  Candidate c = BuiltinGenerator().generate(g, g.groups[0]);
  ASSERT_FALSE(c.declined.has_value()) << *c.declined;
  EXPECT_EQ(c.origin.rule, "conv2d_depthwise");
  EXPECT_TRUE(c.library_ops.empty());
  ASSERT_EQ(c.plan.steps.size(), 1u);
  EXPECT_EQ(c.plan.steps[0].kernel, "nova_g0_conv2d_depthwise");
  EXPECT_EQ(c.plan.steps[0].grid, (std::array<std::int64_t, 3>{32 * 128, 1, 1}));
  EXPECT_EQ(c.plan.steps[0].block, (std::array<std::int64_t, 3>{256, 1, 1}));
  EXPECT_NE(c.cuda_source.find("using Band = nova::DepthwiseBand<64, 64, 3, 5, 1, 1, 2, 2, 2, 1, 64, 64, 64>;"),
            std::string::npos)
      << c.cuda_source;
  EXPECT_NE(c.cuda_source.find("const float v0 = nova::reluf_(conv);"), std::string::npos);
  EXPECT_NE(c.cuda_source.find("out_relu[((long long)plane * 64 + oh) * 64 + ow]"), std::string::npos);
  NvrtcResult compiled = nvrtc.compile(c.cuda_source, "depthwise.cu", "sm_90");
  EXPECT_TRUE(compiled.ok) << compiled.log;
  EXPECT_NE(c.extension_source.find("// ---- kernels/nova/depthwise.cuh ----"), std::string::npos);
  // The grouped convolution (4 groups of 32 channels) is not depthwise: the library call stays its primary.
  EXPECT_EQ(BuiltinGenerator().generate(g, g.groups[1]).declined.has_value(), true);
}

TEST(BuiltinGenerator, BatchNormInTrainingFormGetsTwoDeterministicPassesAndTheRunningStatistics) {
  // conv3d_batchnorm_mish's group 2: batch norm in training form over 16 images x 64 channels x 16x16x32,
  // then mish and a per-channel gain; its results are the updated running mean and variance and the
  // epilogue's output (save_mean and save_invstd stay inside eager).
  NvrtcCompiler nvrtc(test::scratch_dir("batch_norm_train_nvrtc"));
  ModelGraph g = test::graph_fixture("coverage/conv3d_batchnorm_mish");
  Candidate c = BuiltinGenerator().generate(g, g.groups[2]);
  ASSERT_FALSE(c.declined.has_value()) << *c.declined;
  EXPECT_EQ(c.origin.rule, "batch_norm_train");
  ASSERT_EQ(c.plan.steps.size(), 2u);
  EXPECT_EQ(c.plan.steps[0].kernel, "nova_g2_batch_norm_train_partials");
  EXPECT_EQ(c.plan.steps[1].kernel, "nova_g2_batch_norm_train");
  for (const PlanStep& step : c.plan.steps) {
    EXPECT_EQ(step.grid, (std::array<std::int64_t, 3>{16 * 64, 1, 1}));  // a block per (image, channel) plane
    EXPECT_EQ(step.args.back().ref, "temp:0");
  }
  ASSERT_EQ(c.plan.temps.size(), 1u);
  EXPECT_EQ(c.plan.temps[0].shape, (std::vector<std::int64_t>{16 * 64, 2}));
  // The channel's partials combined in image order, the running statistics from the image-0 plane, the
  // variance unbiased for them and biased for the normalization.
  EXPECT_NE(c.cuda_source.find("nova::combine_planes(nova_bn_partials + c, 16, 64, 8192.0);"), std::string::npos)
      << c.cuda_source;
  EXPECT_NE(c.cuda_source.find("stats[1] = (float)(1.0 / sqrt(m2 / count + 1e-05));"), std::string::npos);
  EXPECT_NE(c.cuda_source.find("out_getitem_3[c] = (float)(0.9 * (double)in_b_bn_running_mean[c] + 0.1 * mean);"),
            std::string::npos);
  EXPECT_NE(c.cuda_source.find("out_getitem_4[c] = (float)(0.9 * (double)in_b_bn_running_var[c] + 0.1 * (m2 / "
                               "(count - 1.0)));"),
            std::string::npos);
  EXPECT_NE(c.cuda_source.find("const float bnv = (in_conv3d[f] - mean) * rstd * scale + shift;"), std::string::npos);
  EXPECT_NE(c.cuda_source.find("nova::mishf_(bnv)"), std::string::npos);
  EXPECT_NE(c.cuda_source.find("out_mul[f] = nova::from_f<float>("), std::string::npos);
  NvrtcResult compiled = nvrtc.compile(c.cuda_source, "batch_norm_train.cu", "sm_90");
  EXPECT_TRUE(compiled.ok) << compiled.log;
  // A momentum that is not a constant (momentum=None: a cumulative average) is declined with the reason.
  for (auto& n : g.nodes)
    if (n.target == "aten._native_batch_norm_legit_functional.default")
      for (auto& a : n.args)
        if (a.name == "momentum") a.constant = nullptr;
  Candidate cumulative = BuiltinGenerator().generate(g, g.groups[2]);
  ASSERT_TRUE(cumulative.declined.has_value());
  EXPECT_NE(cumulative.declined->find("whose momentum is not a constant"), std::string::npos) << *cumulative.declined;
}

TEST(BuiltinGenerator, TransposedConvolutionsGetOneImplicitGemmPerOutputPhase) {
  NvrtcCompiler nvrtc(test::scratch_dir("conv_transpose_nvrtc"));
  struct Case {
    std::string graph, rule, geometry;
    std::vector<std::int64_t> weights;  // the per-phase layout's temp: [groups][phases][cout_g][K padded to 4]
    std::array<std::int64_t, 3> grid;
    std::string store;
  };
  for (const Case& x : std::vector<Case>{
           // 128 -> 64, 3x3, stride 2, padding 1, output padding 1: four phases of 1, 2, 2 and 4 taps (K up to 512),
           // each of 32 images x 32x32 outputs; the bias and hardtanh on the accumulators.
           {"coverage/conv_transpose2d_maxpool_hardtanh", "conv_transpose2d_tf32x3",
            "128, 1, 32, 32, 1, 3, 3, 1, 2, 2, 0, 1, 1, 1, 1, 1, 1, 64, 64, 512",
            {1, 4, 64, 512},
            {32 * 32 * 32 / 128, 1, 4},
            "out_hardtanh[(((long long)(n * 64 + co) * 1 + od) * 64 + oh) * 64 + ow]"},
           // 128 -> 64, 2x4x4, stride 2, padding (0, 1, 1): eight phases of 1x2x2 taps, GELU and the scale.
           {"coverage/conv_transpose3d_avgpool_gelu", "conv_transpose3d_tf32x3",
            "128, 8, 16, 16, 2, 4, 4, 2, 2, 2, 0, 1, 1, 1, 1, 1, 16, 32, 32, 512",
            {1, 8, 64, 512},
            {16 * 8 * 16 * 16 / 128, 1, 8},
            "out_mul[(((long long)(n * 64 + co) * 16 + od) * 32 + oh) * 32 + ow]"}}) {
    SCOPED_TRACE(x.graph);
    ModelGraph g = test::graph_fixture(x.graph);
    std::vector<Candidate> alternatives = BuiltinGenerator().alternatives(g, g.groups[0]);
    ASSERT_EQ(alternatives.size(), 1u);
    const Candidate& c = alternatives[0];
    ASSERT_FALSE(c.declined.has_value()) << *c.declined;
    EXPECT_EQ(c.origin.rule, x.rule);
    EXPECT_TRUE(c.library_ops.empty());
    ASSERT_EQ(c.plan.temps.size(), 1u);
    EXPECT_EQ(c.plan.temps[0].shape, x.weights);
    ASSERT_EQ(c.plan.steps.size(), 2u);  // the weights' layout, then the phases' GEMMs
    EXPECT_EQ(c.plan.steps[0].kernel, "nova_g0_" + x.rule.substr(0, 16) + "_tf32x3_weights");
    const PlanStep& k = c.plan.steps[1];
    EXPECT_EQ(k.kernel, "nova_g0_" + x.rule.substr(0, 16) + "_tf32x3");
    EXPECT_EQ(k.grid, x.grid);
    EXPECT_EQ(k.shared_bytes, 100352 + 512 * 8);
    EXPECT_EQ(k.args.back().ref, "temp:0");
    EXPECT_NE(c.cuda_source.find("nova::ConvTransposedTableGather<" + x.geometry + "> gather{"), std::string::npos)
        << c.cuda_source;
    EXPECT_NE(c.cuda_source.find("if ((int)blockIdx.x * 128 >= gather.pixels) return;"), std::string::npos);
    EXPECT_NE(c.cuda_source.find(x.store), std::string::npos) << c.cuda_source;
    NvrtcResult compiled = nvrtc.compile(c.cuda_source, "conv_transpose_tf32x3.cu", "sm_90");
    EXPECT_TRUE(compiled.ok) << compiled.log;
  }
}

TEST(BuiltinGenerator, CandidateJsonRoundTrips) {
  ModelGraph g = test::graph_fixture("tiny_transformer_block");
  for (const auto& group : g.groups) {
    Candidate c = BuiltinGenerator().generate(g, group);
    EXPECT_EQ(nlohmann::json(c).get<Candidate>(), c);
  }
}

TEST(BuiltinGenerator, DeclinesWhatNoRuleCoversWithTheReason) {
  ModelGraph g = test::graph_fixture("swish_bias_clamp");
  g.nodes[0].target = "aten.special_bessel_j0.default";
  Candidate c = BuiltinGenerator().generate(g, g.groups[0]);
  ASSERT_TRUE(c.declined.has_value());
  EXPECT_NE(c.declined->find("aten.special_bessel_j0.default"), std::string::npos);
  EXPECT_TRUE(c.cuda_source.empty());
}

namespace {

// A one-node group over an int64 0-d buffer: `target`(num_batches_tracked, 1).
ModelGraph integer_counter(const std::string& target) {
  ModelGraph g;
  g.model_path = "bn_train.py";
  g.inputs = {TensorInfo{"num_batches_tracked", {}, {}, "int64"}};
  GraphNode n;
  n.id = 0;
  n.target = target;
  n.op = target.substr(5, target.find('.', 5) - 5);
  n.op_class = OpClass::Elementwise;
  n.args = {{"self", "num_batches_tracked", nullptr}, {"other", "", 1}};
  n.outputs = {TensorInfo{"add", {}, {}, "int64"}};
  g.nodes = {n};
  g.outputs = n.outputs;
  FusionGroup group;
  group.kind = "elementwise";
  group.nodes = {0};
  group.inputs = {"num_batches_tracked"};
  group.outputs = {"add"};
  g.groups = {group};
  return g;
}

}  // namespace

// batch norm's training form adds 1 to its int64 num_batches_tracked: computed in float it would round
// large counts and need a conversion that does not exist (`nova::from_f<long long>`), so integer add, sub
// and mul are their own rule, exact in 64-bit integers; it compiles.
TEST(BuiltinGenerator, AnIntegerCounterIsAddedInSixtyFourBitIntegers) {
  ModelGraph g = integer_counter("aten.add.Tensor");
  Candidate c = BuiltinGenerator().generate(g, g.groups[0]);
  ASSERT_FALSE(c.declined.has_value()) << *c.declined;
  EXPECT_EQ(c.origin.rule, "pointwise_int64");
  const std::string& k = c.cuda_source;
  EXPECT_NE(k.find("const long long* __restrict__ in_num_batches_tracked"), std::string::npos) << k;
  EXPECT_NE(k.find("long long* __restrict__ out_add"), std::string::npos) << k;
  EXPECT_NE(k.find("const long long nova_t0 = in_num_batches_tracked[0] + 1LL;"), std::string::npos) << k;
  EXPECT_NE(k.find("out_add[i] = nova_t0;"), std::string::npos) << k;
  EXPECT_EQ(k.find("float"), std::string::npos) << "no value goes through float: " << k;
  EXPECT_EQ(c.plan.steps.at(0).grid, (std::array<std::int64_t, 3>{1, 1, 1}));
  NvrtcCompiler nvrtc(test::scratch_dir("integer_counter"));
  NvrtcResult built = nvrtc.compile(k, "counter.cu", "sm_90");
  EXPECT_TRUE(built.ok) << built.log;
}

// An int64 result of an op the integer rule does not write (floor division here) stays with PyTorch,
// exact, and the reason says so; as does a float constant in integer arithmetic.
TEST(BuiltinGenerator, AnIntegerResultOfAnotherOpStaysWithPyTorchAndSaysWhy) {
  ModelGraph g = integer_counter("aten.floor_divide.default");
  Candidate c = BuiltinGenerator().generate(g, g.groups[0]);
  ASSERT_TRUE(c.declined.has_value());
  EXPECT_EQ(*c.declined,
            "its result add is int64: the builtin kernels compute in float, so int64 results stay with PyTorch, "
            "exact");
  EXPECT_TRUE(c.cuda_source.empty());
  ModelGraph scaled = integer_counter("aten.mul.Tensor");
  scaled.nodes[0].args[1].constant = 1.5;
  Candidate s = BuiltinGenerator().generate(scaled, scaled.groups[0]);
  ASSERT_TRUE(s.declined.has_value());
  EXPECT_NE(s.declined->find("a constant 1.5 that is not an integer"), std::string::npos) << *s.declined;
}

// A group that is eager's library call alone (a bare convolution or GEMM at a size where the rules
// call cuDNN/cuBLAS) has nothing to fuse: the generator declines it rather than write a primary that
// our own static check refuses ("no CUDA kernel"). Every candidate it does write launches a kernel of
// ours and passes the static check.
TEST(BuiltinGenerator, ABareLibraryCallIsDeclinedNotRefusedByOurOwnCheck) {
  int declined = 0;
  for (const std::string name : {"conv2d_min_add_multiply_large.graph", "matmul_scaling_residual_add_large.graph"}) {
    ModelGraph g = test::graph_fixture(name);
    // The group cut down to its anchor: the library call alone.
    FusionGroup bare = g.groups.at(0);
    const GraphNode& anchor = g.nodes.at(static_cast<std::size_t>(bare.nodes.front()));
    bare.nodes = {anchor.id};
    bare.inputs.clear();
    for (const auto& a : anchor.args)
      if (!a.tensor.empty()) bare.inputs.push_back(a.tensor);
    bare.outputs = {anchor.outputs.at(0).name};
    for (const FusionGroup& group : {g.groups.at(0), bare}) {
      Candidate c = BuiltinGenerator().generate(g, group);
      if (c.declined) {
        EXPECT_NE(c.declined->find("call is already the best form: nothing to fuse around it"), std::string::npos)
            << name << ": " << *c.declined;
        ++declined;
        continue;
      }
      bool launches = false;
      for (const auto& step : c.plan.steps) launches = launches || step.type == "kernel";
      EXPECT_TRUE(launches) << name << " group of " << group.nodes.size() << " node(s) has no kernel of ours";
      EXPECT_FALSE(StaticChecker().check_candidate(c).refused()) << name;
    }
  }
  EXPECT_GE(declined, 1) << "a large convolution or GEMM alone is eager's library call";
}

}  // namespace
}  // namespace nova
