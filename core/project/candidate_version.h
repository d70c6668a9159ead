#pragma once
// One stored version of a fusion group's kernel: its CUDA source and launch plan (never changed once
// stored), where it came from (builtin rule and generator revision, LLM round, or a user edit of a
// parent version) and what is known about it (build status, correctness, speedup, benchmark verdict,
// chosen for export). Shown by the version tree and editor.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/verify/benchmark_verdict.h"

namespace nova {

enum class OriginKind { builtin, llm, user_edit };
enum class BuildStatus { not_built, built, failed };

std::string to_string(OriginKind kind);
OriginKind origin_kind_from_string(const std::string& text);
std::string to_string(BuildStatus status);
BuildStatus build_status_from_string(const std::string& text);

// Where a version came from. `rule` for builtin; provider/model/round for llm; nothing more for a
// user edit (its parent is CandidateVersion::parent_id).
struct VersionOrigin {
  OriginKind kind = OriginKind::builtin;
  std::string rule;
  std::string provider;
  std::string model;
  int round = 0;
  std::string describe() const;  // "builtin: fuse_epilogue", "llm: openai/gpt-5 round 2", "user edit"
};

struct CandidateVersion {
  int64_t id = 0;
  int64_t group_id = 0;
  std::optional<int64_t> parent_id;
  VersionOrigin origin;
  std::string source;
  // How to run it: the generator's Candidate as JSON (core/gen/candidate.h) without its cuda_source,
  // which is `source` (full path: without its extension_source, which is `source`). A user edit has
  // its parent's. Empty for versions stored before schema 4: their
  // group's record holds the plan.
  std::string plan_json;
  int generator_revision = 0;  // builtin: the generator revision that wrote it; 0 otherwise or unknown
  std::string created_at;      // UTC, ISO 8601, set by the store
  BuildStatus build_status = BuildStatus::not_built;
  std::optional<bool> correct;    // unset until validated
  std::optional<double> speedup;  // vs eager; unset until benchmarked
  // The latest benchmark's verdict against eager and its sentence; unset until benchmarked.
  std::optional<VerdictKind> verdict;
  std::string verdict_sentence;
  bool chosen_for_export = false;  // never true for a declined, tied or failed version
  // What intake warned about the model this version was generated from (value-dependent control
  // flow: the kernel follows one branch); a user edit keeps its parent's.
  std::vector<std::string> intake_warnings;
  bool declined() const { return verdict == VerdictKind::declined; }
  // Why this version cannot be chosen for export (failed validation, declined, a tie: eager is
  // kept), or empty when it can. A version not yet validated or measured can be chosen; the export
  // itself asks for a passed validation and a win.
  std::string export_refusal() const;
};

}  // namespace nova
