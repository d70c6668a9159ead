// A generation is stored whole or not at all, and nothing acknowledged is lost, whenever the writer is
// killed: the test binary re-executes itself as the writer (NOVA_GENERATION_WRITER=<folder>, run by a
// static initializer before gtest's main), which opens the project as the studio does, generates the
// groups it lacks (missing_groups), then stores generation after generation (store_generated) and a
// result for each new version (add_result), acknowledging each commit on stdout. The test kills it
// with SIGKILL at 100 random moments, over 10 projects (so the first generation, into an empty
// project, is cut short too), and after each kill reopens the project and checks: every acknowledged
// write is there, each generation is there whole or not at all, nothing is stored twice; at the end of
// each project, generating what is missing completes the full set of groups.
#include <csignal>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/session/generation_run.h"
#include "core/session/stored_generation.h"
#include "core/project/project_store.h"
#include "core/worker/child_process.h"
#include "elementwise_group.h"
#include "support/test_paths.h"

namespace nova {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr int kGroups = 6;
constexpr int kDeclinedGroup = 5;  // the generator declines it: a record, no version
// Versions a generation adds: a primary for each group but the declined one, an alternative for the
// even ones.
constexpr int kVersionsPerGeneration = (kGroups - 1) + 3;

FusionGroup group(int id) { return test::elementwise_group(id); }

ModelGraph graph() {
  ModelGraph g;
  for (int i = 0; i < kGroups; ++i) g.groups.push_back(group(i));
  return g;
}

// The source tells its group, generation and rule; its size (a few bytes to 3 pages) varies, so
// commits touch one page or many.
std::string source_for(int group_id, int generation, const std::string& rule) {
  std::string head = fmt::format("// group {} generation {} rule {}\n", group_id, generation, rule);
  return head + std::string(static_cast<size_t>((group_id * 7919 + generation * 104729) % 12000), 'k');
}

Candidate candidate(const FusionGroup& g, int generation, const std::string& rule) {
  Candidate c;
  c.group_id = g.id;
  c.origin.kind = "builtin";
  c.origin.rule = rule;
  if (g.id == kDeclinedGroup) {
    c.declined = "no rule covers it";
    return c;
  }
  c.cuda_source = source_for(g.id, generation, rule);
  PlanStep step;
  step.type = "kernel";
  step.kernel = fmt::format("nova_g{}_{}", g.id, generation);
  step.grid = {4, 1, 1};
  step.block = {256, 1, 1};
  c.plan.steps = {step};
  return c;
}

std::vector<GeneratedGroup> generation_of(const std::vector<FusionGroup>& groups, int generation) {
  std::vector<GeneratedGroup> out;
  for (const auto& g : groups) {
    GeneratedGroup r{g, candidate(g, generation, "elementwise_chain"), {}};
    r.build.ok = !r.candidate.declined;
    r.build.log = "compiled";
    if (g.id % 2 == 0) r.alternatives.push_back({candidate(g, generation, "gemm_tf32x3"), r.build});
    out.push_back(std::move(r));
  }
  return out;
}

// The generation a stored version belongs to (its source's first line), -1 for none.
int generation_of_source(const std::string& source) {
  int group_id = 0, generation = -1;
  if (std::sscanf(source.c_str(), "// group %d generation %d", &group_id, &generation) != 2) return -1;
  return generation;
}

int newest_generation(const ProjectStore& store) {
  int newest = -1;
  for (const auto& v : store.all_versions()) newest = std::max(newest, generation_of_source(v.source));
  return newest;
}

void acknowledge(const std::string& line) {
  std::string out = line + "\n";
  if (::write(STDOUT_FILENO, out.data(), out.size()) != static_cast<ssize_t>(out.size())) std::_Exit(3);
}

[[noreturn]] void run_writer(const char* folder) {
  try {
    ProjectStore store = ProjectStore::open(folder);
    const ModelGraph model = graph();
    acknowledge("S");  // started: the kill's random delay counts from here, whatever the machine's load
    // As the studio opens a project: the groups it lacks are generated first (all of them the first
    // time; none after, when every generation is stored whole).
    int generation = newest_generation(store) + 1;
    MissingGroups missing = missing_groups(store, model);
    std::vector<FusionGroup> groups = missing.groups;
    for (;; ++generation, groups = model.groups) {
      // Results the last run did not get to (it was killed between storing versions and their results).
      for (const auto& v : store.all_versions()) {
        if (!store.results(v.id).empty()) continue;
        int64_t id = store.add_result({0, v.id, "validation", fmt::format("{{\"version\":{}}}", v.id), ""}, true,
                                      std::nullopt);
        acknowledge(fmt::format("R {} {}", id, v.id));
      }
      if (groups.empty()) continue;
      StoredGeneration stored = store_generated(store, generation_of(groups, generation));
      std::string ack = fmt::format("G {}", generation);
      for (auto id : stored.primary)
        if (id) ack += fmt::format(" {}", id);
      for (auto id : stored.alternatives) ack += fmt::format(" {}", id);
      acknowledge(ack);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "writer: %s\n", e.what());
    std::_Exit(2);
  }
}

const bool kIsWriter = [] {
  if (const char* folder = std::getenv("NOVA_GENERATION_WRITER")) run_writer(folder);
  return false;
}();

// What the writer acknowledged: versions with their generation, results with their version.
struct Acknowledged {
  std::map<int64_t, int> versions;       // version id -> generation
  std::map<int64_t, int64_t> results;    // result id -> version id
  std::map<int, int> versions_per_generation;

  void record(const std::string& line) {
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind == "G") {
      int generation = 0;
      in >> generation;
      for (int64_t id; in >> id;) {
        versions[id] = generation;
        ++versions_per_generation[generation];
      }
    } else if (kind == "R") {
      int64_t id = 0, version = 0;
      in >> id >> version;
      results[id] = version;
    } else {
      ADD_FAILURE() << "unexpected line from the writer: " << line;
    }
  }
};

// Everything the checks ask of a reopened project; empty when all hold.
std::string check_project(const fs::path& dir, const Acknowledged& acked) {
  ProjectStore store = ProjectStore::open(dir);
  if (std::string check = store.integrity_check(); check != "ok") return "integrity check: " + check;
  // Groups: none (the first generation was cut short) or all, each once.
  auto records = store.fusion_groups();
  std::set<int> group_ids;
  for (const auto& g : stored_groups(store)) group_ids.insert(g.group.id);
  if (group_ids.size() != records.size()) return fmt::format("{} records for {} groups", records.size(), group_ids.size());
  if (!records.empty() && records.size() != kGroups)
    return fmt::format("a generation was stored in part: {} of {} groups", records.size(), kGroups);
  MissingGroups missing = missing_groups(store, graph());
  if (missing.groups.size() != (records.empty() ? kGroups : 0u)) return "missing groups: " + missing.describe();
  // Versions: each generation whole, none twice, every acknowledged one there with its source.
  std::map<int64_t, std::string> sources;
  std::set<std::string> distinct;
  std::map<int, int> per_generation;
  for (const auto& v : store.all_versions()) {
    sources[v.id] = v.source;
    if (!distinct.insert(v.source).second) return fmt::format("version {} is stored twice", v.id);
    ++per_generation[generation_of_source(v.source)];
  }
  for (const auto& [generation, count] : per_generation)
    if (count != kVersionsPerGeneration)
      return fmt::format("generation {} holds {} of its {} versions", generation, count, kVersionsPerGeneration);
  for (const auto& [id, generation] : acked.versions)
    if (!sources.count(id) || generation_of_source(sources[id]) != generation)
      return fmt::format("acknowledged version {} (generation {}) is missing", id, generation);
  // Results: at most one per version, every acknowledged one there.
  for (const auto& [id, source] : sources) {
    auto results = store.results(id);
    if (results.size() > 1) return fmt::format("version {} has {} results", id, results.size());
    for (const auto& r : results)
      if (acked.results.count(r.id) && acked.results.at(r.id) != id)
        return fmt::format("result {} belongs to another version", r.id);
  }
  for (const auto& [id, version] : acked.results) {
    auto results = store.results(version);
    if (results.empty() || results[0].id != id) return fmt::format("acknowledged result {} is missing", id);
  }
  return "";
}

TEST(StoreGeneratedKill, SigkillAtRandomMomentsStoresEachGenerationWholeAndLosesNothingAcknowledged) {
  ASSERT_FALSE(kIsWriter);
  constexpr int kProjects = 10, kKillsPerProject = 10;
  const fs::path self = fs::read_symlink("/proc/self/exe");
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE(fmt::format("seed {}", seed));
  std::mt19937 rng(seed);
  std::size_t acknowledged_versions = 0, empty_reopens = 0;
  for (int project = 0; project < kProjects; ++project) {
    fs::path dir = test::scratch_dir(fmt::format("generation_kill_{}", project)) / "proj";
    { ProjectStore::create(dir); }
    Acknowledged acked;
    for (int kill = 0; kill < kKillsPerProject; ++kill) {
      ChildProcess child;
      auto env = ChildProcess::minimal_env();
      env["NOVA_GENERATION_WRITER"] = dir.string();
      child.start({self.string()}, env);
      // Early kills land in the start and the first generation (timed from the spawn), later ones
      // anywhere in the loop (timed from the writer's "S", so a loaded machine's slow start does not
      // eat the writing time).
      auto kill_after = std::chrono::milliseconds(kill < 2 ? rng() % 40 : rng() % 150);
      if (kill >= 2)
        for (auto started = std::chrono::steady_clock::now();
             std::chrono::steady_clock::now() - started < 60s && !child.eof();)
          if (auto line = child.read_line(10ms)) {
            if (*line == "S") break;
            acked.record(*line);
          }
      auto deadline = std::chrono::steady_clock::now() + kill_after;
      while (std::chrono::steady_clock::now() < deadline) {
        if (auto line = child.read_line(1ms); line && *line != "S") acked.record(*line);
        if (child.eof()) break;
      }
      ASSERT_TRUE(child.running()) << "the writer stopped by itself: " << child.stderr_text();
      ::kill(child.pid(), SIGKILL);
      // Whatever reached the pipe before the kill was acknowledged too.
      while (auto line = child.read_line(2s))
        if (*line != "S") acked.record(*line);
      auto status = child.wait(5s);
      ASSERT_TRUE(status);
      EXPECT_EQ(status->signal, SIGKILL) << child.stderr_text();
      std::string problem = check_project(dir, acked);
      ASSERT_EQ(problem, "") << "project " << project << ", after kill " << kill;
      empty_reopens += ProjectStore::open(dir).fusion_groups().empty();
    }
    for (const auto& [generation, count] : acked.versions_per_generation)
      EXPECT_EQ(count, kVersionsPerGeneration) << "generation " << generation;
    acknowledged_versions += acked.versions.size();

    // Completing the generation: the groups the project lacks are generated, and it holds all of them.
    ProjectStore store = ProjectStore::open(dir);
    MissingGroups missing = missing_groups(store, graph());
    if (!missing.groups.empty()) store_generated(store, generation_of(missing.groups, newest_generation(store) + 1));
    EXPECT_TRUE(missing_groups(store, graph()).groups.empty());
    auto stored = stored_groups(store);
    ASSERT_EQ(stored.size(), static_cast<size_t>(kGroups));
    for (const auto& g : stored) EXPECT_EQ(g.versions == 0, g.group.id == kDeclinedGroup) << "group " << g.group.id;
  }
  std::printf("[ info ] %zu versions acknowledged; %zu of %d reopens found the first generation cut short\n",
              acknowledged_versions, empty_reopens, kProjects * kKillsPerProject);
  EXPECT_GT(acknowledged_versions, 40u) << "too few writes to mean anything";
}

}  // namespace
}  // namespace nova
