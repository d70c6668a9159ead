#pragma once
// What the builtin generator left in a project, read back: the fusion groups it stored (each record's
// ops_json is {"group": FusionGroup, "candidate": Candidate}), the candidate a stored version runs as
// (its own plan; versions stored before schema 4 use their group's), and the groups of a graph that an
// older generator revision (kBuiltinGeneratorRevision) wrote, which the studio generates again, and
// those the project holds nothing for (missing_groups), which it generates and says so. Plain
// types and functions over ProjectStore, grouped here because they read the same records.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/gen/candidate.h"
#include "core/graph/model_graph.h"
#include "core/project/project_store.h"

namespace nova {

// A fusion-group record the generator wrote, with what its versions say about it.
struct StoredGroup {
  int64_t record_id = 0;
  FusionGroup group;                      // as the graph had it: id and reference (functional_source)
  std::optional<Candidate> candidate;     // the plan written with the record (the group's first)
  int generator_revision = 0;             // the newest revision that generated it; 0 when not recorded
  std::optional<int64_t> newest_builtin;  // its newest builtin version, if it has one
  int versions = 0;                       // how many versions it holds, of every origin
};

// A stored version as validation takes it: the group (its reference) and the candidate, whose
// cuda_source is the version's source.
struct StoredCandidate {
  FusionGroup group;
  Candidate candidate;
};

// The groups of `graph` whose stored candidates an older generator revision wrote, and the oldest of
// those revisions (0: not recorded, a project stored before schema 4).
struct OutdatedGroups {
  std::vector<FusionGroup> groups;
  int oldest_revision = 0;
};

// The groups of a graph that the project holds nothing for: no record, or a record whose candidate
// the generator did not decline but that holds no version (a project whose storing a kill cut short
// before generations were stored in one transaction, or whose WAL was damaged), and how many groups
// the graph has. A project that holds fewer groups than its graph is told by a non-empty `groups`.
struct MissingGroups {
  std::vector<FusionGroup> groups;
  std::size_t graph_groups = 0;
  bool generated_before = false;  // the project holds generator records: a missing group was lost, not new
  std::size_t held() const { return graph_groups - groups.size(); }
  bool lacks(int group_id) const;
  // "the project holds 3 of the model's 5 fusion groups (missing: 1, 4)"; "" when none is missing.
  std::string describe() const;
  // describe() for a project generated before (its missing groups were lost); "" for one never generated.
  std::string lost() const { return generated_before ? describe() : ""; }
};

// Every record the generator wrote, oldest first (records without a group, e.g. written by hand, are
// left out).
std::vector<StoredGroup> stored_groups(const ProjectStore& store);
// The stored group that is `group` of the current graph: the same id and the same reference source.
const StoredGroup* find_stored_group(const std::vector<StoredGroup>& stored, const FusionGroup& group);
// nullopt when the project holds no plan for the version. Throws ProjectError for an unknown version.
std::optional<StoredCandidate> stored_candidate(const ProjectStore& store, int64_t version_id);
// A version's plan_json: the candidate as JSON without its cuda_source (the version's source; on the
// full path, without its extension_source, which is then the version's source).
std::string plan_json(const Candidate& candidate);
OutdatedGroups outdated_groups(const ProjectStore& store, const ModelGraph& graph);
MissingGroups missing_groups(const ProjectStore& store, const ModelGraph& graph);
// The same from records already read with stored_groups().
MissingGroups missing_groups(const std::vector<StoredGroup>& stored, const ModelGraph& graph);

}  // namespace nova
