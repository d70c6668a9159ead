// The project store: records round-trip through a reopen (a launch plan per version among them),
// migrations from an older schema, refusals (newer schema, corrupt file, damaged pages, read-only
// folder) that change no byte, a damaged project's readable error and its way out (move_aside),
// write transactions that store all or nothing, and files readable by the user only.
#include "core/project/project_store.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <fstream>
#include <map>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/session/stored_generation.h"
#include "core/project/damaged_project.h"
#include "core/project/project_error.h"
#include "core/project/project_migration.h"
#include "support/test_paths.h"

namespace nova {
namespace {
namespace fs = std::filesystem;

std::map<std::string, std::string> snapshot(const fs::path& folder) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(folder)) {
    std::ifstream in(entry.path(), std::ios::binary);
    files[entry.path().filename().string()] = std::string(std::istreambuf_iterator<char>(in), {});
  }
  return files;
}

void raw_exec(const fs::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

CandidateVersion builtin_version(int64_t group, const std::string& source) {
  CandidateVersion v;
  v.group_id = group;
  v.origin = {OriginKind::builtin, "fuse_epilogue", "", "", 0};
  v.source = source;
  return v;
}

std::string error_of(const fs::path& folder) {
  try {
    ProjectStore::open(folder);
  } catch (const ProjectError& e) {
    return e.what();
  }
  return "<opened>";
}

std::optional<ProjectError> open_error(const fs::path& folder) {
  try {
    ProjectStore::open(folder);
  } catch (const ProjectError& e) {
    return e;
  }
  return std::nullopt;
}

// Opening `folder` is refused as a damaged project with the one readable sentence; returns the
// detail (SQLite's words), "<opened>" when it opened.
std::string damaged_detail(const fs::path& folder) {
  auto error = open_error(folder);
  if (!error) return "<opened>";
  EXPECT_EQ(std::string(error->what()), (folder / "project.nova").string() +
                                            " is damaged or is not a Nova project: nothing was changed");
  EXPECT_TRUE(error->damaged());
  return error->detail();
}

std::string read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// A project whose pages are damaged: b-tree page 12 overwritten.
fs::path damaged_project(const std::string& name) {
  fs::path dir = test::scratch_dir(name);
  {
    ProjectStore store = ProjectStore::create(dir);
    int64_t g = store.add_fusion_group({0, "g", "{}"});
    for (int i = 0; i < 200; ++i) store.add_version(builtin_version(g, std::string(300, 'a' + i % 26)));
  }
  fs::path file = dir / ProjectStore::kFileName;
  EXPECT_GT(fs::file_size(file), 20u * 4096);
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(12 * 4096);  // a b-tree page of candidate_versions
  std::string junk(4096, '\xAB');
  f.write(junk.data(), junk.size());
  return dir;
}

TEST(ProjectStore, EveryRecordSurvivesAReopen) {
  fs::path dir = test::scratch_dir("store_roundtrip") / "proj";
  int64_t group = 0, v1 = 0, v2 = 0, v3 = 0;
  {
    ProjectStore store = ProjectStore::create(dir);
    EXPECT_EQ(store.schema_version(), ProjectStore::kSchemaVersion);
    store.set_model({"/models/m.py", "class Model: ...", R"({"nodes":[]})"});
    store.add_trace({0, "cupti", "", {1, 2, 3, 0, 255}, ""});
    group = store.add_fusion_group({0, "conv2d+min+add+mul", R"({"ops":["conv2d","min"]})"});
    v1 = store.add_version(builtin_version(group, "__global__ void k() {}\n"));
    CandidateVersion llm;
    llm.group_id = group;
    llm.parent_id = v1;
    llm.origin = {OriginKind::llm, "", "anthropic", "claude", 2};
    llm.source = "__global__ void k2() {}\n";
    v2 = store.add_version(llm);
    v3 = store.add_user_edit(v2, "__global__ void k3() {}\n");
    store.add_build_log({0, v2, "nvrtc", false, "k.cu(1): error: x", ""});
    store.add_build_log({0, v3, "nvrtc", true, "", ""});
    store.add_result({0, v3, "validation", R"({"trials":5})", ""}, true, std::nullopt);
    store.add_result({0, v3, "benchmark", R"({"samples":[1.0]})", ""}, std::nullopt, 1.7);
    store.choose_for_export(v1);
    store.choose_for_export(v3);
    store.add_export({0, v3, "/out/pkg", ""});
  }
  ProjectStore store = ProjectStore::open(dir);
  EXPECT_EQ(store.integrity_check(), "ok");
  ASSERT_TRUE(store.model());
  EXPECT_EQ(store.model()->graph_json, R"({"nodes":[]})");
  ASSERT_EQ(store.traces().size(), 1u);
  EXPECT_EQ(store.traces()[0].data, (std::vector<uint8_t>{1, 2, 3, 0, 255}));
  ASSERT_EQ(store.fusion_groups().size(), 1u);
  auto versions = store.versions(group);
  ASSERT_EQ(versions.size(), 3u);
  EXPECT_EQ(versions[0].origin.describe(), "builtin: fuse_epilogue");
  EXPECT_EQ(versions[1].origin.describe(), "llm: anthropic/claude round 2");
  EXPECT_EQ(versions[1].parent_id, v1);
  EXPECT_EQ(versions[1].build_status, BuildStatus::failed);
  EXPECT_EQ(versions[2].origin.kind, OriginKind::user_edit);
  EXPECT_EQ(versions[2].parent_id, v2);
  EXPECT_EQ(versions[2].build_status, BuildStatus::built);
  EXPECT_EQ(versions[2].correct, true);
  EXPECT_EQ(versions[2].speedup, 1.7);
  EXPECT_FALSE(versions[0].chosen_for_export);  // choosing v3 cleared v1
  EXPECT_TRUE(versions[2].chosen_for_export);
  EXPECT_FALSE(versions[0].correct.has_value());
  EXPECT_EQ(store.latest_build_log(v2)->log, "k.cu(1): error: x");
  EXPECT_EQ(store.results(v3).size(), 2u);
  EXPECT_EQ(store.exports().at(0).path, "/out/pkg");
  EXPECT_FALSE(versions[0].created_at.empty());
}

TEST(ProjectStore, UsesWalJournaling) {
  fs::path dir = test::scratch_dir("store_wal");
  { ProjectStore::create(dir).add_fusion_group({0, "g", "{}"}); }
  std::ifstream in(dir / ProjectStore::kFileName, std::ios::binary);
  std::string header(100, '\0');
  in.read(header.data(), 100);
  EXPECT_EQ(header.substr(0, 15), "SQLite format 3");
  EXPECT_EQ(header[18], 2);  // file format read/write version 2 = WAL
  EXPECT_EQ(header[19], 2);
}

TEST(ProjectStore, VersionsAreImmutableAndEditsBranchFromTheirParent) {
  ProjectStore store = ProjectStore::create(test::scratch_dir("store_edit"));
  int64_t g1 = store.add_fusion_group({0, "g1", "{}"});
  int64_t g2 = store.add_fusion_group({0, "g2", "{}"});
  int64_t v1 = store.add_version(builtin_version(g1, "original"));
  int64_t edit = store.add_user_edit(v1, "edited");
  EXPECT_EQ(store.version(v1).source, "original");
  EXPECT_EQ(store.version(edit).parent_id, v1);
  EXPECT_EQ(store.version(edit).group_id, g1);
  // A parent from another group, or none at all, is refused and nothing is written.
  CandidateVersion wrong = builtin_version(g2, "x");
  wrong.parent_id = v1;
  EXPECT_THROW(store.add_version(wrong), ProjectError);
  wrong.parent_id = 999;
  EXPECT_THROW(store.add_version(wrong), ProjectError);
  EXPECT_EQ(store.all_versions().size(), 2u);
  EXPECT_THROW(ProjectStore::create(store.folder()), ProjectError);
}

TEST(ProjectStore, MigratesASchema1ProjectKeepingItsData) {
  fs::path dir = test::scratch_dir("store_migrate");
  fs::path file = dir / ProjectStore::kFileName;
  const auto& m1 = project_migrations().at(0);
  ASSERT_EQ(m1.version, 1);
  raw_exec(file,
           "PRAGMA journal_mode=WAL; CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, "
           "description TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT '');" +
               m1.sql +
               "INSERT INTO schema_migrations(version, description) VALUES (1, 'v1');"
               "INSERT INTO fusion_groups(name) VALUES ('old group');"
               "INSERT INTO candidate_versions(group_id, origin_kind, source) VALUES (1, 'builtin', 'old');");
  ProjectStore store = ProjectStore::open(dir);
  EXPECT_EQ(store.schema_version(), ProjectStore::kSchemaVersion);
  auto versions = store.versions(1);
  ASSERT_EQ(versions.size(), 1u);
  EXPECT_EQ(versions[0].source, "old");
  EXPECT_FALSE(versions[0].chosen_for_export);
  store.choose_for_export(versions[0].id);  // the column migration 2 added
  EXPECT_TRUE(store.version(versions[0].id).chosen_for_export);
  EXPECT_FALSE(versions[0].verdict.has_value());  // migration 3: not benchmarked yet
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST(ProjectStore, MigratesASchema3ProjectWhoseVersionsKeepTheirGroupsPlan) {
  fs::path dir = test::scratch_dir("store_migrate3");
  fs::path file = dir / ProjectStore::kFileName;
  // The schema as Nova wrote it up to version 3, with a group whose record holds the plan.
  std::string sql =
      "PRAGMA journal_mode=WAL; CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, "
      "description TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT '');";
  for (const auto& m : project_migrations())
    if (m.version <= 3)
      sql += m.sql + "INSERT INTO schema_migrations(version, description) VALUES (" +
             std::to_string(m.version) + ", 'old');";
  FusionGroup group;
  group.id = 0;
  group.functional_source = "def module_fn(x):\n    return x + 1\n";
  Candidate plan;
  plan.origin.kind = "builtin";
  PlanStep step;
  step.type = "kernel";
  step.kernel = "nova_g0_old";
  step.grid = {8, 1, 1};
  plan.plan.steps = {step};
  std::string ops = nlohmann::json{{"group", group}, {"candidate", plan}}.dump();
  raw_exec(file, sql + "INSERT INTO fusion_groups(name, ops_json) VALUES ('group 0', '" + ops +
                     "');"
                     "INSERT INTO candidate_versions(group_id, origin_kind, origin_rule, source) "
                     "VALUES (1, 'builtin', 'elementwise_chain', 'old kernel');");
  ProjectStore store = ProjectStore::open(dir);
  EXPECT_EQ(store.schema_version(), ProjectStore::kSchemaVersion);
  ASSERT_EQ(store.fusion_groups().size(), 1u);
  EXPECT_EQ(store.fusion_groups()[0].ops_json, ops);
  EXPECT_EQ(store.fusion_groups()[0].generator_revision, 0);  // not recorded
  CandidateVersion old = store.version(1);
  EXPECT_EQ(old.source, "old kernel");
  EXPECT_EQ(old.plan_json, "");
  EXPECT_EQ(old.generator_revision, 0);
  // It still runs, with its group's plan and its own source; so does an edit of it.
  auto stored = stored_candidate(store, old.id);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->candidate.plan, plan.plan);
  EXPECT_EQ(stored->candidate.cuda_source, "old kernel");
  EXPECT_EQ(stored->group.functional_source, group.functional_source);
  int64_t edit = store.add_user_edit(old.id, "edited kernel");
  EXPECT_EQ(stored_candidate(store, edit)->candidate.plan, plan.plan);
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST(ProjectStore, EveryVersionKeepsItsOwnPlanAndGeneratorRevision) {
  fs::path dir = test::scratch_dir("store_plan") / "proj";
  int64_t group = 0, v1 = 0, v2 = 0, edit = 0;
  {
    ProjectStore store = ProjectStore::create(dir);
    group = store.add_fusion_group({0, "g", "{}", 2});
    CandidateVersion a = builtin_version(group, "a");
    a.plan_json = R"({"plan":{"steps":[{"kernel":"a"}]}})";
    a.generator_revision = 2;
    v1 = store.add_version(a);
    CandidateVersion b = builtin_version(group, "b");
    b.parent_id = v1;
    b.plan_json = R"({"plan":{"steps":[{"kernel":"b"}]}})";
    b.generator_revision = 3;
    v2 = store.add_version(b);
    edit = store.add_user_edit(v2, "b, edited");
    store.set_generator_revision(group, 3);
    EXPECT_THROW(store.set_generator_revision(999, 3), ProjectError);
  }
  ProjectStore store = ProjectStore::open(dir);
  EXPECT_EQ(store.fusion_groups().at(0).generator_revision, 3);
  EXPECT_EQ(store.version(v1).plan_json, R"({"plan":{"steps":[{"kernel":"a"}]}})");
  EXPECT_EQ(store.version(v1).generator_revision, 2);
  EXPECT_EQ(store.version(v2).plan_json, R"({"plan":{"steps":[{"kernel":"b"}]}})");
  EXPECT_EQ(store.version(v2).generator_revision, 3);
  EXPECT_EQ(store.version(edit).plan_json, store.version(v2).plan_json);  // its parent's
  EXPECT_EQ(store.version(edit).generator_revision, 0);
}

TEST(ProjectStore, RefusesANewerSchemaAndChangesNothing) {
  fs::path dir = test::scratch_dir("store_newer");
  { ProjectStore::create(dir).add_fusion_group({0, "g", "{}"}); }
  raw_exec(dir / ProjectStore::kFileName,
           "INSERT INTO schema_migrations(version, description) VALUES (7, 'from the future')");
  auto before = snapshot(dir);
  EXPECT_EQ(error_of(dir), (dir / "project.nova").string() +
                               " was written by a newer Nova (schema 7; this build reads up to " +
                               std::to_string(ProjectStore::kSchemaVersion) + "): nothing was changed");
  EXPECT_TRUE(snapshot(dir) == before);  // byte for byte, same files
}

TEST(ProjectStore, RefusesAFileThatIsNotADatabaseAndChangesNothing) {
  fs::path dir = test::scratch_dir("store_garbage");
  std::ofstream(dir / ProjectStore::kFileName) << std::string(5000, 'x') << "not sqlite at all";
  auto before = snapshot(dir);
  EXPECT_EQ(damaged_detail(dir), "file is not a database");
  EXPECT_TRUE(snapshot(dir) == before);  // byte for byte, same files
}

TEST(ProjectStore, RefusesDamagedPagesWithAReadableSentenceAndSQLitesCheckApart) {
  fs::path dir = damaged_project("store_damaged");
  auto before = snapshot(dir);
  // One readable sentence; SQLite's check output, one problem a line, in the detail.
  std::string detail = damaged_detail(dir);
  EXPECT_NE(detail, "<opened>");
  EXPECT_FALSE(detail.empty());
  EXPECT_NE(detail, "ok");
  EXPECT_TRUE(snapshot(dir) == before);  // byte for byte, same files
}

TEST(ProjectStore, ADamagedProjectIsMovedAsideAndANewOneStartsBesideIt) {
  fs::path dir = damaged_project("store_move_aside");
  fs::path file = dir / ProjectStore::kFileName;
  ASSERT_NE(damaged_detail(dir), "<opened>");
  // A WAL and shared-memory file left by a killed writer go with it.
  std::ofstream(file.string() + "-wal", std::ios::binary) << "wal frames";
  std::ofstream(file.string() + "-shm", std::ios::binary) << "shm";
  auto before = snapshot(dir);

  fs::path aside = move_aside(dir);
  EXPECT_EQ(aside.parent_path(), dir);
  const std::string name = aside.filename().string();
  ASSERT_EQ(name.rfind("project.nova.damaged-", 0), 0u) << name;
  EXPECT_EQ(name.size(), std::string("project.nova.damaged-20250101T120000Z").size()) << name;
  EXPECT_FALSE(fs::exists(file));
  EXPECT_FALSE(fs::exists(file.string() + "-wal"));
  EXPECT_FALSE(fs::exists(file.string() + "-shm"));
  EXPECT_EQ(read_file(aside), before.at("project.nova"));  // kept, byte for byte
  EXPECT_EQ(read_file(aside.string() + "-wal"), "wal frames");
  EXPECT_EQ(read_file(aside.string() + "-shm"), "shm");

  {
    ProjectStore fresh = ProjectStore::create(dir);
    fresh.add_fusion_group({0, "new", "{}"});
  }
  EXPECT_EQ(ProjectStore::open(dir).fusion_groups().size(), 1u);
  // Damaged again within the same second: another name, the first one kept.
  std::ofstream(file, std::ios::binary | std::ios::trunc) << "garbage";
  fs::path second = move_aside(dir);
  EXPECT_NE(second, aside);
  EXPECT_EQ(read_file(second), "garbage");
  EXPECT_EQ(read_file(aside), before.at("project.nova"));
  EXPECT_THROW(move_aside(dir), ProjectError);  // nothing left to move
}

TEST(ProjectStore, OpensAProjectWhoseCreationWasKilledBeforeItsSchema) {
  // As create() leaves it when killed before the schema commit: an empty file, or a database in WAL
  // mode without a table.
  fs::path empty = test::scratch_dir("store_killed_create_empty");
  std::ofstream(empty / ProjectStore::kFileName).close();
  EXPECT_EQ(ProjectStore::open(empty).schema_version(), ProjectStore::kSchemaVersion);
  fs::path wal = test::scratch_dir("store_killed_create_wal");
  raw_exec(wal / ProjectStore::kFileName, "PRAGMA journal_mode=WAL");
  ProjectStore store = ProjectStore::open(wal);
  EXPECT_EQ(store.schema_version(), ProjectStore::kSchemaVersion);
  EXPECT_TRUE(store.fusion_groups().empty());
  // A database with tables of its own is not ours to complete.
  fs::path other = test::scratch_dir("store_other_db");
  raw_exec(other / ProjectStore::kFileName, "CREATE TABLE t(x)");
  EXPECT_EQ(damaged_detail(other), "it holds no Nova schema");
}

TEST(ProjectStore, ProjectFilesAreReadableByTheUserOnly) {
  const mode_t old_umask = ::umask(022);
  fs::path root = test::scratch_dir("store_private");
  fs::path dir = root / "projects" / "model-1234";
  {
    ProjectStore store = ProjectStore::create(dir);
    store.add_fusion_group({0, "g", "{}"});  // the WAL and shared memory exist while it is open
    EXPECT_EQ(mode_of(root / "projects"), 0700u);
    EXPECT_EQ(mode_of(dir), 0700u);
    EXPECT_EQ(mode_of(dir / "project.nova"), 0600u);
    EXPECT_EQ(mode_of(dir / "project.nova-wal"), 0600u);
    EXPECT_EQ(mode_of(dir / "project.nova-shm"), 0600u);
  }
  // A project created before this rule is made private when it is opened.
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  ASSERT_EQ(::chmod((dir / "project.nova").c_str(), 0644), 0);
  {
    ProjectStore store = ProjectStore::open(dir);
    EXPECT_EQ(mode_of(dir), 0700u);
    EXPECT_EQ(mode_of(dir / "project.nova"), 0600u);
    EXPECT_EQ(mode_of(dir / "project.nova-wal"), 0600u);
  }
  ::umask(old_umask);
}

TEST(ProjectStore, AWriteTransactionStoresAllOfItsWritesOrNone) {
  fs::path dir = test::scratch_dir("store_transaction") / "proj";
  ProjectStore store = ProjectStore::create(dir);
  {
    auto tx = store.write_transaction();
    int64_t g = store.add_fusion_group({0, "g", "{}"});
    store.add_version(builtin_version(g, "first"));
    // destroyed uncommitted: as if killed here
  }
  EXPECT_TRUE(store.fusion_groups().empty());
  EXPECT_TRUE(store.all_versions().empty());
  {
    auto tx = store.write_transaction();
    int64_t g = store.add_fusion_group({0, "g", "{}"});
    int64_t v = store.add_version(builtin_version(g, "kept"));
    // A write that fails inside undoes only itself.
    CandidateVersion orphan = builtin_version(g, "bad parent");
    orphan.parent_id = 999;
    EXPECT_THROW(store.add_version(orphan), ProjectError);
    store.add_build_log({0, v, "nvrtc", true, "ok", ""});
    // Another connection sees none of it before the commit.
    sqlite3* reader = nullptr;
    ASSERT_EQ(sqlite3_open((dir / ProjectStore::kFileName).c_str(), &reader), SQLITE_OK);
    sqlite3_stmt* count = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(reader, "SELECT count(*) FROM fusion_groups", -1, &count, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(count), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int(count, 0), 0);
    sqlite3_finalize(count);
    sqlite3_close(reader);
    tx.commit();
  }
  ProjectStore reopened = ProjectStore::open(dir);
  ASSERT_EQ(reopened.fusion_groups().size(), 1u);
  ASSERT_EQ(reopened.all_versions().size(), 1u);
  EXPECT_EQ(reopened.all_versions()[0].source, "kept");
  EXPECT_EQ(reopened.all_versions()[0].build_status, BuildStatus::built);
}

TEST(ProjectStore, RefusesAReadOnlyFolderAndChangesNothing) {
  fs::path dir = test::scratch_dir("store_readonly");
  { ProjectStore::create(dir).add_fusion_group({0, "g", "{}"}); }
  auto before = snapshot(dir);
  ASSERT_EQ(::chmod(dir.c_str(), 0555), 0);
  std::string error = error_of(dir);
  ::chmod(dir.c_str(), 0755);
  EXPECT_EQ(error, dir.string() + ": the folder is read-only: nothing was changed");
  EXPECT_TRUE(snapshot(dir) == before);  // byte for byte, same files
}

TEST(ProjectStore, OpensAProjectAnotherConnectionHoldsOpen) {
  fs::path dir = test::scratch_dir("store_shared");
  ProjectStore first = ProjectStore::create(dir);
  int64_t g = first.add_fusion_group({0, "g", "{}"});  // still only in the WAL
  ProjectStore second = ProjectStore::open(dir);
  EXPECT_EQ(second.fusion_groups().at(0).id, g);
  int64_t v = second.add_version(builtin_version(g, "from the second"));
  EXPECT_EQ(first.version(v).source, "from the second");
}

TEST(ProjectStore, RefusesANewerSchemaLeftInTheWalAndChangesNothing) {
  fs::path dir = test::scratch_dir("store_newer_wal");
  { ProjectStore::create(dir).add_fusion_group({0, "g", "{}"}); }
  // A newer Nova that still has the project open: its migration is only in the WAL.
  const int ours = ProjectStore::kSchemaVersion, theirs = ours + 1;
  sqlite3* newer = nullptr;
  ASSERT_EQ(sqlite3_open((dir / ProjectStore::kFileName).c_str(), &newer), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(newer,
                         ("PRAGMA journal_mode=WAL; INSERT INTO schema_migrations(version, description) "
                          "VALUES (" +
                          std::to_string(theirs) + ", 'newer')")
                             .c_str(),
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  auto before = snapshot(dir);
  EXPECT_NE(
      error_of(dir).find(fmt::format("newer Nova (schema {}; this build reads up to {})", theirs, ours)),
      std::string::npos);
  auto after = snapshot(dir);
  EXPECT_TRUE(after.at("project.nova") == before.at("project.nova"));
  EXPECT_TRUE(after.at("project.nova-wal") == before.at("project.nova-wal"));
  sqlite3_close(newer);
}

// A writer killed mid-checkpoint leaves a main file whose pages are sound only together with the
// WAL that holds their newer copies. Here page 1 (the schema's root) has a newer copy in the WAL and
// its body in the main file is garbage: the project opens, and nothing is lost.
TEST(ProjectStore, OpensAProjectWhoseMainFileIsSoundOnlyWithItsWal) {
  fs::path dir = test::scratch_dir("store_main_needs_wal");
  int64_t group = 0;
  {
    ProjectStore store = ProjectStore::create(dir);
    group = store.add_fusion_group({0, "g", "{}"});
    store.add_version(builtin_version(group, "kernel text"));
  }
  fs::path file = dir / ProjectStore::kFileName;
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &writer), SQLITE_OK);
  sqlite3_db_config(writer, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  // user_version lives in page 1's header, so the WAL gets a whole new copy of page 1.
  ASSERT_EQ(
      sqlite3_exec(writer, "PRAGMA journal_mode=WAL; PRAGMA user_version=7;", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(writer);
  ASSERT_GT(fs::file_size(fs::path(file.string() + "-wal")), 32u);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);  // past the 100-byte database header: page 1's b-tree
    std::string junk(4096 - 100, '\xAB');
    f.write(junk.data(), junk.size());
  }
  ProjectStore store = ProjectStore::open(dir);
  EXPECT_EQ(store.integrity_check(), "ok");
  ASSERT_EQ(store.versions(group).size(), 1u);
  EXPECT_EQ(store.versions(group)[0].source, "kernel text");
}

BenchmarkVerdict verdict_of(VerdictKind kind, const std::string& sentence) {
  BenchmarkVerdict v;
  v.kind = kind;
  v.sentence = sentence;
  return v;
}

TEST(ProjectStore, ADeclinedVersionIsShownAsDeclinedAndNeverChosenForExport) {
  fs::path dir = test::scratch_dir("store_declined");
  const std::string declined =
      "declined: slower than eager (cold 0.99x, wall 0.96x); eager is kept for this group";
  int64_t g1 = 0, g2 = 0, fast = 0, slow = 0, other = 0;
  {
    ProjectStore store = ProjectStore::create(dir);
    g1 = store.add_fusion_group({0, "linear+relu+bias", "{}"});
    g2 = store.add_fusion_group({0, "conv2d+min", "{}"});
    slow = store.add_version(builtin_version(g1, "library gemm + epilogue"));
    fast = store.add_user_edit(slow, "tiled gemm");
    other = store.add_version(builtin_version(g2, "conv"));
    store.choose_for_export(slow);  // chosen before it was benchmarked
    store.choose_for_export(other);
    store.add_result({0, slow, "benchmark", "{}", ""}, std::nullopt, 0.99,
                     verdict_of(VerdictKind::declined, declined));
    store.add_result({0, fast, "benchmark", "{}", ""}, std::nullopt, 1.4,
                     verdict_of(VerdictKind::ships, "ships: not slower than eager (cold 1.40x, wall 1.10x)"));
  }
  ProjectStore store = ProjectStore::open(dir);
  CandidateVersion v = store.version(slow);
  EXPECT_TRUE(v.declined());
  EXPECT_EQ(v.verdict_sentence, declined);
  EXPECT_FALSE(v.chosen_for_export);  // the decline took it out of the export choice
  EXPECT_EQ(store.version(fast).verdict, VerdictKind::ships);
  EXPECT_FALSE(store.version(other).verdict.has_value());
  // Choosing it again is refused with the sentence, and changes nothing.
  try {
    store.choose_for_export(slow);
    ADD_FAILURE() << "a declined version was chosen for export";
  } catch (const ProjectError& e) {
    EXPECT_EQ(std::string(e.what()), "v" + std::to_string(slow) + " cannot be exported: " + declined);
  }
  ASSERT_EQ(store.export_choices().size(), 1u);
  EXPECT_EQ(store.export_choices()[0].id, other);
  store.choose_for_export(fast);
  auto choices = store.export_choices();
  ASSERT_EQ(choices.size(), 2u);
  EXPECT_EQ(choices[0].id, fast);
  EXPECT_EQ(choices[0].group_id, g1);
  EXPECT_EQ(choices[1].id, other);
}

TEST(ProjectStore, RefusesAFolderWithoutAProject) {
  fs::path dir = test::scratch_dir("store_empty");
  EXPECT_EQ(error_of(dir), dir.string() + " is not a Nova project: it holds no project.nova");
  EXPECT_TRUE(fs::is_empty(dir));
}

}  // namespace
}  // namespace nova
