#include "core/worker/worker_client.h"

#include "core/env/resource_paths.h"
#include "core/worker/worker_env.h"

namespace nova {
using namespace std::chrono;
using nlohmann::json;

WorkerClient::WorkerClient(std::string python, milliseconds start_timeout)
    : python_(python.empty() ? default_python() : std::move(python)), start_timeout_(start_timeout) {}

WorkerClient::~WorkerClient() {
  try {
    stop();
  } catch (...) {
  }
}

bool WorkerClient::running() const { return conn_ && conn_->running(); }

void WorkerClient::discard() {
  if (!conn_) return;
  conn_->terminate(milliseconds(500));
  last_stderr_ = conn_->stderr_text();
  conn_.reset();
}

std::string WorkerClient::stderr_tail(std::size_t max_bytes) const {
  const std::string& text = conn_ ? conn_->stderr_text() : last_stderr_;
  return text.size() > max_bytes ? text.substr(text.size() - max_bytes) : text;
}

const WorkerInfo& WorkerClient::start() {
  if (running()) return info_;
  discard();
  ChildProcess::Env env = WorkerEnv::make();  // never litters the user's model folder with bytecode
  conn_ = std::make_unique<WorkerConnection>(std::vector<std::string>{python_, "-m", "nova_worker"}, env,
                                             python_package_dir().string());
  ++starts_;
  try {
    info_ = conn_->await_hello(steady_clock::now() + start_timeout_);
  } catch (const WorkerError&) {
    discard();
    throw;
  }
  return info_;
}

json WorkerClient::request(const std::string& cmd, const json& args, milliseconds timeout,
                           const Progress& progress, const std::function<bool()>& cancelled) {
  start();
  WorkerRequestOptions options;
  options.timeout = timeout;
  options.progress = progress;
  options.cancelled = cancelled;
  options.doing_follows_progress = true;
  try {
    return conn_->call(cmd, args, options);
  } catch (const WorkerError&) {
    if (!conn_->running()) discard();  // crashed, timed out or ended: the next request starts afresh
    throw;
  }
}

void WorkerClient::stop() {
  if (!conn_) return;
  conn_->shutdown();
  discard();
}

}  // namespace nova
