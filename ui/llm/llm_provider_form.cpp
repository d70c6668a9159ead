#include "ui/llm/llm_provider_form.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

#include <algorithm>
#include <iterator>

#include "ui/llm/api_key_source.h"

namespace nova::ui {
namespace {

QDoubleSpinBox* money(QWidget* parent, const char* name) {
  auto* box = new QDoubleSpinBox(parent);
  box->setObjectName(name);
  box->setRange(0, 1000);
  box->setDecimals(3);
  box->setPrefix("$");
  box->setSuffix(" / M tokens");
  return box;
}

}  // namespace

LlmProviderForm::LlmProviderForm(std::vector<LlmProvider> providers, const std::string& default_provider,
                                 QWidget* parent)
    : QWidget(parent), providers_(std::move(providers)) {
  auto* form = new QFormLayout(this);
  form->setContentsMargins(0, 0, 0, 0);
  list_ = new QComboBox(this);
  list_->setObjectName("llmProviders");
  auto* add = new QPushButton(tr("Add"), this);
  remove_ = new QPushButton(tr("Remove"), this);
  auto* row = new QHBoxLayout;
  row->addWidget(list_, 1);
  row->addWidget(add);
  row->addWidget(remove_);
  form->addRow(tr("LLM provider:"), row);

  name_ = new QLineEdit(this);
  name_->setObjectName("llmName");
  protocol_ = new QComboBox(this);
  protocol_->setObjectName("llmProtocol");
  protocol_->addItem(tr("OpenAI Chat Completions"), "openai");
  protocol_->addItem(tr("Anthropic Messages"), "anthropic");
  baseUrl_ = new QLineEdit(this);
  baseUrl_->setObjectName("llmBaseUrl");
  baseUrl_->setPlaceholderText("http://127.0.0.1:8000/v1");
  model_ = new QLineEdit(this);
  model_->setObjectName("llmModel");
  maxTokens_ = new QSpinBox(this);
  maxTokens_->setObjectName("llmMaxTokens");
  maxTokens_->setRange(1, 1'000'000);
  temperature_ = new QDoubleSpinBox(this);
  temperature_->setObjectName("llmTemperature");
  temperature_->setRange(0, 2);
  temperature_->setSingleStep(0.1);
  usdIn_ = money(this, "llmUsdIn");
  usdOut_ = money(this, "llmUsdOut");
  keyEnv_ = new QLineEdit(this);
  keyEnv_->setObjectName("llmKeyEnv");
  keyEnv_->setPlaceholderText(tr("e.g. ANTHROPIC_API_KEY (empty: a local server without a key)"));
  key_ = new QLineEdit(this);
  key_->setObjectName("llmKey");
  key_->setEchoMode(QLineEdit::Password);
  key_->setPlaceholderText(tr("stored in the system keychain only, never in the settings file"));
  storeKey_ = new QPushButton(tr("Store in keychain"), this);
  storeKey_->setObjectName("llmStoreKey");
  auto* keyRow = new QHBoxLayout;
  keyRow->addWidget(key_, 1);
  keyRow->addWidget(storeKey_);
  keyStatus_ = new QLabel(tr("The key is read from the environment variable first, then from the keychain."), this);
  keyStatus_->setWordWrap(true);
  keyStatus_->setObjectName("llmKeyStatus");
  default_ = new QComboBox(this);
  default_->setObjectName("llmDefault");

  form->addRow(tr("Name:"), name_);
  form->addRow(tr("Protocol:"), protocol_);
  form->addRow(tr("Base URL:"), baseUrl_);
  form->addRow(tr("Model:"), model_);
  form->addRow(tr("Max tokens:"), maxTokens_);
  form->addRow(tr("Temperature:"), temperature_);
  form->addRow(tr("Cost in:"), usdIn_);
  form->addRow(tr("Cost out:"), usdOut_);
  form->addRow(tr("Key variable:"), keyEnv_);
  form->addRow(tr("API key:"), keyRow);
  form->addRow(QString(), keyStatus_);
  form->addRow(tr("Send to LLM uses:"), default_);

  refreshNames();
  default_->setCurrentIndex(std::max(0, default_->findText(QString::fromStdString(default_provider))));
  showProvider(providers_.empty() ? -1 : 0);

  connect(list_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (filling_) return;
    commit();
    showProvider(index);
  });
  connect(add, &QPushButton::clicked, this, [this] {
    commit();
    LlmProvider p;
    p.name = "provider" + std::to_string(providers_.size() + 1);
    providers_.push_back(p);
    refreshNames();
    showProvider(static_cast<int>(providers_.size()) - 1);
  });
  connect(remove_, &QPushButton::clicked, this, [this] {
    if (current_ < 0) return;
    providers_.erase(providers_.begin() + current_);
    current_ = -1;
    refreshNames();
    showProvider(providers_.empty() ? -1 : 0);
  });
  connect(name_, &QLineEdit::editingFinished, this, [this] {
    commit();
    refreshNames();
  });
  connect(storeKey_, &QPushButton::clicked, this, &LlmProviderForm::storeKey);
}

void LlmProviderForm::refreshNames() {
  filling_ = true;
  const QString chosen = default_->currentText();
  list_->clear();
  default_->clear();
  for (const auto& p : providers_) {
    list_->addItem(QString::fromStdString(p.name));
    default_->addItem(QString::fromStdString(p.name));
  }
  if (current_ >= 0) list_->setCurrentIndex(current_);
  default_->setCurrentIndex(std::max(0, default_->findText(chosen)));
  filling_ = false;
}

void LlmProviderForm::showProvider(int index) {
  current_ = index;
  const bool any = index >= 0 && index < static_cast<int>(providers_.size());
  for (QWidget* w : std::initializer_list<QWidget*>{name_, protocol_, baseUrl_, model_, maxTokens_, temperature_,
                                                    usdIn_, usdOut_, keyEnv_, key_, storeKey_, remove_})
    w->setEnabled(any);
  if (!any) return;
  filling_ = true;
  const LlmProvider& p = providers_[index];
  list_->setCurrentIndex(index);
  name_->setText(QString::fromStdString(p.name));
  protocol_->setCurrentIndex(protocol_->findData(QString::fromStdString(to_string(p.protocol))));
  baseUrl_->setText(QString::fromStdString(p.base_url));
  model_->setText(QString::fromStdString(p.model));
  maxTokens_->setValue(p.max_tokens);
  temperature_->setValue(p.temperature);
  usdIn_->setValue(p.usd_per_mtok_in);
  usdOut_->setValue(p.usd_per_mtok_out);
  keyEnv_->setText(QString::fromStdString(p.api_key_env));
  key_->clear();
  filling_ = false;
}

void LlmProviderForm::commit() {
  if (current_ < 0 || current_ >= static_cast<int>(providers_.size())) return;
  LlmProvider& p = providers_[current_];
  p.name = name_->text().trimmed().toStdString();
  p.protocol = llm_protocol_from_string(protocol_->currentData().toString().toStdString());
  p.base_url = baseUrl_->text().trimmed().toStdString();
  p.model = model_->text().trimmed().toStdString();
  p.max_tokens = maxTokens_->value();
  p.temperature = temperature_->value();
  p.usd_per_mtok_in = usdIn_->value();
  p.usd_per_mtok_out = usdOut_->value();
  p.api_key_env = keyEnv_->text().trimmed().toStdString();
}

std::vector<LlmProvider> LlmProviderForm::providers() {
  commit();
  std::vector<LlmProvider> out;
  std::copy_if(providers_.begin(), providers_.end(), std::back_inserter(out),
               [](const LlmProvider& p) { return !p.name.empty(); });
  return out;
}

std::string LlmProviderForm::defaultProvider() {
  commit();
  return default_->currentText().toStdString();
}

void LlmProviderForm::storeKey() {
  commit();
  if (current_ < 0 || key_->text().isEmpty()) {
    keyStatus_->setText(tr("Type a key first."));
    return;
  }
  const QString name = QString::fromStdString(providers_[current_].name);
  const QString problem = ApiKeySource::store(name, key_->text());
  key_->clear();  // out of the widget either way
  keyStatus_->setText(problem.isEmpty() ? tr("The key for %1 is in the system keychain.").arg(name)
                                        : tr("Not stored: %1. Set the key variable instead.").arg(problem));
}

}  // namespace nova::ui
