// The builtin generator's candidates in a project: every version stores its own launch plan and the
// generator revision that wrote it, a group generated again gets a new version (not a second group),
// versions stored before schema 4 run with their group's plan, and the groups an older revision wrote
// are found for regeneration, as are the groups the project holds nothing for; a generation is stored
// whole or not at all.
#include "core/session/stored_generation.h"

#include <gtest/gtest.h>

#include "core/gen/builtin_generator.h"
#include "core/session/generation_run.h"
#include "core/project/project_error.h"
#include "elementwise_group.h"
#include "support/test_paths.h"

namespace nova {
namespace {

FusionGroup group(int id) { return test::elementwise_group(id); }

// A builtin candidate for `g` launching `kernel` on `blocks` blocks.
Candidate candidate(const FusionGroup& g, const std::string& kernel, std::int64_t blocks) {
  Candidate c;
  c.group_id = g.id;
  c.model_path = "/models/m.py";
  c.origin.kind = "builtin";
  c.origin.rule = "elementwise_chain";
  c.cuda_source = "extern \"C\" __global__ void " + kernel + "(const float* x, float* y) {}\n";
  c.plan.inputs = {{"x", {1024}, "float32"}};
  c.plan.outputs = {{"y", {1024}, "float32"}};
  PlanStep step;
  step.type = "kernel";
  step.kernel = kernel;
  step.grid = {blocks, 1, 1};
  step.block = {256, 1, 1};
  step.args = {PlanArg{"input:0", "", {}, ""}, PlanArg{"output:0", "", {}, ""}};
  c.plan.steps = {step};
  c.extension_source = "// extension for " + kernel;
  return c;
}

GeneratedGroup generated(const FusionGroup& g, const Candidate& c) {
  NvrtcResult build;
  build.ok = !c.declined;
  build.log = "compiled";
  build.arch = "sm_90";
  return {g, c, build};
}

Candidate declined(const FusionGroup& g) {
  Candidate c;
  c.group_id = g.id;
  c.origin = {"builtin", "none", "", "", 0, std::nullopt};
  c.declined = "no rule covers it";
  return c;
}

TEST(StoredGeneration, EveryVersionStoresItsOwnPlanAndTheRevisionThatWroteIt) {
  ProjectStore store = ProjectStore::create(test::scratch_dir("gen_plan_per_version") / "p");
  Candidate c = candidate(group(0), "nova_g0_v1", 4);
  auto ids =
      store_generated(store, {generated(group(0), c), generated(group(1), declined(group(1)))}).primary;
  ASSERT_EQ(ids.size(), 2u);
  ASSERT_NE(ids[0], 0);
  EXPECT_EQ(ids[1], 0);  // declined: a group record, no version
  ASSERT_EQ(store.fusion_groups().size(), 2u);
  EXPECT_EQ(store.fusion_groups()[1].generator_revision, kBuiltinGeneratorRevision);

  ProjectStore reopened = ProjectStore::open(store.folder());
  CandidateVersion v = reopened.version(ids[0]);
  EXPECT_EQ(v.generator_revision, kBuiltinGeneratorRevision);
  ASSERT_FALSE(v.plan_json.empty());
  auto plan = nlohmann::json::parse(v.plan_json);
  EXPECT_FALSE(plan.contains("cuda_source"));  // the version's source is the one stored
  EXPECT_EQ(plan.at("plan").at("steps").at(0).at("kernel"), "nova_g0_v1");
  auto stored = stored_candidate(reopened, ids[0]);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->candidate, c);
  EXPECT_EQ(stored->group, group(0));

  // A user edit runs with its parent's plan and its own source; the generator did not write it.
  int64_t edit = reopened.add_user_edit(ids[0], c.cuda_source + "// tuned by hand\n");
  EXPECT_EQ(reopened.version(edit).plan_json, v.plan_json);
  EXPECT_EQ(reopened.version(edit).generator_revision, 0);
  auto edited = stored_candidate(reopened, edit);
  ASSERT_TRUE(edited.has_value());
  EXPECT_EQ(edited->candidate.plan, c.plan);
  EXPECT_EQ(edited->candidate.cuda_source, c.cuda_source + "// tuned by hand\n");
}

TEST(StoredGeneration, GeneratingAGroupAgainAddsAVersionUnderItsNewestBuiltinOne) {
  ProjectStore store = ProjectStore::create(test::scratch_dir("gen_regenerate") / "p");
  Candidate first = candidate(group(0), "nova_g0_v1", 4);
  int64_t v1 = store_generated(store, {generated(group(0), first)}).primary.at(0);
  int64_t edit = store.add_user_edit(v1, first.cuda_source + "// mine\n");

  // A newer generator: another kernel name and grid for the same group.
  Candidate second = candidate(group(0), "nova_g0_v2", 132);
  auto ids = store_generated(store, {generated(group(0), second)}).primary;
  ASSERT_EQ(ids.size(), 1u);
  int64_t v2 = ids[0];
  ASSERT_NE(v2, 0);
  ASSERT_EQ(store.fusion_groups().size(), 1u);  // the same group, not a second one
  auto versions = store.versions(store.fusion_groups()[0].id);
  ASSERT_EQ(versions.size(), 3u);  // the first version and the user's edit are kept
  EXPECT_EQ(versions[0].id, v1);
  EXPECT_EQ(versions[1].id, edit);
  EXPECT_EQ(versions[2].id, v2);
  EXPECT_EQ(versions[2].parent_id, v1);
  EXPECT_EQ(versions[2].origin.kind, OriginKind::builtin);
  EXPECT_TRUE(store.latest_build_log(v2)->ok);

  // Each version runs with its own plan.
  EXPECT_EQ(stored_candidate(store, v1)->candidate, first);
  EXPECT_EQ(stored_candidate(store, v2)->candidate, second);
  EXPECT_EQ(stored_candidate(store, edit)->candidate.plan.steps.at(0).grid[0], 4);

  // A third generation: the parent is the newest builtin version; the same candidate again adds none.
  Candidate third = candidate(group(0), "nova_g0_v3", 264);
  int64_t v3 = store_generated(store, {generated(group(0), third)}).primary.at(0);
  EXPECT_EQ(store.version(v3).parent_id, v2);
  EXPECT_EQ(store_generated(store, {generated(group(0), third)}).primary.at(0), 0);
  EXPECT_EQ(store.all_versions().size(), 4u);
}

TEST(StoredGeneration, AlternativesAreVersionsBesideThePrimaryAndAreNotStoredTwice) {
  ProjectStore store = ProjectStore::create(test::scratch_dir("gen_alternatives") / "p");
  Candidate primary = candidate(group(0), "nova_g0_library", 4);
  Candidate tensor_cores = candidate(group(0), "nova_g0_tf32x3", 96);
  tensor_cores.origin.rule = "gemm_tf32x3";
  GeneratedGroup r = generated(group(0), primary);
  r.alternatives.push_back({tensor_cores, r.build});
  StoredGeneration first = store_generated(store, {r});
  ASSERT_EQ(first.primary.size(), 1u);
  ASSERT_NE(first.primary[0], 0);
  ASSERT_EQ(first.alternatives.size(), 1u);
  EXPECT_EQ(first.added(), 2);
  CandidateVersion alt = store.version(first.alternatives[0]);
  EXPECT_EQ(alt.parent_id, first.primary[0]);  // the diff view compares it with the primary
  EXPECT_EQ(alt.origin.rule, "gemm_tf32x3");
  EXPECT_EQ(alt.origin.kind, OriginKind::builtin);
  EXPECT_EQ(stored_candidate(store, alt.id)->candidate, tensor_cores);
  EXPECT_TRUE(store.latest_build_log(alt.id)->ok);

  // The same generation again adds nothing; a newer alternative goes under the older one of its
  // rule, and the unchanged primary (no longer the newest builtin version) is not stored again.
  EXPECT_EQ(store_generated(store, {r}).added(), 0);
  Candidate tensor_cores2 = candidate(group(0), "nova_g0_tf32x3_v2", 192);
  tensor_cores2.origin.rule = "gemm_tf32x3";
  GeneratedGroup r2 = generated(group(0), primary);
  r2.alternatives.push_back({tensor_cores2, r2.build});
  StoredGeneration second = store_generated(store, {r2});
  EXPECT_EQ(second.primary, std::vector<std::int64_t>{0});
  ASSERT_EQ(second.alternatives.size(), 1u);
  EXPECT_EQ(store.version(second.alternatives[0]).parent_id, alt.id);
  EXPECT_EQ(store.all_versions().size(), 3u);
  ASSERT_EQ(store.fusion_groups().size(), 1u);
}

TEST(StoredGeneration, AGroupWhoseReferenceChangedIsAnotherGroup) {
  ProjectStore store = ProjectStore::create(test::scratch_dir("gen_other_group") / "p");
  store_generated(store, {generated(group(0), candidate(group(0), "k", 4))});
  FusionGroup changed = group(0);
  changed.functional_source += "# edited model\n";
  store_generated(store, {generated(changed, candidate(changed, "k2", 4))});
  EXPECT_EQ(store.fusion_groups().size(), 2u);
}

TEST(StoredGeneration, VersionsStoredBeforeSchema4RunWithTheirGroupsPlan) {
  ProjectStore store = ProjectStore::create(test::scratch_dir("gen_fallback") / "p");
  Candidate c = candidate(group(0), "nova_g0_old", 8);
  // As store_generated wrote it before schema 4: the plan only in the group's record.
  int64_t g = store.add_fusion_group(
      {0, "group 0: elementwise", nlohmann::json{{"group", group(0)}, {"candidate", c}}.dump()});
  CandidateVersion old;
  old.group_id = g;
  old.origin = {OriginKind::builtin, "elementwise_chain", "", "", 0};
  old.source = c.cuda_source;
  int64_t v = store.add_version(old);
  int64_t edit = store.add_user_edit(v, "// edited\n" + c.cuda_source);
  auto stored = stored_candidate(store, v);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->candidate, c);
  auto edited = stored_candidate(store, edit);
  ASSERT_TRUE(edited.has_value());
  EXPECT_EQ(edited->candidate.plan, c.plan);
  EXPECT_EQ(edited->candidate.cuda_source, "// edited\n" + c.cuda_source);

  // A group record without a plan: nothing to run; an unknown version throws.
  int64_t bare = store.add_fusion_group({0, "g", "{}"});
  CandidateVersion hand;
  hand.group_id = bare;
  hand.source = "x";
  EXPECT_FALSE(stored_candidate(store, store.add_version(hand)).has_value());
  EXPECT_THROW(stored_candidate(store, 999), ProjectError);
}

TEST(StoredGeneration, FindsTheGroupsAnOlderGeneratorRevisionWrote) {
  ProjectStore store = ProjectStore::create(test::scratch_dir("gen_outdated") / "p");
  ModelGraph graph;
  graph.groups = {group(0), group(1), group(2)};
  // Group 0 as a project before schema 4 holds it (no revision recorded), group 1 declined by
  // revision 2, group 2 current.
  Candidate c0 = candidate(group(0), "k0", 4);
  int64_t g0 =
      store.add_fusion_group({0, "group 0", nlohmann::json{{"group", group(0)}, {"candidate", c0}}.dump()});
  CandidateVersion old;
  old.group_id = g0;
  old.source = c0.cuda_source;
  store.add_version(old);
  store.add_fusion_group(
      {0, "group 1", nlohmann::json{{"group", group(1)}, {"candidate", declined(group(1))}}.dump(), 2});
  store_generated(store, {generated(group(2), candidate(group(2), "k2", 4))});

  OutdatedGroups outdated = outdated_groups(store, graph);
  ASSERT_EQ(outdated.groups.size(), 2u);
  EXPECT_EQ(outdated.groups[0].id, 0);
  EXPECT_EQ(outdated.groups[1].id, 1);
  EXPECT_EQ(outdated.oldest_revision, 0);

  // Generated again by this revision (group 1 declined again): nothing is outdated any more, and no
  // group was added.
  store_generated(store, {generated(group(0), candidate(group(0), "k0_new", 8)),
                          generated(group(1), declined(group(1)))});
  EXPECT_TRUE(outdated_groups(store, graph).groups.empty());
  EXPECT_EQ(store.fusion_groups().size(), 3u);
  EXPECT_EQ(store.all_versions().size(), 3u);
}

TEST(StoredGeneration, AGenerationIsStoredWholeOrNotAtAll) {
  ProjectStore store = ProjectStore::create(test::scratch_dir("gen_all_or_nothing") / "p");
  // The second group cannot be stored (its kind is not UTF-8, so its record's JSON cannot be
  // written): storing fails after the first group and its version were written, and leaves nothing.
  FusionGroup bad = group(1);
  bad.kind = "elementwise\xff";
  EXPECT_ANY_THROW(store_generated(store, {generated(group(0), candidate(group(0), "k0", 4)),
                                           generated(bad, candidate(bad, "k1", 4))}));
  EXPECT_TRUE(store.fusion_groups().empty());
  EXPECT_TRUE(store.all_versions().empty());
  ModelGraph graph;
  graph.groups = {group(0), group(1)};
  EXPECT_EQ(missing_groups(store, graph).groups.size(), 2u);

  // The store stays usable, and the next generation is stored whole.
  StoredGeneration stored = store_generated(
      store, {generated(group(0), candidate(group(0), "k0", 4)), generated(group(1), candidate(group(1), "k1", 4))});
  EXPECT_EQ(stored.added(), 2);
  EXPECT_EQ(ProjectStore::open(store.folder()).fusion_groups().size(), 2u);
}

TEST(StoredGeneration, FindsTheGroupsTheProjectHoldsNothingFor) {
  ProjectStore store = ProjectStore::create(test::scratch_dir("gen_missing") / "p");
  ModelGraph graph;
  graph.groups = {group(0), group(1), group(2), group(3)};
  // Group 0 stored whole; group 1 a record without its version (storing cut short before a generation
  // was one transaction); group 2 declined by the generator (a record, rightly no version); group 3
  // nothing at all (a damaged WAL lost it).
  store_generated(store, {generated(group(0), candidate(group(0), "k0", 4))});
  store.add_fusion_group({0, "group 1: elementwise",
                          nlohmann::json{{"group", group(1)}, {"candidate", candidate(group(1), "k1", 4)}}.dump(),
                          kBuiltinGeneratorRevision});
  store_generated(store, {generated(group(2), declined(group(2)))});

  MissingGroups missing = missing_groups(store, graph);
  ASSERT_EQ(missing.groups.size(), 2u);
  EXPECT_EQ(missing.groups[0].id, 1);
  EXPECT_EQ(missing.groups[1].id, 3);
  EXPECT_EQ(missing.graph_groups, 4u);
  EXPECT_EQ(missing.held(), 2u);
  EXPECT_EQ(missing.describe(), "the project holds 2 of the model's 4 fusion groups (missing: 1, 3)");
  // Not outdated: this revision wrote what is there.
  EXPECT_TRUE(outdated_groups(store, graph).groups.empty());

  // Generating the missing groups completes the project: group 1 under its record, group 3 new.
  std::vector<GeneratedGroup> again;
  for (const auto& g : missing.groups) again.push_back(generated(g, candidate(g, "k" + std::to_string(g.id), 4)));
  EXPECT_EQ(store_generated(store, again).added(), 2);
  MissingGroups none = missing_groups(store, graph);
  EXPECT_TRUE(none.groups.empty());
  EXPECT_EQ(none.describe(), "");
  EXPECT_EQ(store.fusion_groups().size(), 4u);
  EXPECT_EQ(store.all_versions().size(), 3u);
}

}  // namespace
}  // namespace nova
