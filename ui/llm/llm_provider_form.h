#pragma once
// The settings dialog's LLM providers: the shared settings file's llm_providers (the ones `nova llm`
// reads) with, per provider, its protocol, base URL, model, max tokens, temperature, cost per million
// tokens in and out, and the environment variable that holds its key; which one "Send to LLM" uses;
// and a password field that stores a key in the system keychain (ApiKeySource), never in the file.
#include <QWidget>

#include <string>
#include <vector>

#include "core/llm/llm_provider.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace nova::ui {

class LlmProviderForm : public QWidget {
  Q_OBJECT
 public:
  LlmProviderForm(std::vector<LlmProvider> providers, const std::string& default_provider,
                  QWidget* parent = nullptr);
  // The providers as edited (a provider without a name is left out) and the default's name.
  std::vector<LlmProvider> providers();
  std::string defaultProvider();
  // Stores the key field's text in the keychain for the provider shown, then clears the field.
  void storeKey();

 private:
  void showProvider(int index);  // fills the fields from providers_[index]
  void commit();           // writes the fields back into providers_[current_]
  void refreshNames();

  std::vector<LlmProvider> providers_;
  int current_ = -1;
  bool filling_ = false;
  QComboBox* list_;
  QComboBox* default_;
  QLineEdit* name_;
  QComboBox* protocol_;
  QLineEdit* baseUrl_;
  QLineEdit* model_;
  QSpinBox* maxTokens_;
  QDoubleSpinBox* temperature_;
  QDoubleSpinBox* usdIn_;
  QDoubleSpinBox* usdOut_;
  QLineEdit* keyEnv_;
  QLineEdit* key_;
  QPushButton* storeKey_;
  QPushButton* remove_;
  QLabel* keyStatus_;
};

}  // namespace nova::ui
