#include "core/build/diagnostics.h"

#include <regex>
#include <sstream>

namespace nova {

std::string to_string(DiagnosticSeverity severity) {
  switch (severity) {
    case DiagnosticSeverity::error:
      return "error";
    case DiagnosticSeverity::warning:
      return "warning";
    case DiagnosticSeverity::note:
      return "note";
  }
  return "error";
}

namespace {

DiagnosticSeverity severity_of(const std::string& word) {
  if (word.starts_with("warning")) return DiagnosticSeverity::warning;
  if (word == "note" || word == "remark" || word == "Remark") return DiagnosticSeverity::note;
  return DiagnosticSeverity::error;  // error, fatal error, catastrophic error
}

}  // namespace

std::vector<Diagnostic> parse_diagnostics(std::string_view log) {
  // EDG front end (NVRTC, nvcc): file(line): severity[ #number-D]: message
  static const std::regex edg(
      R"(^(.+?)\((\d+)\): (error|warning|remark|Remark|note|catastrophic error|fatal error)( #[0-9]+(-D)?)?: (.*)$)");
  // gcc, clang, ptxas-style host lines: file:line[:column]: severity: message
  static const std::regex gnu(R"(^(.+?):(\d+):(?:(\d+):)? (error|warning|note|fatal error): (.*)$)");
  // EDG continuation lines of the previous diagnostic.
  static const std::regex continuation(R"(^\s+(detected during|instantiation of|required from)\b.*$)");

  std::vector<Diagnostic> out;
  std::smatch m;
  std::istringstream lines{std::string(log)};
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (std::regex_match(line, m, edg)) {
      out.push_back({m[1], std::stoi(m[2]), 0, severity_of(m[3]), m[6]});
    } else if (std::regex_match(line, m, gnu)) {
      out.push_back({m[1], std::stoi(m[2]), m[3].matched ? std::stoi(m[3]) : 0, severity_of(m[4]), m[5]});
    } else if (!out.empty() && std::regex_match(line, continuation)) {
      auto first = line.find_first_not_of(" \t");
      out.back().message += "\n" + line.substr(first);
    }
  }
  return out;
}

}  // namespace nova
