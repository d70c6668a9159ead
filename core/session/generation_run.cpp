#include "core/session/generation_run.h"

#include <fmt/format.h>

#include "core/gen/builtin_generator.h"
#include "core/session/stored_generation.h"

namespace nova {

std::vector<GeneratedGroup> generate_and_build(const ModelGraph& graph, const GenerationTarget& target,
                                               const NvrtcCompiler& compiler) {
  BuiltinGenerator gen(target);
  std::vector<GeneratedGroup> out;
  for (const auto& g : graph.groups) {
    GeneratedGroup r{g, gen.generate(graph, g), {}};
    r.intake_warnings = graph.warnings;
    if (!r.candidate.declined)
      r.build = compiler.compile(r.candidate.cuda_source, fmt::format("group{}.cu", g.id), target.arch);
    for (auto& c : gen.alternatives(graph, g)) {
      NvrtcResult built =
          compiler.compile(c.cuda_source, fmt::format("group{}.{}.cu", g.id, c.origin.rule), target.arch);
      r.alternatives.push_back({std::move(c), std::move(built)});
    }
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

std::int64_t add_builtin_version(ProjectStore& store, std::int64_t group, std::optional<std::int64_t> parent,
                                 const BuiltCandidate& r, const std::vector<std::string>& intake_warnings) {
  CandidateVersion v;
  v.intake_warnings = intake_warnings;
  v.group_id = group;
  v.parent_id = parent;
  v.origin.kind = OriginKind::builtin;
  v.origin.rule = r.candidate.origin.rule;
  v.source = r.candidate.cuda_source;
  v.plan_json = plan_json(r.candidate);
  v.generator_revision = kBuiltinGeneratorRevision;
  std::int64_t vid = store.add_version(v);
  BuildLogRecord log;
  log.version_id = vid;
  log.tool = "nvrtc";
  log.ok = r.build.ok;
  log.log = r.build.log.empty() ? fmt::format("NVRTC {} for {}: ok{}", NvrtcCompiler::nvrtc_version(),
                                              r.build.arch, r.build.cache_hit ? " (cached)" : "")
                                : r.build.log;
  store.add_build_log(log);
  return vid;
}

// The group's newest builtin version written by `rule`, if any.
std::optional<std::int64_t> newest_of_rule(const ProjectStore& store, std::int64_t group,
                                           const std::string& rule) {
  std::optional<std::int64_t> newest;
  for (const auto& v : store.versions(group))
    if (v.origin.kind == OriginKind::builtin && v.origin.rule == rule) newest = v.id;
  return newest;
}

// True when `version` is this candidate (source and plan).
bool is_candidate(const ProjectStore& store, std::optional<std::int64_t> version,
                  const Candidate& candidate) {
  if (!version) return false;
  auto stored = stored_candidate(store, *version);
  return stored && stored->candidate == candidate;
}

}  // namespace

int StoredGeneration::added() const {
  int n = 0;
  for (auto id : primary) n += id != 0;
  return n + static_cast<int>(alternatives.size());
}

StoredGeneration store_generated(ProjectStore& store, const std::vector<GeneratedGroup>& generated) {
  // One transaction for the whole generation: a kill or an error part way stores none of it, so a
  // project never holds some of a generation's groups and reports them all.
  SqliteTransaction tx = store.write_transaction();
  const std::vector<StoredGroup> stored = stored_groups(store);
  StoredGeneration out;
  for (const auto& r : generated) {
    const StoredGroup* existing = find_stored_group(stored, r.group);
    std::int64_t gid = 0;
    std::optional<std::int64_t> newest;  // the group's newest builtin version
    if (existing) {
      gid = existing->record_id;
      newest = existing->newest_builtin;
    } else {
      FusionGroupRecord rec;
      rec.name = fmt::format("group {}: {}", r.group.id, r.group.kind);
      rec.ops_json = nlohmann::json{{"group", r.group}, {"candidate", r.candidate}}.dump();
      rec.generator_revision = kBuiltinGeneratorRevision;
      gid = store.add_fusion_group(rec);
    }
    // Generated again (a newer generator revision): a new version under the newest builtin one of its
    // rule; the record keeps its first plan, which versions stored before schema 4 run with.
    std::int64_t vid = 0;
    std::optional<std::int64_t> primary;  // the version the primary candidate is, new or stored
    if (!r.candidate.declined) {
      auto same_rule = newest_of_rule(store, gid, r.candidate.origin.rule);
      if (is_candidate(store, same_rule, r.candidate)) {
        primary = same_rule;
      } else {
        vid = add_builtin_version(store, gid, same_rule ? same_rule : newest, {r.candidate, r.build}, r.intake_warnings);
        primary = vid;
      }
    }
    for (const auto& alt : r.alternatives) {
      auto same_rule = newest_of_rule(store, gid, alt.candidate.origin.rule);
      if (is_candidate(store, same_rule, alt.candidate)) continue;
      out.alternatives.push_back(add_builtin_version(store, gid, same_rule ? same_rule : primary, alt, r.intake_warnings));
    }
    if (existing) store.set_generator_revision(gid, kBuiltinGeneratorRevision);
    out.primary.push_back(vid);
  }
  tx.commit();
  return out;
}

}  // namespace nova
