#pragma once
// The group's outputs as views of the anchor's result: where every op after the anchor only moves
// data without copying it (split, view/reshape where PyTorch would view, transpose, permute, slice,
// select, squeeze/unsqueeze), each output is the anchor's result read at an offset with strides. A
// kernel that computes the anchor can then store each element straight into every output holding
// it (the tensor-core GEMM does this for the attention's head split), with no epilogue pass.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/gen/group_context.h"

namespace nova {

// One output: element (i0, i1, ...) is the anchor result's element offset + sum(ik * strides[k]),
// counted in the result's contiguous storage.
struct AnchorView {
  std::vector<std::int64_t> sizes, strides;
  std::int64_t offset = 0;
  // The output is a reshape that copies (a reshape of a transposed view: the attention's heads merged
  // back): its elements are this view's in their logical order, so `sizes` are the view's, not the
  // output's (same count, same order). Nothing may view it further.
  bool copied = false;
};

// One view per group output, in output order; nullopt where an op after the anchor computes or
// copies (but a reshape that copies as an output's last op: AnchorView::copied), an output is not reached from the anchor, a view overlaps itself (an element held twice in
// one output: expand), or the strides recorded at capture disagree with the ones derived here.
std::optional<std::vector<AnchorView>> anchor_views(const GroupContext& ctx);

// C statements (each line prefixed by `indent` spaces) that store `value` into every output holding
// the result's element at (row, col) (C variables of the kernel; the result is rows of `columns`
// elements), decoding its coordinates in each view: from the row and the column apart where each
// dimension steps through rows or within one (cheap 32-bit arithmetic), else from the flat index.
// `outputs` are the kernel's output pointers, `types` their storage types, in output order.
std::string store_into_views(const std::vector<AnchorView>& views, const std::vector<std::string>& outputs,
                             const std::vector<std::string>& types, std::int64_t columns,
                             const std::string& value, int indent);

}  // namespace nova
