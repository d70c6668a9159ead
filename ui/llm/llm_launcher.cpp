#include "ui/llm/llm_launcher.h"

#include <QMessageBox>
#include <QPushButton>

#include "core/env/settings.h"
#include "core/graph/model_graph.h"
#include "core/sandbox/sandbox_policy.h"
#include "core/sandbox/sandbox_refused.h"
#include "core/sandbox/unsandboxed_consent.h"
#include "core/session/stored_generation.h"
#include "ui/llm/api_key_source.h"
#include "ui/llm/llm_panel.h"
#include "ui/shell/studio_session.h"

namespace nova::ui {

LlmLauncher::LlmLauncher(StudioSession& studio, const Settings& settings, LlmPanel& panel,
                         std::function<void()> showPanel, std::function<QString()> currentModel, QWidget* window)
    : QObject(window),
      studio_(studio),
      settings_(settings),
      panel_(panel),
      showPanel_(std::move(showPanel)),
      currentModel_(std::move(currentModel)),
      window_(window) {}

void LlmLauncher::sendNodes(const QList<int>& ids, bool groups, const ModelGraph* graph) {
  if (ids.isEmpty()) return;
  int group = ids.front();
  if (!groups) {
    const FusionGroup* g = graph ? graph->group_of(group) : nullptr;
    if (!g) {
      panel_.showProblem(tr("Node %1 belongs to no fusion group: nothing to send to the LLM.").arg(group));
      showPanel_();
      return;
    }
    group = g->id;
  }
  send(group);
}

void LlmLauncher::sendVersion(qint64 version) {
  if (!studio_.session()) return;
  const ProjectStore& store = studio_.session()->store();
  int64_t group_record = 0;
  try {
    group_record = store.version(version).group_id;
  } catch (const std::exception& e) {
    panel_.showProblem(tr("Version %1: %2").arg(version).arg(e.what()));
    return;
  }
  for (const auto& g : stored_groups(store))
    if (g.record_id == group_record) send(g.group.id);
}

bool LlmLauncher::send(int group) {
  showPanel_();
  if (!studio_.session()) {
    panel_.showProblem(tr("Open a model first: the LLM search runs on one of its fusion groups."));
    return false;
  }
  const auto& providers = settings_.llm_providers;
  if (providers.empty()) {
    panel_.showProblem(tr("No LLM provider is set up: add one in Tools > Settings… (base URL, model, key "
                          "variable); the key itself goes in that variable or the system keychain."));
    return false;
  }
  LlmProvider provider = providers.front();
  if (!settings_.llm_default_provider.empty()) {
    try {
      provider = find_llm_provider(providers, settings_.llm_default_provider);
    } catch (const std::exception& e) {
      panel_.showProblem(tr("The default LLM provider: %1").arg(e.what()));
      return false;
    }
  }
  const ApiKeySource::Found key = ApiKeySource::find(provider);
  if (!key.error.isEmpty()) {
    panel_.showProblem(key.error);
    return false;
  }
  // LLM-written code runs in the sandbox; where it cannot start, only with this project's consent.
  ProjectSession& session = *studio_.session();
  try {
    SandboxPolicy::decide(session.project_dir(), session.options().bwrap);
  } catch (const SandboxRefused& e) {
    askToRunUnsandboxed(group, QString::fromUtf8(e.what()));
    return false;
  } catch (const std::exception& e) {
    panel_.showProblem(tr("The project's sandbox setting cannot be read: %1").arg(e.what()));
    return false;
  }
  return panel_.start(session, provider, key.key.toStdString(), group, studio_.gpuMissing());
}

void LlmLauncher::askToRunUnsandboxed(int group, const QString& refusal) {
  panel_.showProblem(refusal);
  auto* box = new QMessageBox(QMessageBox::Warning, tr("No sandbox for LLM-written code"),
                              tr("The sandbox for code an LLM writes cannot start here, so the search did not "
                                 "start and nothing was sent to the provider."),
                              QMessageBox::NoButton, window_);
  box->setObjectName("unsandboxedPrompt");
  box->setInformativeText(tr("Allow LLM-written code to run without the sandbox for this project only? Its "
                             "results will say \"sandboxed: false\". (nova llm --require-sandbox withdraws it.)"));
  box->setDetailedText(refusal);
  QPushButton* allow = box->addButton(tr("Allow for this project"), QMessageBox::AcceptRole);
  allow->setObjectName("allowUnsandboxed");
  box->addButton(QMessageBox::Cancel);
  box->setAttribute(Qt::WA_DeleteOnClose);
  const QString model = currentModel_();
  connect(box, &QMessageBox::buttonClicked, this, [this, allow, group, model](QAbstractButton* clicked) {
    if (clicked != static_cast<QAbstractButton*>(allow) || currentModel_() != model || !studio_.session()) return;
    try {
      UnsandboxedConsent::set(studio_.session()->project_dir(), true);
    } catch (const std::exception& e) {
      panel_.showProblem(tr("The consent cannot be stored in the project: %1").arg(e.what()));
      return;
    }
    send(group);
  });
  box->open();  // not exec(): the studio goes on while the question is shown
}

}  // namespace nova::ui
