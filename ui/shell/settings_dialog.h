#pragma once
// Edits nova::Settings (the worker's Python interpreter, the CUDA toolkit, how benchmarks run, the LLM
// providers, the GPU lanes and
// a Ray cluster for GPU work) and can check the interpreter in the background before saving.
#include <QDialog>

#include "core/env/settings.h"

class QCheckBox;
class QLineEdit;
class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace nova::ui {

class LlmProviderForm;

class SettingsDialog : public QDialog {
  Q_OBJECT
 public:
  explicit SettingsDialog(const Settings& settings, QWidget* parent = nullptr);
  Settings settings() const;

 public slots:
  void checkPython();

 signals:
  void pythonChecked(const QString& summary, bool ok);

 private:
  Settings base_;
  QLineEdit* python_;
  QLineEdit* toolkit_;
  LlmProviderForm* llm_;
  QCheckBox* copyReference_;
  QComboBox* l2Flush_;
  QSpinBox* gpuLanes_;
  QLineEdit* rayAddress_;
  QLineEdit* rayGpuKind_;
  QLabel* pythonStatus_;
  QPushButton* checkButton_;
};

}  // namespace nova::ui
