// LineDiff against golden alignments: padding on the shorter side, changed pairs with their
// intra-line ranges, hunks for next/previous change, and the unified text.
#include "core/diff/line_diff.h"

#include <fmt/format.h>

#include <gtest/gtest.h>

namespace nova {
namespace {

// One line per row: kind, left and right line numbers ("-" for padding), and the texts, with the
// changed byte ranges bracketed.
std::string render(const LineDiff& diff) {
  auto mark = [](const std::string& text, const std::vector<CharRange>& ranges) {
    std::string out;
    size_t pos = 0;
    for (const auto& r : ranges) {
      out += text.substr(pos, r.start - pos) + "[" + text.substr(r.start, r.length) + "]";
      pos = r.start + r.length;
    }
    return out + text.substr(std::min(pos, text.size()));
  };
  auto num = [](int n) { return n ? std::to_string(n) : std::string("-"); };
  std::string out;
  for (const auto& row : diff.rows()) {
    const char* kind = row.kind == DiffRowKind::equal     ? "="
                       : row.kind == DiffRowKind::changed ? "~"
                       : row.kind == DiffRowKind::added   ? "+"
                                                          : "-";
    out += fmt::format("{} {:>2} {:>2} | {} | {}\n", kind, num(row.left_line), num(row.right_line),
                       mark(row.left_text, row.left_changes), mark(row.right_text, row.right_changes));
  }
  return out;
}

TEST(LineDiff, IdenticalTextsHaveNoHunks) {
  LineDiff d("a\nb\n", "a\nb\n");
  EXPECT_TRUE(d.identical());
  EXPECT_EQ(render(d), "=  1  1 | a | a\n=  2  2 | b | b\n");
  EXPECT_FALSE(d.next_change(-1));
}

TEST(LineDiff, AddedLinesArePaddedOnTheLeft) {
  LineDiff d("a\nd\n", "a\nb\nc\nd\n");
  EXPECT_EQ(render(d),
            "=  1  1 | a | a\n"
            "+  -  2 |  | b\n"
            "+  -  3 |  | c\n"
            "=  2  4 | d | d\n");
}

TEST(LineDiff, RemovedLinesArePaddedOnTheRight) {
  LineDiff d("a\nb\nc\n", "c\n");
  EXPECT_EQ(render(d),
            "-  1  - | a | \n"
            "-  2  - | b | \n"
            "=  3  1 | c | c\n");
}

TEST(LineDiff, ChangedPairsMarkTheCharactersThatDiffer) {
  LineDiff d("int idx = blockIdx.x;\nreturn;\n", "int idx = blockIdx.y;\nint extra;\nreturn;\n");
  EXPECT_EQ(render(d),
            "~  1  1 | int idx = blockIdx.[x]; | int idx = blockIdx.[y];\n"
            "+  -  2 |  | int extra;\n"
            "=  2  3 | return; | return;\n");
}

TEST(LineDiff, UnrelatedLinesAreMarkedWhole) {
  LineDiff d("  float v = x[i];\n", "  __syncthreads();\n");
  EXPECT_EQ(render(d), "~  1  1 |   [float v = x[i];] |   [__syncthreads();]\n");
}

TEST(LineDiff, HunksDriveNextAndPreviousChange) {
  LineDiff d("1\n2\n3\n4\n5\n6\n", "1\nX\n3\n4\n5\nY\nZ\n");
  ASSERT_EQ(d.hunks().size(), 2u);
  EXPECT_EQ(d.hunks()[0].first_row, 1);
  EXPECT_EQ(d.hunks()[1].first_row, 5);
  EXPECT_EQ(d.hunks()[1].last_row, 6);
  EXPECT_EQ(d.next_change(-1), 1);
  EXPECT_EQ(d.next_change(1), 5);
  EXPECT_FALSE(d.next_change(5));
  EXPECT_EQ(d.previous_change(5), 1);
  EXPECT_FALSE(d.previous_change(1));
}

TEST(LineDiff, UnifiedTextHasHeadersHunksAndContext) {
  LineDiff d("a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\nd\nE\nf\ng\nh\n");
  EXPECT_EQ(d.unified("v1.cu", "v2.cu"),
            "--- v1.cu\n+++ v2.cu\n"
            "@@ -2,7 +2,7 @@\n"
            " b\n c\n d\n-e\n+E\n f\n g\n h\n");
}

TEST(LineDiff, SplitsLinesWithoutATrailingEmptyOne) {
  EXPECT_EQ(LineDiff::split_lines("a\r\nb"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(LineDiff::split_lines("a\n\n"), (std::vector<std::string>{"a", ""}));
  EXPECT_TRUE(LineDiff::split_lines("").empty());
}

}  // namespace
}  // namespace nova
