#include "core/gen/generation_run.h"

#include <fmt/format.h>

#include "core/gen/builtin_generator.h"

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

std::vector<std::int64_t> store_generated(ProjectStore& store, const std::vector<GeneratedGroup>& generated) {
  std::vector<std::int64_t> ids;
  for (const auto& r : generated) {
    FusionGroupRecord rec;
    rec.name = fmt::format("group {}: {}", r.group.id, r.group.kind);
    rec.ops_json = nlohmann::json{{"group", r.group}, {"candidate", r.candidate}}.dump();
    std::int64_t gid = store.add_fusion_group(rec);
    if (r.candidate.declined) {
      ids.push_back(0);
      continue;
    }
    CandidateVersion v;
    v.group_id = gid;
    v.origin.kind = OriginKind::builtin;
    v.origin.rule = r.candidate.origin.rule;
    v.source = r.candidate.cuda_source;
    std::int64_t vid = store.add_version(v);
    BuildLogRecord log;
    log.version_id = vid;
    log.tool = "nvrtc";
    log.ok = r.build.ok;
    log.log = r.build.log.empty() ? fmt::format("NVRTC {} for {}: ok{}", NvrtcCompiler::nvrtc_version(),
                                                r.build.arch, r.build.cache_hit ? " (cached)" : "")
                                  : r.build.log;
    store.add_build_log(log);
    ids.push_back(vid);
  }
  return ids;
}

}  // namespace nova
