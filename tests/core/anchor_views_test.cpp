// The group's outputs as views of the anchor's result (core/gen/anchor_views.h): derived from the ops
// after the anchor and checked against the strides recorded when the graph was captured on the GPU
// box; anything that computes, copies or overlaps is refused.
#include "core/gen/anchor_views.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "support/graph_fixtures.h"

namespace nova {
namespace {

TEST(AnchorViews, TheAttentionHeadSplitIsThreeStridedViewsOfTheProjection) {
  ModelGraph tiny = test::graph_fixture("tiny_transformer_block");
  GroupContext ctx(tiny, tiny.groups.at(1), {});  // linear -> split in 3 -> view -> transpose (k: twice)
  auto views = anchor_views(ctx);
  ASSERT_TRUE(views.has_value());
  ASSERT_EQ(views->size(), 3u);
  // q: [8, 8, 256, 64] from column 0; v: from column 1024; k transposed: [8, 8, 64, 256] from 512.
  EXPECT_EQ((*views)[0].sizes, (std::vector<std::int64_t>{8, 8, 256, 64}));
  EXPECT_EQ((*views)[0].strides, (std::vector<std::int64_t>{393216, 64, 1536, 1}));
  EXPECT_EQ((*views)[0].offset, 0);
  EXPECT_EQ((*views)[1].strides, (std::vector<std::int64_t>{393216, 64, 1536, 1}));
  EXPECT_EQ((*views)[1].offset, 1024);
  EXPECT_EQ((*views)[2].sizes, (std::vector<std::int64_t>{8, 8, 64, 256}));
  EXPECT_EQ((*views)[2].strides, (std::vector<std::int64_t>{393216, 64, 1, 1536}));
  EXPECT_EQ((*views)[2].offset, 512);

  // The store decodes the result's row (batch, position) and column (head, feature) apart.
  std::string code = store_into_views(*views, ctx.output_names, {"float", "float", "float"}, 1536, "v", 2);
  EXPECT_NE(code.find("unsigned rest_col = unsigned(col - 512);"), std::string::npos) << code;
  EXPECT_NE(code.find("const unsigned c0 = rest_row / 256u;"), std::string::npos) << code;
  EXPECT_NE(code.find("const unsigned c1 = rest_col / 64u;"), std::string::npos) << code;
  EXPECT_NE(code.find("out_transpose_3[c0 * 131072LL + c1 * 16384LL + c2 * 256LL + c3]"), std::string::npos)
      << code;
}

// The attention output's head merge (transpose, then a reshape of the non-contiguous result, which
// copies): the output holds the transposed view's elements in their logical order, so its view is the
// transpose's, marked copied, and each element is stored at its place in the merged output.
TEST(AnchorViews, AReshapeThatCopiesAsTheLastOpStoresTheViewInItsLogicalOrder) {
  ModelGraph tiny = test::graph_fixture("tiny_transformer_block");
  GroupContext ctx(tiny, tiny.groups.at(4), {});  // matmul [8, 8, 256, 64] -> transpose(1, 2) -> reshape
  auto views = anchor_views(ctx);
  ASSERT_TRUE(views.has_value());
  ASSERT_EQ(views->size(), 1u);
  EXPECT_TRUE((*views)[0].copied);
  EXPECT_EQ((*views)[0].sizes, (std::vector<std::int64_t>{8, 256, 8, 64}));
  EXPECT_EQ((*views)[0].strides, (std::vector<std::int64_t>{131072, 64, 16384, 1}));
  std::string code = store_into_views(*views, ctx.output_names, {"float"}, 64, "v", 2);
  EXPECT_NE(code.find("out_reshape[c0 * 131072LL + c1 * 512LL + c2 * 64LL + c3]"), std::string::npos) << code;
}

TEST(AnchorViews, RefusesOpsThatComputeCopyOrDisagreeWithTheCapture) {
  ModelGraph tiny = test::graph_fixture("tiny_transformer_block");
  // A residual add after the projection computes: not a view.
  EXPECT_FALSE(anchor_views(GroupContext(tiny, tiny.groups.at(8), {})).has_value());
  // A reshape that copies can only be an output's last op: nothing views it further, not even a
  // made-up split of the merged heads by positions.
  ModelGraph viewed_copy = tiny;
  GraphNode extra = *std::find_if(viewed_copy.nodes.begin(), viewed_copy.nodes.end(),
                                  [](const GraphNode& n) { return n.target == "aten.reshape.default" && n.id == 18; });
  ASSERT_EQ(extra.outputs.at(0).name, "reshape");
  extra.id = 1000;
  extra.target = "aten.split.Tensor";
  extra.args = {{"self", "reshape", nullptr}, {"split_size", "", 128}, {"dim", "", 1}};
  extra.outputs = {{"part0", {8, 128, 512}, {131072, 512, 1}, "float32"},
                   {"part1", {8, 128, 512}, {131072, 512, 1}, "float32"}};
  viewed_copy.nodes.push_back(extra);
  FusionGroup& merge = viewed_copy.groups.at(4);
  merge.nodes.push_back(extra.id);
  merge.outputs = {"part0", "part1"};
  EXPECT_FALSE(anchor_views(GroupContext(viewed_copy, merge, {})).has_value());
  // A capture whose recorded strides differ from the derived ones (here: edited) is not trusted.
  ModelGraph edited = tiny;
  for (auto& n : edited.nodes)
    if (n.target == "aten.transpose.int" && n.outputs.at(0).name == "transpose") n.outputs[0].stride[2] = 512;
  EXPECT_FALSE(anchor_views(GroupContext(edited, edited.groups.at(1), {})).has_value());
}

}  // namespace
}  // namespace nova
