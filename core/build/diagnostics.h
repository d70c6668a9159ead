#pragma once
// Compiler diagnostics read from a build log: NVRTC and nvcc front-end lines
// ("kernel.cu(12): error: identifier \"x\" is undefined") and gcc/clang/host-compiler lines
// ("file.cpp:12:5: error: ..."), with warnings, notes and remarks. The editor turns them into
// margin markers and inline annotations; the build module stores the raw log beside them.
#include <string>
#include <string_view>
#include <vector>

namespace nova {

enum class DiagnosticSeverity { error, warning, note };

struct Diagnostic {
  std::string file;
  int line = 0;    // 1-based
  int column = 0;  // 1-based; 0 when the tool does not say
  DiagnosticSeverity severity = DiagnosticSeverity::error;
  std::string message;
  bool operator==(const Diagnostic&) const = default;
};

std::string to_string(DiagnosticSeverity severity);

// Every diagnostic of `log` that names a line, in log order. Lines that are not diagnostics (source
// echoes, carets, "1 error detected ...") are skipped; a diagnostic's indented continuation lines
// ("detected during instantiation of ...") are appended to its message.
std::vector<Diagnostic> parse_diagnostics(std::string_view log);

}  // namespace nova
