#include "ui/llm/api_key_source.h"

#include <QEventLoop>
#include <QTimer>

#include <cstdlib>

#include <qt6keychain/keychain.h>

namespace nova::ui {
namespace {

// Runs a keychain job to its end, or until `timeoutMs` passed; false on timeout.
bool runJob(QKeychain::Job& job, int timeoutMs) {
  job.setAutoDelete(false);
  job.setInsecureFallback(false);
  QEventLoop loop;
  bool done = false;
  QObject::connect(&job, &QKeychain::Job::finished, &loop, [&] {
    done = true;
    loop.quit();
  });
  QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
  job.start();
  if (!done) loop.exec();
  return done;
}

}  // namespace

QString ApiKeySource::readKeychain(const QString& provider_name, QString* error, int timeoutMs) {
  QKeychain::ReadPasswordJob job(kService);
  job.setKey(provider_name);
  if (!runJob(job, timeoutMs)) {
    if (error) *error = QString("the system keychain did not answer within %1 s").arg(timeoutMs / 1000);
    return {};
  }
  if (job.error() != QKeychain::NoError) {
    if (error) *error = QString("the system keychain has no key for %1 (%2)").arg(provider_name, job.errorString());
    return {};
  }
  return job.textData();
}

QString ApiKeySource::store(const QString& provider_name, const QString& key, int timeoutMs) {
  if (provider_name.trimmed().isEmpty()) return "the provider has no name to store its key under";
  QKeychain::WritePasswordJob job(kService);
  job.setKey(provider_name);
  job.setTextData(key);
  if (!runJob(job, timeoutMs)) return QString("the system keychain did not answer within %1 s").arg(timeoutMs / 1000);
  if (job.error() != QKeychain::NoError) return QString("the system keychain refused it: %1").arg(job.errorString());
  return {};
}

ApiKeySource::Found ApiKeySource::find(const LlmProvider& provider, int timeoutMs) {
  Found f;
  const QString variable = QString::fromStdString(provider.api_key_env);
  if (!variable.isEmpty()) {
    const char* value = std::getenv(provider.api_key_env.c_str());
    if (value && *value) {
      f.key = QString::fromUtf8(value);
      f.where = "environment variable " + variable;
      return f;
    }
  }
  QString keychainError;
  f.key = readKeychain(QString::fromStdString(provider.name), &keychainError, timeoutMs);
  if (!f.key.isEmpty()) {
    f.where = "system keychain";
    return f;
  }
  if (variable.isEmpty()) {
    f.where = "none needed";  // a local server: no variable named and nothing in the keychain
    return f;
  }
  f.error = QString("no API key for %1: the environment variable %2 is unset or empty, and %3")
                .arg(QString::fromStdString(provider.name), variable, keychainError);
  return f;
}

}  // namespace nova::ui
