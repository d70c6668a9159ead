#include "core/session/stored_generation.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/gen/builtin_generator.h"

namespace nova {

namespace {

// The group and plan in a record's ops_json; nullopt for a record that holds no group.
std::optional<StoredGroup> parse_record(const FusionGroupRecord& record) {
  auto j = nlohmann::json::parse(record.ops_json, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("group")) return std::nullopt;
  StoredGroup out;
  out.record_id = record.id;
  out.generator_revision = record.generator_revision;
  try {
    out.group = j.at("group").get<FusionGroup>();
    if (j.contains("candidate")) out.candidate = j.at("candidate").get<Candidate>();
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return out;
}

}  // namespace

std::vector<StoredGroup> stored_groups(const ProjectStore& store) {
  std::vector<StoredGroup> out;
  for (const auto& record : store.fusion_groups()) {
    auto group = parse_record(record);
    if (!group) continue;
    for (const auto& v : store.versions(record.id)) {
      ++group->versions;
      if (v.origin.kind != OriginKind::builtin) continue;
      group->generator_revision = std::max(group->generator_revision, v.generator_revision);
      group->newest_builtin = v.id;
    }
    out.push_back(std::move(*group));
  }
  return out;
}

const StoredGroup* find_stored_group(const std::vector<StoredGroup>& stored, const FusionGroup& group) {
  for (const auto& s : stored)
    if (s.group.id == group.id && s.group.functional_source == group.functional_source) return &s;
  return nullptr;
}

std::optional<StoredCandidate> stored_candidate(const ProjectStore& store, int64_t version_id) {
  CandidateVersion version = store.version(version_id);
  for (const auto& record : store.fusion_groups()) {
    if (record.id != version.group_id) continue;
    auto group = parse_record(record);
    if (!group) return std::nullopt;
    StoredCandidate out{group->group, {}};
    if (version.plan_json.empty()) {  // stored before schema 4: the group's plan
      if (!group->candidate) return std::nullopt;
      out.candidate = *group->candidate;
    } else {
      auto j = nlohmann::json::parse(version.plan_json, nullptr, false);
      try {
        out.candidate = j.get<Candidate>();
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
    // The version's source is what gets built: the device code, or a full-path candidate's extension.
    (out.candidate.path == "full" ? out.candidate.extension_source : out.candidate.cuda_source) = version.source;
    return out;
  }
  return std::nullopt;
}

std::string plan_json(const Candidate& candidate) {
  nlohmann::json j = candidate;
  j.erase(candidate.path == "full" ? "extension_source" : "cuda_source");
  return j.dump();
}

OutdatedGroups outdated_groups(const ProjectStore& store, const ModelGraph& graph) {
  auto stored = stored_groups(store);
  OutdatedGroups out;
  for (const auto& g : graph.groups) {
    const StoredGroup* s = find_stored_group(stored, g);
    if (!s || s->generator_revision >= kBuiltinGeneratorRevision) continue;
    out.oldest_revision =
        out.groups.empty() ? s->generator_revision : std::min(out.oldest_revision, s->generator_revision);
    out.groups.push_back(g);
  }
  return out;
}

MissingGroups missing_groups(const ProjectStore& store, const ModelGraph& graph) {
  return missing_groups(stored_groups(store), graph);
}

MissingGroups missing_groups(const std::vector<StoredGroup>& stored, const ModelGraph& graph) {
  MissingGroups out;
  out.graph_groups = graph.groups.size();
  out.generated_before = !stored.empty();
  for (const auto& g : graph.groups) {
    const StoredGroup* s = find_stored_group(stored, g);
    bool declined = s && s->candidate && s->candidate->declined;
    if (!s || (s->versions == 0 && !declined)) out.groups.push_back(g);
  }
  return out;
}

bool MissingGroups::lacks(int group_id) const {
  return std::any_of(groups.begin(), groups.end(), [&](const FusionGroup& g) { return g.id == group_id; });
}

std::string MissingGroups::describe() const {
  if (groups.empty()) return "";
  std::string ids;
  for (const auto& g : groups) ids += (ids.empty() ? "" : ", ") + std::to_string(g.id);
  return fmt::format("the project holds {} of the model's {} fusion groups (missing: {})", held(), graph_groups,
                     ids);
}

}  // namespace nova
