#pragma once
// Decodes a .novatrace file (core/trace/injection/trace_format.h) into a Trace: demangles kernel
// names, pairs NVTX range starts with their ends, sorts activities by start, and turns dropped
// records or a truncated file into warnings rather than silence. Used by ProfileRunner, the CLI,
// the studio and the fixture tests.
#include <filesystem>
#include <istream>
#include <string>

#include "core/trace/trace.h"

namespace nova {

class TraceReader {
 public:
  // Throws std::runtime_error naming the file when it is missing, not a trace, or of a newer
  // major version. A file cut short keeps what was complete and says so in Trace::warnings.
  static Trace read(const std::filesystem::path& path);
  static Trace decode(const std::string& bytes, const std::string& what = "trace");
  // Reads record by record: a million-kernel trace never sits in memory twice.
  static Trace decode(std::istream& in, const std::string& what);
  // abi::__cxa_demangle, or the name unchanged where it is not a mangled C++ name.
  static std::string demangle(const std::string& name);
};

}  // namespace nova
