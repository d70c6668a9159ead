#include "core/project/project_migration.h"

namespace nova {

const std::vector<ProjectMigration>& project_migrations() {
  static const std::vector<ProjectMigration> migrations = {
      {1, "model, graph, traces, fusion groups, candidate versions, build logs, results",
       R"sql(
CREATE TABLE model (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  path TEXT NOT NULL,
  source TEXT NOT NULL,
  graph_json TEXT NOT NULL);
CREATE TABLE traces (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  path TEXT NOT NULL DEFAULT '',
  data BLOB,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
CREATE TABLE fusion_groups (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  ops_json TEXT NOT NULL DEFAULT '{}');
CREATE TABLE candidate_versions (
  id INTEGER PRIMARY KEY,
  group_id INTEGER NOT NULL REFERENCES fusion_groups(id),
  parent_id INTEGER REFERENCES candidate_versions(id),
  origin_kind TEXT NOT NULL CHECK (origin_kind IN ('builtin', 'llm', 'user_edit')),
  origin_rule TEXT NOT NULL DEFAULT '',
  origin_provider TEXT NOT NULL DEFAULT '',
  origin_model TEXT NOT NULL DEFAULT '',
  origin_round INTEGER NOT NULL DEFAULT 0,
  source TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  build_status TEXT NOT NULL DEFAULT 'not_built',
  correct INTEGER,
  speedup REAL);
CREATE INDEX candidate_versions_group ON candidate_versions(group_id);
CREATE TABLE build_logs (
  id INTEGER PRIMARY KEY,
  version_id INTEGER NOT NULL REFERENCES candidate_versions(id),
  tool TEXT NOT NULL,
  ok INTEGER NOT NULL,
  log TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
CREATE TABLE results (
  id INTEGER PRIMARY KEY,
  version_id INTEGER NOT NULL REFERENCES candidate_versions(id),
  kind TEXT NOT NULL CHECK (kind IN ('validation', 'benchmark')),
  json TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
)sql"},
      {2, "choose a version for export; exports",
       R"sql(
ALTER TABLE candidate_versions ADD COLUMN chosen_for_export INTEGER NOT NULL DEFAULT 0;
CREATE TABLE exports (
  id INTEGER PRIMARY KEY,
  version_id INTEGER NOT NULL REFERENCES candidate_versions(id),
  path TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
CREATE INDEX build_logs_version ON build_logs(version_id);
CREATE INDEX results_version ON results(version_id);
)sql"},
      {3, "the benchmark verdict against eager (ships, declined, unmeasured) and its sentence",
       R"sql(
ALTER TABLE candidate_versions ADD COLUMN verdict TEXT CHECK (verdict IN ('ships', 'declined', 'unmeasured'));
ALTER TABLE candidate_versions ADD COLUMN verdict_sentence TEXT NOT NULL DEFAULT '';
)sql"},
      {4, "each version's launch plan; the builtin generator revision that wrote a version or a group",
       R"sql(
ALTER TABLE candidate_versions ADD COLUMN plan_json TEXT NOT NULL DEFAULT '';
ALTER TABLE candidate_versions ADD COLUMN generator_revision INTEGER NOT NULL DEFAULT 0;
ALTER TABLE fusion_groups ADD COLUMN generator_revision INTEGER NOT NULL DEFAULT 0;
)sql"},
      {5, "a benchmark verdict may be a tie (the ratio's 95% interval holds 1.0)",
       // SQLite cannot widen a CHECK in place: a new column with the wider CHECK takes the old one's
       // values and name (DROP COLUMN needs SQLite 3.35; Debian 12 has 3.40, Ubuntu 24.04 3.45).
       R"sql(
ALTER TABLE candidate_versions ADD COLUMN verdict_kind TEXT CHECK (verdict_kind IN ('ships', 'declined', 'tie', 'unmeasured'));
UPDATE candidate_versions SET verdict_kind = verdict;
ALTER TABLE candidate_versions DROP COLUMN verdict;
ALTER TABLE candidate_versions RENAME COLUMN verdict_kind TO verdict;
)sql"},
      {6, "LLM searches and every candidate they asked for: lineage, round, parent, prompt, answer, attempts, "
          "tokens, cost and outcome",
       R"sql(
CREATE TABLE llm_searches (
  id INTEGER PRIMARY KEY,
  group_id INTEGER NOT NULL REFERENCES fusion_groups(id),
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  options_json TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'finished', 'stopped', 'failed')),
  stop_reason TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
CREATE TABLE llm_candidates (
  id INTEGER PRIMARY KEY,
  search_id INTEGER NOT NULL REFERENCES llm_searches(id),
  lineage INTEGER NOT NULL,
  round INTEGER NOT NULL,
  parent_version INTEGER REFERENCES candidate_versions(id),
  version_id INTEGER REFERENCES candidate_versions(id),
  code_hash TEXT NOT NULL DEFAULT '',
  prompt TEXT NOT NULL,
  answer TEXT NOT NULL DEFAULT '',
  reasoning TEXT NOT NULL DEFAULT '',
  outcome TEXT NOT NULL,
  detail TEXT NOT NULL DEFAULT '',
  attempts_json TEXT NOT NULL DEFAULT '[]',
  tokens_in INTEGER NOT NULL DEFAULT 0,
  tokens_out INTEGER NOT NULL DEFAULT 0,
  cost_usd REAL NOT NULL DEFAULT 0,
  answer_s REAL NOT NULL DEFAULT 0,
  evaluation_s REAL NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (search_id, lineage, round));
CREATE INDEX llm_candidates_search ON llm_candidates(search_id);
)sql"},
      {7, "intake's warnings about the model each version was generated from (JSON array of sentences)",
       R"sql(
ALTER TABLE candidate_versions ADD COLUMN intake_warnings TEXT NOT NULL DEFAULT '[]';
)sql"},
      {8, "whole-model checks of exported packages (nova check-package): validation and benchmark",
       R"sql(
CREATE TABLE model_checks (
  id INTEGER PRIMARY KEY,
  package TEXT NOT NULL,
  package_path TEXT NOT NULL,
  passed INTEGER NOT NULL CHECK (passed IN (0, 1)),
  json TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
)sql"},
      {9, "the project's settings (key, value): the consent to run LLM-written code unsandboxed",
       R"sql(
CREATE TABLE project_settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  set_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
)sql"},
  };
  return migrations;
}

}  // namespace nova
