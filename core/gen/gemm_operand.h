#pragma once
// An operand of the tensor-core GEMM as its kernel reads it: a group input at strides (the input
// itself, or a chain of views of it: transpose, permute, .T, a reshape of contiguous data), and
// optionally a triangular mask (triu / tril applied last), so that the kernel reads the input in
// place instead of a pass that writes the operand out first. Anything else inside the group is a
// computed operand, which the rule materializes first.
#include <cstdint>
#include <string>
#include <vector>

#include "core/gen/group_context.h"

namespace nova {

struct GemmOperand {
  enum class Mask { none, upper, lower };  // torch.triu / torch.tril of the operand

  std::string input;                        // the group input read ("" where computed)
  bool computed = false;                    // not a view of an input: materialized first
  std::vector<std::int64_t> shape, strides;  // the operand as the product reads it, in elements of `input`
                                             // (a computed operand has none: it is materialized contiguous)
  Mask mask = Mask::none;
  std::int64_t diagonal = 0;                // the mask's diagonal argument

  // Follows `tensor` back through the group's view ops to a group input (strides derived from the
  // input's contiguous layout, which is how the kernel receives it), taking a triu / tril as the
  // last op into `mask`. Where the chain has any other op, the operand is `computed`.
  static GemmOperand resolve(const GroupContext& ctx, const std::string& tensor);

  // The batch dimensions (all but the last two) as one with a single stride: returns it (0 where there
  // are none), or -1 where they do not collapse.
  std::int64_t batch_stride() const;
  // Every dimension but the last as rows of one matrix (a linear layer's input): the stride from one
  // row to the next, or -1 where they do not collapse.
  std::int64_t row_stride() const;

  // How the tensor-core tile reads this operand in place as B: a linear weight (`weight`, [N, K]) or
  // [..., K, N] with k contiguous (the tile's [N, K] form) or n contiguous (its k-major form: `kn`).
  // Sets `kn` and the leading dimension `ld`; false where B is contiguous along neither.
  bool b_layout(bool weight, bool& kn, std::int64_t& ld) const;

 private:
  // The first `dims` dimensions as one: its stride, or -1.
  std::int64_t merged_stride(std::size_t dims) const;
};

}  // namespace nova
