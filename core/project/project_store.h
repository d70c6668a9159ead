#pragma once
// The project: a folder holding project.nova, an SQLite database in WAL mode with everything a
// session produced (model and graph, traces, fusion groups, candidate versions, build logs,
// validation and benchmark results, exports). Used by the CLI, the jobs and the studio.
//
// Every write is one transaction that is durable when the call returns (synchronous=FULL), so a
// process killed at any moment loses nothing that was reported saved. Writes that belong together
// (a whole generation: its groups, versions and build logs) run inside write_transaction(): all of
// them are stored or none. Versions are immutable: there is no call that changes a stored source; an
// edit is a new version whose parent is the edited one.
// Opening a newer schema, a damaged file or a read-only folder throws ProjectError and leaves every
// file byte-identical; a damaged one says so (ProjectError::damaged(), SQLite's check in detail()), and
// move_aside (core/project/damaged_project.h) makes room for a new project beside it.
// The folder and its files hold the client's code: they are readable by the user only (0700, 0600).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/project/candidate_version.h"
#include "core/project/project_records.h"
#include "core/project/sqlite_transaction.h"

struct sqlite3;

namespace nova {

class ProjectStore {
 public:
  static constexpr int kSchemaVersion = 9;  // the last migration (project_migration.cpp)
  static constexpr const char* kFileName = "project.nova";

  // Creates a new project in `folder` (created if missing, with its missing parents, mode 0700).
  // Throws if a project is already there.
  static ProjectStore create(const std::filesystem::path& folder);
  // Opens an existing project, applying pending migrations (and completing one whose creation was
  // killed before its schema was stored). Throws ProjectError.
  static ProjectStore open(const std::filesystem::path& folder);

  ProjectStore(ProjectStore&& other) noexcept;
  ProjectStore& operator=(ProjectStore&& other) noexcept;
  ~ProjectStore();

  const std::filesystem::path& folder() const { return folder_; }
  int schema_version() const;
  std::string integrity_check() const;  // "ok" when sound

  // Starts a write transaction on this store: every write made before its commit() is stored
  // together, or, if it is destroyed uncommitted (an exception, a kill), none is. The writes inside
  // are durable when commit() returns, not before.
  //   auto tx = store.write_transaction(); store.add_fusion_group(...); store.add_version(...); tx.commit();
  SqliteTransaction write_transaction();

  void set_model(const ModelRecord& model);
  std::optional<ModelRecord> model() const;

  int64_t add_trace(const TraceRecord& trace);
  std::vector<TraceRecord> traces() const;

  int64_t add_fusion_group(const FusionGroupRecord& group);
  std::vector<FusionGroupRecord> fusion_groups() const;
  // Records that the builtin generator `revision` has generated the group again. Throws ProjectError
  // for a group that does not exist.
  void set_generator_revision(int64_t group_id, int revision);

  // Stores a new version (id and created_at are assigned; build/validation fields start unset).
  int64_t add_version(const CandidateVersion& version);
  // A user edit of `parent_id`: same group and launch plan, origin user_edit.
  int64_t add_user_edit(int64_t parent_id, const std::string& source);
  CandidateVersion version(int64_t id) const;
  std::vector<CandidateVersion> versions(int64_t group_id) const;  // oldest first
  std::vector<CandidateVersion> all_versions() const;

  // Records a build and sets the version's build status in the same transaction.
  int64_t add_build_log(const BuildLogRecord& log);
  std::optional<BuildLogRecord> latest_build_log(int64_t version_id) const;

  // Records a validation ("correct" is set) or benchmark ("speedup" and "verdict" are set) result.
  // A declined verdict also takes the version out of the export choice of its group.
  int64_t add_result(const ResultRecord& result, std::optional<bool> correct, std::optional<double> speedup,
                     const std::optional<BenchmarkVerdict>& verdict = std::nullopt);
  std::vector<ResultRecord> results(int64_t version_id) const;

  // Marks `version_id` as the one exported for its group (clearing any other of that group).
  // Throws ProjectError, changing nothing, for a version whose benchmark declined it.
  void choose_for_export(int64_t version_id);
  // The version chosen for export in each group, leaving out any that a benchmark declined (eager
  // is kept for that group): what the export (core/export, not built yet) is to package.
  std::vector<CandidateVersion> export_choices() const;
  int64_t add_export(const ExportRecord& record);
  std::vector<ExportRecord> exports() const;
  // Whole-model checks of exported packages, oldest first.
  int64_t add_model_check(const ModelCheckRecord& record);
  std::vector<ModelCheckRecord> model_checks() const;

 private:
  ProjectStore(std::filesystem::path folder, sqlite3* db);
  void migrate();
  CandidateVersion read_version(int64_t id) const;

  std::filesystem::path folder_;
  sqlite3* db_ = nullptr;
};

}  // namespace nova
