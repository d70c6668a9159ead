#pragma once
// Where each profiled iteration begins on the GPU. The trace marks an iteration when the host starts
// it (Trace::iterations, host time), but the host runs ahead of the GPU: on the H100, mlp_block's 20
// iterations were all launched within the first 1.5 ms of a 28 ms trace, so boundaries drawn at host
// time over the GPU rows fell among the first iterations' kernels. An iteration's GPU start is the
// start of the first GPU activity it launched, found
// - where the trace holds the launch calls (runtime/driver API records share correlation ids with
//   the activities): the first activity launched at or after the iteration's host mark;
// - otherwise (nova profile records no API calls, to keep its overhead low) by launch order: the
//   traced iterations run the same model, so when the window's activities split into equal runs, by
//   correlation id, whose graph nodes repeat the same sequence, iteration k begins run k.
// The timeline draws these.
#include <cstdint>
#include <utility>
#include <vector>

#include "core/trace/trace.h"

namespace nova {

class GpuIterations {
 public:
  // (GPU time in ns, iteration index) for each iteration whose launches the trace holds, in index
  // order. With launch calls, an iteration with no GPU activity launched after its mark is left out;
  // without them, nothing is returned unless every traced iteration's run is found.
  static std::vector<std::pair<std::uint64_t, std::uint64_t>> starts(const Trace& trace);
};

}  // namespace nova
