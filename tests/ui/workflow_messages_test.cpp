// The studio's sentences about the workflow's jobs (ui/shell/workflow_messages): the intake's message names the
// time it waited for its worker to start (Python and torch, once a session) apart from the model's own capture,
// and only where that wait was long enough to matter.
#include "ui/shell/workflow_messages.h"

#include <gtest/gtest.h>

#include "support/graph_fixtures.h"

namespace nova::ui {
namespace {

TEST(WorkflowMessages, TheIntakeMessageNamesTheWorkersStartWhenItWaitedForIt) {
  ModelGraph graph = test::graph_fixture("matmul_scaling_residual_add");
  graph.capture_route = "torch.export";
  const QString waited = WorkflowMessages::intakeDone("m.py", graph, 12.6, 11.9);
  EXPECT_TRUE(waited.startsWith(QString("m.py: %1 nodes, %2 fusion groups, captured by torch.export in 12.6 s")
                                    .arg(graph.nodes.size())
                                    .arg(graph.groups.size())))
      << waited.toStdString();
  EXPECT_TRUE(waited.contains("(11.9 s of it waiting for the worker to start: Python and torch)")) << waited.toStdString();
  // A standby that was ready: nothing to name.
  const QString ready = WorkflowMessages::intakeDone("m.py", graph, 0.8, 0.01);
  EXPECT_FALSE(ready.contains("waiting for the worker")) << ready.toStdString();
  EXPECT_TRUE(ready.contains("in 0.8 s")) << ready.toStdString();
}

}  // namespace
}  // namespace nova::ui
