#pragma once
// Chrome trace JSON (the Trace Event Format) that Perfetto and chrome://tracing open: one process
// per device, one thread per stream, plus an "ops" thread with the attributed graph-node spans and
// an "NVTX" thread where markers arrived. Kernel events carry grid, block, registers, shared memory,
// correlation id and node id in their args.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/graph/model_graph.h"
#include "core/trace/attribution.h"
#include "core/trace/trace.h"

namespace nova {

class ChromeTraceExport {
 public:
  static nlohmann::json to_json(const Trace& trace, const AttributionResult& attribution,
                                const ModelGraph& graph);
  // Writes atomically (temp file + rename). Throws std::runtime_error naming the file on failure.
  static void write(const std::filesystem::path& path, const Trace& trace,
                    const AttributionResult& attribution, const ModelGraph& graph);
  static constexpr int kOpsThread = 1'000'000;  // tid of the op row (stream ids stay below it)
  static constexpr int kNvtxThread = 1'000'001;
};

}  // namespace nova
