// A trace names the model and graph it was recorded from: the runner's stamp is read back, a trace
// is refused against another model's graph (naming both), an old trace without identity is still
// refused when it tags nodes the graph does not have, and is otherwise attributed with a note; the
// hot-op table explains headroom and every dash.
#include "core/trace/trace_identity_check.h"

#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/trace/attribution.h"
#include "core/trace/hot_op_ranking.h"
#include "core/trace/trace_reader.h"
#include "support/test_paths.h"

namespace nova {
namespace {

ModelGraph intake_graph(const std::string& model) {
  std::ifstream in(test::fixtures_dir() / "graphs" / (model + ".json"));
  EXPECT_TRUE(in) << "missing fixture graphs/" << model << ".json";
  return nlohmann::json::parse(in).get<ModelGraph>();
}

std::filesystem::path trace_fixture(const std::string& model) {
  return test::fixtures_dir() / "traces" / (model + ".novatrace");
}

// A copy of a recorded trace stamped as the profile runner stamps what it records.
std::filesystem::path stamped_copy(const std::string& model, const std::string& name) {
  auto path = test::scratch_dir("trace_identity") / name;
  std::filesystem::copy_file(trace_fixture(model), path, std::filesystem::copy_options::overwrite_existing);
  TraceIdentityCheck::stamp(path, TraceIdentityCheck::of(test::shared_examples_dir() / (model + ".py"),
                                                         intake_graph(model)));
  return path;
}

TEST(TraceIdentityCheck, TheStampIsReadBackWithTheTrace) {
  const Trace plain = TraceReader::read(trace_fixture("mlp_block"));
  EXPECT_FALSE(plain.identity.present());
  const Trace stamped = TraceReader::read(stamped_copy("mlp_block", "stamped.novatrace"));
  EXPECT_EQ(stamped.identity.model_name, "mlp_block.py");
  EXPECT_EQ(stamped.identity.graph_hash, TraceIdentityCheck::graph_hash(intake_graph("mlp_block")));
  EXPECT_EQ(stamped.identity.model_hash.size(), 16u);
  EXPECT_EQ(stamped.activities.size(), plain.activities.size());  // the records before it are intact
  EXPECT_TRUE(stamped.warnings == plain.warnings);
}

TEST(TraceIdentityCheck, TheGraphHashIsTheNodeSequenceSoTheWorkersListAndIntakeAgree) {
  std::ifstream in(test::fixtures_dir() / "traces" / "mlp_block.graph.json");  // the worker's node list
  ModelGraph worker = nlohmann::json::parse(in).get<ModelGraph>();
  EXPECT_EQ(TraceIdentityCheck::graph_hash(worker), TraceIdentityCheck::graph_hash(intake_graph("mlp_block")));
  EXPECT_NE(TraceIdentityCheck::graph_hash(intake_graph("mlp_block")),
            TraceIdentityCheck::graph_hash(intake_graph("tiny_transformer_block")));
}

TEST(TraceIdentityCheck, AStampedTraceIsRefusedAgainstAnotherModelsGraphNamingBoth) {
  const Trace t = TraceReader::read(stamped_copy("tiny_transformer_block", "transformer.novatrace"));
  const ModelGraph mlp = intake_graph("mlp_block");
  std::string problem = TraceIdentityCheck::problem(t, mlp, "transformer.novatrace");
  EXPECT_NE(problem.find("tiny_transformer_block.py"), std::string::npos) << problem;
  EXPECT_NE(problem.find("mlp_block.py"), std::string::npos) << problem;
  EXPECT_NE(problem.find(TraceIdentityCheck::graph_hash(mlp)), std::string::npos) << problem;
  EXPECT_EQ(TraceIdentityCheck::problem(t, intake_graph("tiny_transformer_block"), "t"), "");
  EXPECT_EQ(TraceIdentityCheck::note(t, intake_graph("tiny_transformer_block"), "t"), "");
}

TEST(TraceIdentityCheck, AnOldTraceTaggingNodesTheGraphLacksIsRefusedAndAFittingOneGetsANote) {
  const Trace t = TraceReader::read(trace_fixture("tiny_transformer_block"));
  std::string problem = TraceIdentityCheck::problem(t, intake_graph("mlp_block"), "old.novatrace");
  EXPECT_NE(problem.find("old.novatrace tags kernels with graph node"), std::string::npos) << problem;
  EXPECT_NE(problem.find("mlp_block.py"), std::string::npos) << problem;
  const ModelGraph own = intake_graph("tiny_transformer_block");
  EXPECT_EQ(TraceIdentityCheck::problem(t, own, "old.novatrace"), "");
  EXPECT_NE(TraceIdentityCheck::note(t, own, "old.novatrace").find("does not say which model"), std::string::npos);
  EXPECT_EQ(TraceIdentityCheck::problem(t, ModelGraph{}, "old.novatrace"), "");  // no graph: ids only
}

TEST(TraceIdentityCheck, IntakesGraphFillsBandwidthFlopRateAndHeadroomAndADashSaysWhy) {
  const Trace t = TraceReader::read(trace_fixture("mlp_block"));
  const AttributionResult costed = Attribution::compute(t, intake_graph("mlp_block"));
  EXPECT_EQ(costed.costs_missing, "");
  int with_headroom = 0;
  for (const auto& n : costed.nodes) with_headroom += n.headroom > 0 && n.achieved_bytes_per_s > 0;
  EXPECT_GE(with_headroom, 3);
  // The worker's node list has no costs: every rate is a dash, and the note says why.
  std::ifstream in(test::fixtures_dir() / "traces" / "mlp_block.graph.json");
  const AttributionResult bare = Attribution::compute(t, nlohmann::json::parse(in).get<ModelGraph>());
  EXPECT_NE(bare.costs_missing.find("no cost estimates"), std::string::npos);
  EXPECT_NE(HotOpRanking::dash_meaning(bare).find("no cost estimates"), std::string::npos);
  EXPECT_NE(Attribution::compute(t, ModelGraph{}).costs_missing.find("no model graph"), std::string::npos);
  EXPECT_NE(std::string(HotOpRanking::kHeadroomMeaning).find("roofline floor"), std::string::npos);
}

}  // namespace
}  // namespace nova
