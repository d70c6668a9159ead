#pragma once
// Where the studio finds a provider's API key: the environment variable the provider names
// (api_key_env) first, else the system keychain (QtKeychain: the desktop's Secret Service), under the
// service "nova-studio" and the provider's name. The key lives in memory only: it is handed to the
// LLM client, never written to the settings file, a log, the project or a worker's environment.
// QtKeychain's plaintext fallback is off, so a machine without a keychain stores nothing.
#include <QString>

#include "core/llm/llm_provider.h"

namespace nova::ui {

class ApiKeySource {
 public:
  struct Found {
    QString key;     // empty: no key (a local server needs none), or none found (see error)
    QString where;   // "environment variable X", "system keychain", "none needed"
    QString error;   // set when a key is needed and none was found: what was tried
  };
  // Blocks (running an event loop) for at most `timeoutMs` while the keychain answers.
  static Found find(const LlmProvider& provider, int timeoutMs = 5000);
  // Stores `key` in the system keychain for `provider_name`; an empty string when stored, else why not.
  static QString store(const QString& provider_name, const QString& key, int timeoutMs = 5000);
  // The keychain's own entry only (no environment); `error` says why nothing came back.
  static QString readKeychain(const QString& provider_name, QString* error, int timeoutMs = 5000);
  static constexpr const char* kService = "nova-studio";
};

}  // namespace nova::ui
