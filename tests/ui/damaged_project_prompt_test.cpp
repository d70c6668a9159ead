// A project file the studio cannot open because it is damaged: StudioSession says so with the readable
// sentence, SQLite's words and the folder; the prompt shows the sentence in view and the check output
// folded away, with "Move aside and start over"; moving aside keeps the damaged file beside a new
// project, and the model then opens.
#include <cstdlib>
#include <fstream>

#include <QAbstractButton>
#include <gtest/gtest.h>

#include "core/project/project_location.h"
#include "core/project/project_store.h"
#include "support/test_paths.h"
#include "ui/shell/damaged_project_prompt.h"
#include "ui/shell/studio_session.h"

namespace nova {
namespace {
namespace fs = std::filesystem;

TEST(DamagedProjectPrompt, ADamagedProjectGetsAWayOutThatKeepsTheFile) {
  fs::path dir = test::scratch_dir("damaged_prompt");
  ::setenv("NOVA_PROJECTS", (dir / "projects").string().c_str(), 1);
  fs::path model = dir / "tiny.py";
  std::ofstream(model) << "import torch\n";
  fs::path folder = project_folder_for(model);
  fs::create_directories(folder);
  std::ofstream(folder / ProjectStore::kFileName, std::ios::binary) << std::string(4096, 'x');

  // Opening fails before any job runs: the factory is the engine's own ProjectSession.
  ui::SessionBackend backend;
  backend.gpu = [] { return QString("no GPU in this test"); };
  ui::StudioSession studio(Settings{}, backend);
  QString error;
  ASSERT_FALSE(studio.open(QString::fromStdString(model.string()), &error));
  ASSERT_TRUE(studio.lastDamagedProject().has_value()) << error.toStdString();
  const auto& damaged = *studio.lastDamagedProject();
  EXPECT_EQ(damaged.message, error);
  EXPECT_EQ(damaged.folder.toStdString(), folder.string());

  auto box = ui::DamagedProjectPrompt::build(nullptr, damaged);
  EXPECT_EQ(box->text(), damaged.message);  // the sentence in view
  EXPECT_EQ(box->detailedText(), damaged.detail);  // SQLite's words folded away
  EXPECT_TRUE(box->informativeText().contains(damaged.folder));
  ASSERT_NE(ui::DamagedProjectPrompt::moveAsideButton(*box), nullptr);

  bool ok = false;
  QString sentence = ui::DamagedProjectPrompt::moveAside(damaged.folder, &ok);
  EXPECT_TRUE(ok) << sentence.toStdString();
  EXPECT_FALSE(fs::exists(folder / ProjectStore::kFileName));
  int kept = 0;
  for (const auto& e : fs::directory_iterator(folder))
    kept += e.path().filename().string().rfind("project.nova.damaged-", 0) == 0;
  EXPECT_EQ(kept, 1) << "the damaged file stays beside the new project";
  EXPECT_TRUE(sentence.contains("project.nova.damaged-")) << sentence.toStdString();

  // A second move finds nothing to move and says so, changing nothing.
  bool again = true;
  EXPECT_TRUE(ui::DamagedProjectPrompt::moveAside(damaged.folder, &again).startsWith("The damaged project could not"));
  EXPECT_FALSE(again);
  ::unsetenv("NOVA_PROJECTS");
}

}  // namespace
}  // namespace nova
