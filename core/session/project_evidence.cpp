#include "core/session/project_evidence.h"

#include "core/session/stored_generation.h"

namespace nova {
namespace {
template <typename T>
std::optional<T> latest(const ProjectStore& store, std::int64_t version, const char* kind) {
  auto results = store.results(version);
  for (auto it = results.rbegin(); it != results.rend(); ++it) {
    if (it->kind != kind) continue;
    auto j = nlohmann::json::parse(it->json, nullptr, false);
    if (j.is_discarded()) continue;
    try {
      return j.get<T>();
    } catch (const std::exception&) {
      continue;  // a record this version cannot read: the older one counts
    }
  }
  return std::nullopt;
}
}  // namespace

std::optional<ValidationResult> ProjectEvidence::latest_validation(const ProjectStore& store, std::int64_t version) {
  return latest<ValidationResult>(store, version, "validation");
}

std::optional<BenchmarkResult> ProjectEvidence::latest_benchmark(const ProjectStore& store, std::int64_t version) {
  return latest<BenchmarkResult>(store, version, "benchmark");
}

std::vector<GroupEvidence> ProjectEvidence::read(const ProjectStore& store, const ModelGraph& graph,
                                                 const std::map<int, double>& gpu_shares) {
  std::vector<StoredGroup> stored = stored_groups(store);
  std::vector<GroupEvidence> out;
  for (const auto& g : graph.groups) {
    GroupEvidence e;
    e.group_id = g.id;
    e.kind = g.kind;
    if (auto it = gpu_shares.find(g.id); it != gpu_shares.end()) e.gpu_share = it->second;
    const StoredGroup* s = find_stored_group(stored, g);
    if (s) {
      auto versions = store.versions(s->record_id);
      if (versions.empty() && s->candidate && s->candidate->declined) {
        VersionEvidence v;
        v.generator_declined = *s->candidate->declined;
        e.versions.push_back(std::move(v));
      }
      bool first_builtin = true;
      for (const auto& version : versions) {
        VersionEvidence v;
        v.version_id = version.id;
        v.rule = version.origin.kind == OriginKind::builtin ? version.origin.rule : version.origin.describe();
        v.primary = version.origin.kind == OriginKind::builtin && first_builtin;
        if (version.origin.kind == OriginKind::builtin) first_builtin = false;
        v.validation = latest_validation(store, version.id);
        v.benchmark = latest_benchmark(store, version.id);
        e.versions.push_back(std::move(v));
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace nova
