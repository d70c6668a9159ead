#include "core/gen/generation_run.h"

#include <fmt/format.h>

#include "core/gen/builtin_generator.h"
#include "core/gen/stored_generation.h"

namespace nova {

std::vector<GeneratedGroup> generate_and_build(const ModelGraph& graph, const GenerationTarget& target,
                                               const NvrtcCompiler& compiler) {
  BuiltinGenerator gen(target);
  std::vector<GeneratedGroup> out;
  for (const auto& g : graph.groups) {
    GeneratedGroup r{g, gen.generate(graph, g), {}};
    if (!r.candidate.declined)
      r.build = compiler.compile(r.candidate.cuda_source, fmt::format("group{}.cu", g.id), target.arch);
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

std::int64_t add_builtin_version(ProjectStore& store, std::int64_t group, std::optional<std::int64_t> parent,
                                 const GeneratedGroup& r) {
  CandidateVersion v;
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

// True when the group's newest builtin version already is this candidate (source and plan).
bool is_newest_builtin(const ProjectStore& store, const StoredGroup& group, const Candidate& candidate) {
  if (!group.newest_builtin) return false;
  auto stored = stored_candidate(store, *group.newest_builtin);
  return stored && stored->candidate == candidate;
}

}  // namespace

std::vector<std::int64_t> store_generated(ProjectStore& store, const std::vector<GeneratedGroup>& generated) {
  const std::vector<StoredGroup> stored = stored_groups(store);
  std::vector<std::int64_t> ids;
  for (const auto& r : generated) {
    const StoredGroup* existing = find_stored_group(stored, r.group);
    if (!existing) {
      FusionGroupRecord rec;
      rec.name = fmt::format("group {}: {}", r.group.id, r.group.kind);
      rec.ops_json = nlohmann::json{{"group", r.group}, {"candidate", r.candidate}}.dump();
      rec.generator_revision = kBuiltinGeneratorRevision;
      std::int64_t gid = store.add_fusion_group(rec);
      ids.push_back(r.candidate.declined ? 0 : add_builtin_version(store, gid, std::nullopt, r));
      continue;
    }
    // Generated again (a newer generator revision): a new version under the newest builtin one; the
    // record keeps its first plan, which versions stored before schema 4 run with.
    std::int64_t vid = 0;
    if (!r.candidate.declined && !is_newest_builtin(store, *existing, r.candidate))
      vid = add_builtin_version(store, existing->record_id, existing->newest_builtin, r);
    store.set_generator_revision(existing->record_id, kBuiltinGeneratorRevision);
    ids.push_back(vid);
  }
  return ids;
}

}  // namespace nova
