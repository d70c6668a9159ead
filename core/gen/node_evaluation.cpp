#include "core/gen/node_evaluation.h"

#include <stdexcept>
#include <utility>

namespace nova {

NodeEvaluation::Operand NodeEvaluation::Operand::known(std::string value) {
  Operand o;
  o.value_ = std::move(value);
  return o;
}

NodeEvaluation::Operand NodeEvaluation::Operand::of(std::string tensor, std::vector<std::string> coords) {
  Operand o;
  o.request_ = Request{std::move(tensor), std::move(coords)};
  return o;
}

void NodeEvaluation::Operand::await_suspend(std::coroutine_handle<promise_type> handle) noexcept {
  promise_ = &handle.promise();
  promise_->request = std::move(request_);
}

std::string NodeEvaluation::Operand::await_resume() {
  if (value_) return std::move(*value_);
  return std::move(promise_->answer);
}

NodeEvaluation::NodeEvaluation(NodeEvaluation&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)) {}

NodeEvaluation& NodeEvaluation::operator=(NodeEvaluation&& other) noexcept {
  if (this != &other) {
    if (handle_) handle_.destroy();
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

NodeEvaluation::~NodeEvaluation() {
  if (handle_) handle_.destroy();
}

void NodeEvaluation::resume() {
  handle_.promise().request.reset();
  handle_.resume();
}

bool NodeEvaluation::done() const { return handle_.done(); }

NodeEvaluation::Request NodeEvaluation::take_request() {
  auto& request = handle_.promise().request;
  if (!request) throw std::logic_error("a node evaluation was asked for an operand it does not wait for");
  Request r = std::move(*request);
  request.reset();
  return r;
}

void NodeEvaluation::answer(std::string value) { handle_.promise().answer = std::move(value); }

std::string NodeEvaluation::result() {
  if (handle_.promise().error) std::rethrow_exception(handle_.promise().error);
  return std::move(handle_.promise().result);
}

}  // namespace nova
