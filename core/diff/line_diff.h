#pragma once
// A line diff of two texts computed by dtl (an O(ND) diff library), turned into what a side-by-side
// view needs: aligned rows with padding, changed character ranges inside changed line pairs, hunks
// for next/previous change, and a unified-diff text. No Qt; used by the diff view and the CLI.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diff/diff_row.h"

namespace nova {

class LineDiff {
 public:
  LineDiff(std::string_view left, std::string_view right);

  const std::vector<DiffRow>& rows() const { return rows_; }
  const std::vector<DiffHunk>& hunks() const { return hunks_; }
  bool identical() const { return hunks_.empty(); }

  // The first row of the next (previous) hunk strictly after (before) `row`; nullopt when none.
  std::optional<int> next_change(int row) const;
  std::optional<int> previous_change(int row) const;

  // "--- left_name\n+++ right_name\n@@ -a,b +c,d @@\n ..." with three lines of context.
  std::string unified(const std::string& left_name, const std::string& right_name) const;

  // Lines without their '\n' (and a trailing '\r'); a final newline adds no empty line.
  static std::vector<std::string> split_lines(std::string_view text);

 private:
  std::vector<std::string> left_, right_;
  std::vector<DiffRow> rows_;
  std::vector<DiffHunk> hunks_;
};

}  // namespace nova
