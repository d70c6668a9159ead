// Model coverage of the builtin generator (issue #24): the models in resources/examples/ written for
// the classes clients bring (3-D and transposed convolutions, depthwise and grouped ones, pooling,
// reductions over any dimensions, normalizations, transposed and triangular matmul operands, long
// activation chains, int64 buffers), generated from their recorded graphs
// (tests/fixtures/graphs/coverage, captured by `nova intake`). Every group gets a candidate that NVRTC
// compiles for sm_90 and our own static check accepts, or is declined with its reason; none is a
// candidate our validation would refuse. The table pins which rule each group gets, so coverage that
// goes away (or a decline that turns into a candidate) is a visible change.
#include <array>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/build/nvrtc_compiler.h"
#include "core/gen/builtin_generator.h"
#include "core/verify/static_checker.h"
#include "support/graph_fixtures.h"
#include "support/test_paths.h"

namespace nova {
namespace {
namespace fs = std::filesystem;

// Per group, the rule of its primary, or "declined: " and a part of the reason.
const std::map<std::string, std::vector<std::string>>& expected() {
  static const std::map<std::string, std::vector<std::string>> table = {
      {"activation_chain",
       {"pointwise", "pointwise", "pointwise", "pointwise", "pointwise", "pointwise"}},
      {"adaptive_global_pool",
       {"conv2d_library+epilogue", "window_reduce", "window_reduce", "cat_linear",  // the pooled pieces' head
        "window_reduce"}},
      {"bmm_transposed_tril_logsumexp",
       {"gemm_row_logsumexp", "gemm_library"}},  // the scores' logsumexp in the product's kernel
      {"conv3d_batchnorm_mish",
       {"declined: eager's aten.conv3d.default call is already the best form", "pointwise_int64",
        "batch_norm_train"}},  // num_batches_tracked + 1 in 64-bit integers
      {"conv_transpose2d_maxpool_hardtanh", {"conv2d_library+epilogue", "window_reduce"}},
      {"conv_transpose3d_avgpool_gelu",
       {"conv3d_library+epilogue", "window_reduce", "row_mean"}},  // x - x.mean((2, 3, 4), keepdim=True)
      {"depthwise_grouped_conv_relu",
       {"conv2d_depthwise", "declined: eager's aten.conv2d.default call is already the best form",
        "conv2d_library+epilogue"}},
      {"linear_softmax_sum",
       {"gemm_tiled", "row_softmax", "row_sum", "gemm_tiled", "declined: eager's aten.matmul.default call is already the best form"}},
      {"norms_instance_group_layer", {"pointwise", "row_group_norm", "row_group_norm", "row_layer_norm"}},
      {"reductions_any_dim",
       {"row_mean", "window_reduce", "window_reduce", "window_reduce", "window_reduce"}},  // min's and argmax's
                                                                                          // int64 positions too
  };
  return table;
}

// The groups that also get an alternative form (the tensor-core convolution or GEMM), by model and
// group id.
std::vector<std::string> expected_alternatives(const std::string& model, int group) {
  static const std::map<std::pair<std::string, int>, std::vector<std::string>> table = {
      {{"adaptive_global_pool", 0}, {"conv2d_tf32x3"}},
      {{"bmm_transposed_tril_logsumexp", 1}, {"gemm_tf32x3"}},  // x.triu() @ w.T
      // 128x512 -> 256: K split in 8, and the whole K on 32x32 tiles in one launch
      {{"linear_softmax_sum", 0}, {"gemm_tf32x3", "gemm_tf32x3_whole_k"}},
      {{"linear_softmax_sum", 3}, {"gemm_tf32x3", "gemm_tf32x3_whole_k"}},
      {{"conv3d_batchnorm_mish", 0}, {"conv3d_tf32x3"}},  // the bare 3-D convolution, 3x3x5 taps
      {{"conv_transpose2d_maxpool_hardtanh", 0}, {"conv_transpose2d_tf32x3"}},  // by output phase
      {{"conv_transpose3d_avgpool_gelu", 0}, {"conv_transpose3d_tf32x3"}},
      {{"depthwise_grouped_conv_relu", 1}, {"conv2d_tf32x3"}},
      {{"depthwise_grouped_conv_relu", 2}, {"conv2d_tf32x3"}},
      // The channel sum and argmax (32,768 results of 128): the window split in eight beside four
      // and four neighbouring results a lane with 16-byte loads (also min over the height)
      {{"reductions_any_dim", 1}, {"window_reduce_split8", "window_reduce_vec4"}},
      {{"reductions_any_dim", 2}, {"window_reduce_vec4"}},
      {{"reductions_any_dim", 4}, {"window_reduce_split8", "window_reduce_vec4"}},
  };
  auto it = table.find({model, group});
  return it == table.end() ? std::vector<std::string>{} : it->second;
}

std::vector<std::string> coverage_models() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(test::repo_examples_dir())) {
    const std::string stem = e.path().stem().string();
    if (e.path().extension() == ".py" &&
        fs::exists(test::fixtures_dir() / "graphs" / "coverage" / (stem + ".json")))
      names.push_back(stem);
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(CoverageModels, EveryGroupCompilesAndPassesTheStaticCheckOrIsDeclinedWithAReason) {
  NvrtcCompiler nvrtc(test::scratch_dir("coverage_nvrtc"));
  BuiltinGenerator gen;
  const auto names = coverage_models();
  // Every model of the table has its recorded graph, and every recorded one is in the table.
  ASSERT_EQ(names.size(), expected().size());
  int generated = 0, declined = 0;
  for (const auto& name : names) {
    ASSERT_TRUE(expected().count(name)) << name << " has no expectation";
    const auto& rules = expected().at(name);
    ModelGraph g = test::graph_fixture("coverage/" + name);
    ASSERT_EQ(g.groups.size(), rules.size()) << name;
    for (const auto& group : g.groups) {
      SCOPED_TRACE(fmt::format("{} group {}", name, group.id));
      const std::string& want = rules.at(static_cast<std::size_t>(group.id));
      std::vector<Candidate> all{gen.generate(g, group)};
      for (auto& alternative : gen.alternatives(g, group)) all.push_back(std::move(alternative));
      std::vector<std::string> alternative_rules;
      for (std::size_t i = 1; i < all.size(); ++i) alternative_rules.push_back(all[i].origin.rule);
      EXPECT_EQ(alternative_rules, expected_alternatives(name, group.id));
      const Candidate& primary = all.front();
      if (want.rfind("declined: ", 0) == 0) {
        ASSERT_TRUE(primary.declined.has_value()) << "expected " << want << ", got rule " << primary.origin.rule;
        EXPECT_NE(primary.declined->find(want.substr(10)), std::string::npos) << *primary.declined;
        ++declined;
        all.erase(all.begin());  // its alternatives, if any, are checked all the same
      } else {
        ASSERT_FALSE(primary.declined.has_value()) << *primary.declined;
        EXPECT_EQ(primary.origin.rule, want);
      }
      for (const auto& c : all) {
        SCOPED_TRACE("rule " + c.origin.rule);
        ASSERT_FALSE(c.declined.has_value());
        // Our validation's own check: a kernel it can judge, nothing refused, every launched kernel seen.
        StaticReport report = StaticChecker().check_candidate(c);
        EXPECT_FALSE(report.refused()) << report.refusals.front();
        int kernels = 0;
        for (const auto& s : c.plan.steps)
          if (s.type == "kernel") {
            ++kernels;
            EXPECT_NE(std::find(report.kernels.begin(), report.kernels.end(), s.kernel), report.kernels.end())
                << s.kernel;
            EXPECT_GE(s.grid[0], 1);
            EXPECT_LE(s.block[0] * s.block[1] * s.block[2], 1024);
          }
        EXPECT_GE(kernels, 1) << "a candidate of library calls alone is refused by validation";
        NvrtcResult r = nvrtc.compile(c.cuda_source, name + ".cu", "sm_90");
        EXPECT_TRUE(r.ok) << r.log;
        ++generated;
      }
    }
  }
  int declined_in_table = 0;
  for (const auto& [model, rules] : expected())
    for (const auto& r : rules) declined_in_table += r.rfind("declined: ", 0) == 0 ? 1 : 0;
  EXPECT_GE(generated, 20);
  EXPECT_EQ(declined, declined_in_table);
  EXPECT_GE(declined, 3);  // the bare library calls, x.T @ y
}

// Integer buffers: a float kernel reads an int64 buffer (the position ramp of activation_chain) through
// its own type, and a group whose result is int64 (batch norm's num_batches_tracked + 1) is computed in
// 64-bit integers, exact, instead of in float and stored through a conversion that does not exist.
TEST(CoverageModels, Int64BuffersAreReadAsInt64AndInt64CountersAreAddedAsIntegers) {
  NvrtcCompiler nvrtc(test::scratch_dir("coverage_int64"));
  ModelGraph chain = test::graph_fixture("coverage/activation_chain");
  const FusionGroup& ramp = chain.groups.back();
  Candidate c = BuiltinGenerator().generate(chain, ramp);
  ASSERT_FALSE(c.declined.has_value()) << *c.declined;
  EXPECT_NE(c.cuda_source.find("const long long* __restrict__ in_b_ramp"), std::string::npos) << c.cuda_source;
  NvrtcResult r = nvrtc.compile(c.cuda_source, "ramp.cu", "sm_90");
  EXPECT_TRUE(r.ok) << r.log;

  ModelGraph bn = test::graph_fixture("coverage/conv3d_batchnorm_mish");
  Candidate counter = BuiltinGenerator().generate(bn, bn.groups.at(1));
  ASSERT_FALSE(counter.declined.has_value()) << *counter.declined;
  EXPECT_EQ(counter.origin.rule, "pointwise_int64");
  EXPECT_NE(counter.cuda_source.find("+ 1LL;"), std::string::npos) << counter.cuda_source;
}

// min along a dimension with its indices, and argmax: one thread per result walks the reduced
// dimension and keeps the first extreme (strictly greater or smaller replaces it; a NaN replaces a
// number and then stays), and stores the position as int64 beside the value's epilogue.
TEST(CoverageModels, ArgmaxAndMinWithIndicesStoreTheFirstExtremesPositionAsInt64) {
  ModelGraph g = test::graph_fixture("coverage/reductions_any_dim");
  Candidate min = BuiltinGenerator().generate(g, g.groups.at(2));
  ASSERT_FALSE(min.declined.has_value()) << *min.declined;
  const std::string& m = min.cuda_source;
  EXPECT_NE(m.find("long long* __restrict__ out_getitem_1"), std::string::npos) << m;
  EXPECT_NE(m.find("if (nova_v < acc || (nova_v != nova_v && acc == acc)) { acc = nova_v; idx = w2; }"),
            std::string::npos) << m;
  EXPECT_NE(m.find("out_getitem_1[f] = idx;"), std::string::npos) << m;
  EXPECT_NE(m.find("reduced * 2.0f"), std::string::npos) << m;  // the values' epilogue, low * 2.0

  Candidate arg = BuiltinGenerator().generate(g, g.groups.at(4));
  ASSERT_FALSE(arg.declined.has_value()) << *arg.declined;
  const std::string& a = arg.cuda_source;
  EXPECT_NE(a.find("if (nova_v > acc || (nova_v != nova_v && acc == acc)) { acc = nova_v; idx = w1; }"),
            std::string::npos) << a;
  EXPECT_NE(a.find("out_argmax[f] = idx;"), std::string::npos) << a;
  ASSERT_EQ(arg.plan.outputs.size(), 1u);
  EXPECT_EQ(arg.plan.outputs[0].dtype, "int64");
}

// amax over (1, 3) of 32x128x32x32: 1,024 results of 4,096 elements each. One thread per result measured
// 0.10x eager (session 28, H100); a block of 256 threads per result strides over the window (its flat
// index unravelled over the reduced dimensions, the innermost contiguous across threads) and reduces
// in a fixed order, NaN propagating. Groups with short windows keep one thread per result.
TEST(CoverageModels, AReductionWithFewResultsAndLongWindowsTakesABlockPerResult) {
  ModelGraph g = test::graph_fixture("coverage/reductions_any_dim");
  Candidate wide = BuiltinGenerator().generate(g, g.groups.at(3));
  ASSERT_FALSE(wide.declined.has_value()) << *wide.declined;
  const std::string& k = wide.cuda_source;
  EXPECT_NE(k.find("for (long long t = threadIdx.x; t < 4096LL; t += 256LL) {"), std::string::npos) << k;
  EXPECT_NE(k.find("const long long w1 = (t / 32LL) % 128LL;"), std::string::npos) << k;
  EXPECT_NE(k.find("const long long w3 = (t / 1LL) % 32LL;"), std::string::npos) << k;
  EXPECT_NE(k.find("acc = nova::block_reduce<nova::warp_max>(acc, scratch, -INFINITY);"), std::string::npos) << k;
  EXPECT_EQ(wide.plan.steps.at(0).grid, (std::array<std::int64_t, 3>{1024, 1, 1}));
  EXPECT_EQ(wide.plan.steps.at(0).block, (std::array<std::int64_t, 3>{256, 1, 1}));
  // The channel sum and argmax (32,768 results of 128) do not: they take the split form (below). min over
  // the height (131,072 results of 32) keeps one thread per result.
  Candidate narrow = BuiltinGenerator().generate(g, g.groups.at(2));
  ASSERT_FALSE(narrow.declined.has_value()) << *narrow.declined;
  EXPECT_EQ(narrow.plan.steps.at(0).grid, (std::array<std::int64_t, 3>{1024, 1, 1}));
  EXPECT_EQ(narrow.plan.steps.at(0).block, (std::array<std::int64_t, 3>{128, 1, 1}));
  EXPECT_NE(narrow.cuda_source.find("for (long long w2 = 0; w2 < 32LL; ++w2) {"), std::string::npos);
}

// argmax over 128 channels (32,768 results): one thread per result measured 0.94x eager (sessions 28 and
// 29, H100), far from a copy's speed. Four threads per result now, each over a contiguous quarter of the
// window, warp s taking quarter s of the block's 32 results (loads coalesced as before); slice 0 combines the
// quarters in order with the same rule as the walk, so the first extreme's position (and the first NaN's)
// is the one a single walk finds. The channel sum takes the same form, its quarters added in a fixed order.
TEST(CoverageModels, AReductionOverOneDimensionWithFewResultsSplitsEachWindowInFour) {
  ModelGraph g = test::graph_fixture("coverage/reductions_any_dim");
  NvrtcCompiler nvrtc(test::scratch_dir("coverage_split_window"));
  for (int group : {1, 4}) {
    SCOPED_TRACE(group);
    Candidate c = BuiltinGenerator().generate(g, g.groups.at(static_cast<std::size_t>(group)));
    ASSERT_FALSE(c.declined.has_value()) << *c.declined;
    const std::string& k = c.cuda_source;
    EXPECT_EQ(c.plan.steps.at(0).grid, (std::array<std::int64_t, 3>{1024, 1, 1}));
    EXPECT_EQ(c.plan.steps.at(0).block, (std::array<std::int64_t, 3>{128, 1, 1}));
    EXPECT_NE(k.find("const long long f = blockIdx.x * 32LL + (threadIdx.x & 31);"), std::string::npos) << k;
    EXPECT_NE(k.find("for (long long w1 = nova_slice * 32LL; w1 < (nova_slice + 1) * 32LL; ++w1) {"),
              std::string::npos) << k;
    // Every thread stores its slice before the barrier; only then do the other slices leave.
    const auto store = k.find("nova_part[nova_slice][nova_lane] = acc;"), barrier = k.find("__syncthreads();"),
               leave = k.find("if (nova_slice != 0) return;");
    ASSERT_NE(store, std::string::npos);
    EXPECT_LT(store, barrier);
    EXPECT_LT(barrier, leave);
    EXPECT_EQ(k.find("return;"), leave + std::string("if (nova_slice != 0) ").size())
        << "no thread may leave before the barrier";
    NvrtcResult built = nvrtc.compile(k, fmt::format("split{}.cu", group), "sm_90");
    EXPECT_TRUE(built.ok) << built.log;
  }
  const std::string argmax = BuiltinGenerator().generate(g, g.groups.at(4)).cuda_source;
  EXPECT_NE(argmax.find("nova_part_idx[nova_slice][nova_lane] = idx;"), std::string::npos) << argmax;
  EXPECT_NE(argmax.find("for (int s = 1; s < 4; ++s) { const float nova_v = nova_part[s][nova_lane]; if (nova_v > "
                        "acc || (nova_v != nova_v && acc == acc)) { acc = nova_v; idx = nova_part_idx[s][nova_lane]; } }"),
            std::string::npos) << argmax;
  const std::string sum = BuiltinGenerator().generate(g, g.groups.at(1)).cuda_source;
  EXPECT_NE(sum.find("for (int s = 1; s < 4; ++s) acc += nova_part[s][nova_lane];"), std::string::npos) << sum;
}

// The alternative in eight slices (measured beside the four: twice the threads in flight, each walking half
// as far): 256 threads a block, eight warps over the same 32 results, combined in the same order.
TEST(CoverageModels, TheSplitWindowInEightIsOfferedBesideTheFourAndCombinesAllEightSlicesInOrder) {
  ModelGraph g = test::graph_fixture("coverage/reductions_any_dim");
  NvrtcCompiler nvrtc(test::scratch_dir("coverage_split_window8"));
  BuiltinGenerator gen;
  for (int group : {1, 4}) {
    SCOPED_TRACE(group);
    const auto alternatives = gen.alternatives(g, g.groups.at(static_cast<std::size_t>(group)));
    ASSERT_EQ(alternatives.size(), 2u);  // and the four-results-a-lane form (below)
    const Candidate& c = alternatives[0];
    ASSERT_FALSE(c.declined.has_value()) << *c.declined;
    EXPECT_EQ(c.origin.rule, "window_reduce_split8");
    const std::string& k = c.cuda_source;
    EXPECT_EQ(c.plan.steps.at(0).grid, (std::array<std::int64_t, 3>{1024, 1, 1}));
    EXPECT_EQ(c.plan.steps.at(0).block, (std::array<std::int64_t, 3>{256, 1, 1}));
    EXPECT_NE(k.find("__launch_bounds__(256)"), std::string::npos) << k;
    EXPECT_NE(k.find("__shared__ float nova_part[8][32];"), std::string::npos) << k;
    EXPECT_NE(k.find("for (long long w1 = nova_slice * 16LL; w1 < (nova_slice + 1) * 16LL; ++w1) {"),
              std::string::npos) << k;
    EXPECT_NE(k.find("for (int s = 1; s < 8; ++s)"), std::string::npos) << k;
    NvrtcResult built = nvrtc.compile(k, fmt::format("split8_{}.cu", group), "sm_90");
    EXPECT_TRUE(built.ok) << built.log;
  }
  EXPECT_NE(gen.alternatives(g, g.groups.at(4))[0].cuda_source.find("__shared__ long long nova_part_idx[8][32];"),
            std::string::npos);
  // Groups of other forms get no such alternative: the wide amax, min over the height.
  EXPECT_TRUE(gen.alternatives(g, g.groups.at(3)).empty());
  for (const auto& c : gen.alternatives(g, g.groups.at(2))) EXPECT_NE(c.origin.rule, "window_reduce_split8");
}

// Four neighbouring results a lane (rule window_reduce_vec4): where the reduced dimension is not the
// input's last, results f .. f+3 read four neighbouring elements at every step of the walk, one 16-byte
// load (a warp's load 512 contiguous bytes, the split form's 128). Eight warps over the block's 128
// results, each over a slice of the window; each result's slices folded in order with the walk's own
// step, so argmax keeps the first extreme; the epilogue and stores per result.
TEST(CoverageModels, FourNeighbouringResultsALaneReadTheWindowSixteenBytesAtATime) {
  ModelGraph g = test::graph_fixture("coverage/reductions_any_dim");
  NvrtcCompiler nvrtc(test::scratch_dir("coverage_vec4_window"));
  GenerationTarget target;
  target.window_vec4 = true;
  BuiltinGenerator gen(target);
  struct Want {
    int group;
    std::int64_t blocks;
    const char* walk;
  };
  for (const Want& want : {Want{1, 256, "for (long long w1 = nova_slice * 16LL; w1 < (nova_slice + 1) * 16LL; ++w1) {"},
                           Want{2, 1024, "for (long long w2 = nova_slice * 4LL; w2 < (nova_slice + 1) * 4LL; ++w2) {"},
                           Want{4, 256, "for (long long w1 = nova_slice * 16LL; w1 < (nova_slice + 1) * 16LL; ++w1) {"}}) {
    SCOPED_TRACE(want.group);
    Candidate c = gen.generate(g, g.groups.at(static_cast<std::size_t>(want.group)));
    ASSERT_FALSE(c.declined.has_value()) << *c.declined;
    EXPECT_EQ(c.origin.rule, "window_reduce_vec4");
    const std::string& k = c.cuda_source;
    EXPECT_EQ(c.plan.steps.at(0).grid, (std::array<std::int64_t, 3>{want.blocks, 1, 1}));
    EXPECT_EQ(c.plan.steps.at(0).block, (std::array<std::int64_t, 3>{256, 1, 1}));
    EXPECT_NE(k.find("const long long f = (blockIdx.x * 32LL + nova_lane) * 4LL;"), std::string::npos) << k;
    EXPECT_NE(k.find(want.walk), std::string::npos) << k;
    EXPECT_NE(k.find("const float4 q0 = *reinterpret_cast<const float4*>("), std::string::npos) << k;
    EXPECT_NE(k.find("const float nova_q[4] = {q0.x, q0.y, q0.z, q0.w};"), std::string::npos) << k;
    // Every thread stores its slices before the barrier; only then do the other slices leave.
    const auto store = k.find("nova_part[nova_slice][j][nova_lane] = nova_acc[j];"),
               barrier = k.find("__syncthreads();"), leave = k.find("if (nova_slice != 0) return;");
    ASSERT_NE(store, std::string::npos);
    EXPECT_LT(store, barrier);
    EXPECT_LT(barrier, leave);
    EXPECT_NE(k.find("const long long nova_fj = f + j;"), std::string::npos) << k;
    NvrtcResult built = nvrtc.compile(k, fmt::format("vec4_{}.cu", want.group), "sm_90");
    EXPECT_TRUE(built.ok) << built.log;
  }
  // argmax: the first extreme, slice by slice in order, its position stored as int64.
  const std::string argmax = gen.generate(g, g.groups.at(4)).cuda_source;
  EXPECT_NE(argmax.find("for (int s = 1; s < 8; ++s) { const float nova_v = nova_part[s][j][nova_lane]; if (nova_v > "
                        "acc || (nova_v != nova_v && acc == acc)) { acc = nova_v; idx = nova_part_idx[s][j][nova_lane]; } }"),
            std::string::npos) << argmax;
  EXPECT_NE(argmax.find("out_argmax[nova_fj] = idx;"), std::string::npos) << argmax;
  // The sum: slices added in a fixed order.
  const std::string sum = gen.generate(g, g.groups.at(1)).cuda_source;
  EXPECT_NE(sum.find("for (int s = 1; s < 8; ++s) acc += nova_part[s][j][nova_lane];"), std::string::npos) << sum;
  // Not where the walk reaches the last dimension (amax over (1, 3)) or for pooling.
  EXPECT_TRUE(gen.generate(g, g.groups.at(3)).declined.has_value());
}

// x - x.mean(dims, keepdim=True) over the last dimensions: the row is read once into registers, its
// mean taken, and the epilogue computes every element from its register and the mean: one read and
// one write of the tensor, where the window rule declined a result that grows back to full size.
TEST(CoverageModels, AMeanBroadcastBackOverItsRowsIsOneRowKernel) {
  ModelGraph g = test::graph_fixture("coverage/reductions_any_dim");
  Candidate c = BuiltinGenerator().generate(g, g.groups.at(0));
  ASSERT_FALSE(c.declined.has_value()) << *c.declined;
  EXPECT_EQ(c.origin.rule, "row_mean");
  const std::string& k = c.cuda_source;
  EXPECT_NE(k.find("const float reduced = acc / 1024.0f;"), std::string::npos) << k;
  EXPECT_NE(k.find("const float v0 = x0[0] - reduced;"), std::string::npos) << k;
  // x is read once: two 16-byte loads per thread, none in the epilogue.
  std::size_t loads = 0;
  for (std::size_t p = 0; (p = k.find("in_x", p)) != std::string::npos; ++p) ++loads;
  EXPECT_EQ(loads, 3u) << k;  // the parameter and the two loads

  ModelGraph t = test::graph_fixture("coverage/conv_transpose3d_avgpool_gelu");
  Candidate centred = BuiltinGenerator().generate(t, t.groups.at(2));
  ASSERT_FALSE(centred.declined.has_value()) << *centred.declined;
  EXPECT_EQ(centred.origin.rule, "row_mean");
}

// bmm(q, k.permute(0, 2, 1)) * 0.125, a tril mask, then logsumexp over each row: intake puts the
// logsumexp into the product's group (nothing else reads the scores), and one kernel walks each 64-row
// block's column tiles on tensor cores, folds every staged tile into a running maximum and sum of
// exponentials per row, and stores one value per row: the 64 x 256 x 256 scores never go to memory.
TEST(CoverageModels, AGemmWhoseRowsAreReducedIsOneKernelThatNeverStoresTheProduct) {
  NvrtcCompiler nvrtc(test::scratch_dir("coverage_gemm_rows"));
  ModelGraph g = test::graph_fixture("coverage/bmm_transposed_tril_logsumexp");
  ASSERT_EQ(g.groups.size(), 2u);
  Candidate c = BuiltinGenerator().generate(g, g.groups.at(0));
  ASSERT_FALSE(c.declined.has_value()) << *c.declined;
  EXPECT_EQ(c.origin.rule, "gemm_row_logsumexp");
  ASSERT_EQ(c.plan.steps.size(), 1u);
  ASSERT_TRUE(c.plan.temps.empty());
  ASSERT_EQ(c.plan.outputs.size(), 1u);
  EXPECT_EQ(c.plan.outputs[0].shape, (std::vector<std::int64_t>{64, 256}));
  EXPECT_EQ(c.plan.steps[0].grid, (std::array<std::int64_t, 3>{4, 1, 64}));
  EXPECT_EQ(c.plan.steps[0].shared_bytes, 65536 + 64 * 66 * 4);
  const std::string& k = c.cuda_source;
  EXPECT_NE(k.find("for (int n0 = 0; n0 < 256; n0 += 64)"), std::string::npos) << k;
  EXPECT_NE(k.find("tile.mainloop_at(in_q + bat * 16384LL, 64, in_k + bat * 16384LL, 64, 64, m0, n0, nova_smem);"),
            std::string::npos) << k;
  EXPECT_NE(k.find("((col - row) <= 0LL) ? 1.0f : 0.0f"), std::string::npos) << k;  // the mask per element
  EXPECT_NE(k.find("row_m + logf(row_s)"), std::string::npos) << k;
  EXPECT_NE(k.find("out_logsumexp[bat * 256LL + row]"), std::string::npos) << k;
  EXPECT_TRUE(StaticChecker().check_candidate(c).refusals.empty());
  NvrtcResult r = nvrtc.compile(c.cuda_source, "gemm_rows.cu", "sm_90");
  EXPECT_TRUE(r.ok) << r.log;
  // Under the tensor-core target it is the same kernel: no alternative beside it.
  EXPECT_TRUE(BuiltinGenerator().alternatives(g, g.groups.at(0)).empty());
}

}  // namespace
}  // namespace nova
