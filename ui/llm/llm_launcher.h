#pragma once
#include <QObject>
#include <QString>

#include <functional>

namespace nova {
struct Settings;
struct ModelGraph;
}  // namespace nova

namespace nova::ui {

class LlmPanel;
class StudioSession;

// "Send to LLM" from anywhere in the studio (a hot op, a graph node or group, a version): checks what
// a search needs before anything is sent (an open model, a provider in the settings, its key from the
// environment or the keychain, the sandbox or this project's consent to run without it, asked for in a
// non-modal box), then starts the search in the LLM panel. Every refusal is said in the panel.
class LlmLauncher : public QObject {
  Q_OBJECT
 public:
  // `settings`: the studio's, read at each send (the dialog may change them); `showPanel` raises the
  // LLM dock; `currentModel` says which model is open (a consent given for another is dropped).
  LlmLauncher(StudioSession& studio, const Settings& settings, LlmPanel& panel, std::function<void()> showPanel,
              std::function<QString()> currentModel, QWidget* window);
  // Starts a search on fusion group `group`; false (said in the panel) when it cannot start.
  bool send(int group);
  // The hot-op table's selection: fusion group ids, or node ids whose groups are meant.
  void sendNodes(const QList<int>& ids, bool groups, const ModelGraph* graph);
  // A stored version: the search runs on its group (the search chooses its parent).
  void sendVersion(qint64 version);

 private:
  void askToRunUnsandboxed(int group, const QString& refusal);

  StudioSession& studio_;
  const Settings& settings_;
  LlmPanel& panel_;
  std::function<void()> showPanel_;
  std::function<QString()> currentModel_;
  QWidget* window_;
};

}  // namespace nova::ui
