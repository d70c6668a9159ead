#pragma once
// Plain value types the project store reads and writes besides candidate versions: the model with
// its graph, traces, fusion groups, build logs, validation/benchmark results and exports. They are
// grouped here because each is a handful of fields with no behaviour.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nova {

struct ModelRecord {
  std::string path;        // the model file as the user chose it
  std::string source;      // its text when it was imported
  std::string graph_json;  // ModelGraph as JSON
};

struct TraceRecord {
  int64_t id = 0;
  std::string kind;  // "cupti", "nsys", ...
  std::string path;  // external file, if the trace is large
  std::vector<uint8_t> data;
  std::string created_at;
};

struct FusionGroupRecord {
  int64_t id = 0;
  std::string name;
  std::string ops_json;  // the graph nodes it replaces and their call signature
  // The builtin generator revision that last generated the group (also when it declined); 0 unknown.
  int generator_revision = 0;
};

struct BuildLogRecord {
  int64_t id = 0;
  int64_t version_id = 0;
  std::string tool;  // "nvrtc" or "nvcc"
  bool ok = false;
  std::string log;
  std::string created_at;
};

struct ResultRecord {
  int64_t id = 0;
  int64_t version_id = 0;
  std::string kind;  // "validation" or "benchmark"
  std::string json;  // environment, method and raw samples
  std::string created_at;
};

// A whole-model check of an exported package (ModelCheckResult as JSON).
struct ModelCheckRecord {
  int64_t id = 0;
  std::string package;
  std::string package_path;
  bool passed = false;
  std::string json;
  std::string created_at;
};

struct ExportRecord {
  int64_t id = 0;
  int64_t version_id = 0;
  std::string path;
  std::string created_at;
};

}  // namespace nova
