#include "core/project/candidate_version.h"

#include <fmt/format.h>

#include "core/project/project_error.h"

namespace nova {

std::string to_string(OriginKind kind) {
  switch (kind) {
    case OriginKind::builtin:
      return "builtin";
    case OriginKind::llm:
      return "llm";
    case OriginKind::user_edit:
      return "user_edit";
  }
  return "builtin";
}

OriginKind origin_kind_from_string(const std::string& text) {
  if (text == "builtin") return OriginKind::builtin;
  if (text == "llm") return OriginKind::llm;
  if (text == "user_edit") return OriginKind::user_edit;
  throw ProjectError(fmt::format("unknown version origin \"{}\"", text));
}

std::string to_string(BuildStatus status) {
  switch (status) {
    case BuildStatus::not_built:
      return "not_built";
    case BuildStatus::built:
      return "built";
    case BuildStatus::failed:
      return "failed";
  }
  return "not_built";
}

BuildStatus build_status_from_string(const std::string& text) {
  if (text == "not_built") return BuildStatus::not_built;
  if (text == "built") return BuildStatus::built;
  if (text == "failed") return BuildStatus::failed;
  throw ProjectError(fmt::format("unknown build status \"{}\"", text));
}

std::string VersionOrigin::describe() const {
  switch (kind) {
    case OriginKind::builtin:
      return rule.empty() ? "builtin" : fmt::format("builtin: {}", rule);
    case OriginKind::llm:
      return fmt::format("llm: {}/{} round {}", provider, model, round);
    case OriginKind::user_edit:
      return "user edit";
  }
  return {};
}

std::string CandidateVersion::export_refusal() const {
  if (correct == false) return fmt::format("v{} failed validation", id);
  if (verdict == VerdictKind::declined || verdict == VerdictKind::tie)
    return fmt::format("v{} cannot be exported: {}", id, verdict_sentence);
  return {};
}

}  // namespace nova
