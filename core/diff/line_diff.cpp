#include "core/diff/line_diff.h"

#include <algorithm>
#include <sstream>

#include <dtl/dtl.hpp>

namespace nova {
namespace {

// Byte ranges that differ between two lines, by a character diff (dtl again). When the two lines
// share less than a third of their characters the pairing is coincidental, and character-level marks
// would be noise: the whole non-blank content is marked instead.
void mark_changes(DiffRow& row) {
  const std::string& a = row.left_text;
  const std::string& b = row.right_text;
  dtl::Diff<char, std::string> diff(a, b);
  diff.compose();
  auto add_index = [](std::vector<CharRange>& ranges, int index) {
    if (!ranges.empty() && ranges.back().start + ranges.back().length == index)
      ++ranges.back().length;
    else
      ranges.push_back({index, 1});
  };
  size_t common = 0;
  for (const auto& [ch, info] : diff.getSes().getSequence()) {
    if (info.type == dtl::SES_DELETE)
      add_index(row.left_changes, static_cast<int>(info.beforeIdx - 1));
    else if (info.type == dtl::SES_ADD)
      add_index(row.right_changes, static_cast<int>(info.afterIdx - 1));
    else
      ++common;
  }
  if (common * 3 < std::max(a.size(), b.size())) {
    auto whole = [](const std::string& s) -> std::vector<CharRange> {
      size_t first = s.find_first_not_of(" \t");
      if (first == std::string::npos) return {};
      size_t last = s.find_last_not_of(" \t");
      return {CharRange{static_cast<int>(first), static_cast<int>(last - first + 1)}};
    };
    row.left_changes = whole(a);
    row.right_changes = whole(b);
  }
}

}  // namespace

std::vector<std::string> LineDiff::split_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.emplace_back(line);
    start = end + 1;
  }
  return lines;
}

LineDiff::LineDiff(std::string_view left, std::string_view right)
    : left_(split_lines(left)), right_(split_lines(right)) {
  dtl::Diff<std::string, std::vector<std::string>> diff(left_, right_);
  diff.onHuge();  // bounded memory on long files
  diff.compose();

  // Between two common lines dtl reports a block of deletions and additions; pair them up as changed
  // rows, and pad the longer side.
  std::vector<long long> removed, added;
  auto flush = [&] {
    size_t paired = std::min(removed.size(), added.size());
    for (size_t i = 0; i < std::max(removed.size(), added.size()); ++i) {
      DiffRow row;
      if (i < removed.size()) {
        row.left_line = static_cast<int>(removed[i]);
        row.left_text = left_[removed[i] - 1];
      }
      if (i < added.size()) {
        row.right_line = static_cast<int>(added[i]);
        row.right_text = right_[added[i] - 1];
      }
      row.kind = i < paired           ? DiffRowKind::changed
                 : i < removed.size() ? DiffRowKind::removed
                                      : DiffRowKind::added;
      if (row.kind == DiffRowKind::changed) mark_changes(row);
      rows_.push_back(std::move(row));
    }
    removed.clear();
    added.clear();
  };
  for (const auto& [line, info] : diff.getSes().getSequence()) {
    if (info.type == dtl::SES_DELETE) {
      removed.push_back(info.beforeIdx);
    } else if (info.type == dtl::SES_ADD) {
      added.push_back(info.afterIdx);
    } else {
      flush();
      DiffRow row;
      row.kind = DiffRowKind::equal;
      row.left_line = static_cast<int>(info.beforeIdx);
      row.right_line = static_cast<int>(info.afterIdx);
      row.left_text = row.right_text = line;
      rows_.push_back(std::move(row));
    }
  }
  flush();

  for (int i = 0; i < static_cast<int>(rows_.size()); ++i) {
    if (rows_[i].kind == DiffRowKind::equal) continue;
    if (!hunks_.empty() && hunks_.back().last_row == i - 1)
      hunks_.back().last_row = i;
    else
      hunks_.push_back({i, i});
  }
}

std::optional<int> LineDiff::next_change(int row) const {
  for (const auto& h : hunks_)
    if (h.first_row > row) return h.first_row;
  return std::nullopt;
}

std::optional<int> LineDiff::previous_change(int row) const {
  for (auto it = hunks_.rbegin(); it != hunks_.rend(); ++it)
    if (it->first_row < row) return it->first_row;
  return std::nullopt;
}

std::string LineDiff::unified(const std::string& left_name, const std::string& right_name) const {
  std::ostringstream out;
  out << "--- " << left_name << "\n+++ " << right_name << "\n";
  if (identical()) return out.str();
  dtl::Diff<std::string, std::vector<std::string>> diff(left_, right_);
  diff.onHuge();
  diff.compose();
  diff.composeUnifiedHunks();
  diff.printUnifiedFormat(out);
  return out.str();
}

}  // namespace nova
