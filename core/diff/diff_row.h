#pragma once
// Plain results of a line diff (LineDiff): one aligned row per displayed line pair, the byte ranges
// changed inside a line, and the hunks that next/previous-change walk. Read by the diff view.
#include <string>
#include <vector>

namespace nova {

enum class DiffRowKind { equal, changed, added, removed };

// Bytes [start, start + length) of a line.
struct CharRange {
  int start = 0;
  int length = 0;
  bool operator==(const CharRange&) const = default;
};

// One row of the side-by-side view. A line number of 0 means padding on that side (an added row has
// no left line, a removed row no right line).
struct DiffRow {
  DiffRowKind kind = DiffRowKind::equal;
  int left_line = 0;
  int right_line = 0;
  std::string left_text;
  std::string right_text;
  std::vector<CharRange> left_changes;
  std::vector<CharRange> right_changes;
};

// A run of consecutive non-equal rows, [first_row, last_row], 0-based row indices.
struct DiffHunk {
  int first_row = 0;
  int last_row = 0;
};

}  // namespace nova
