#pragma once
// One graph node being evaluated by the pointwise emitter, as a C++20 coroutine: the evaluation
// suspends at each operand whose value it needs, and the emitter's work stack (PointwiseEmitter::
// value) evaluates that operand and resumes it with the operand's C expression. A chain of any
// length is so evaluated in a loop over heap-allocated frames instead of one native call per op: a
// fusion group of 10,000 elementwise ops overflowed the stack when each op was a nested call.
#include <coroutine>
#include <exception>
#include <optional>
#include <string>
#include <vector>

namespace nova {

// A node evaluation: resumed step by step by the work stack until it has the node's expression.
class NodeEvaluation {
 public:
  // A value the evaluation waits for: `tensor` at `coords`.
  struct Request {
    std::string tensor;
    std::vector<std::string> coords;
  };

  struct promise_type {
    std::optional<Request> request;  // set while suspended on an operand
    std::string answer;              // that operand's value, set before resuming
    std::string result;
    std::exception_ptr error;

    NodeEvaluation get_return_object() {
      return NodeEvaluation(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_value(std::string value) { result = std::move(value); }
    void unhandled_exception() { error = std::current_exception(); }
  };

  // What an evaluation `co_await`s: a value it knows already (a constant's literal), or a request
  // that suspends it until the work stack answers.
  class Operand {
   public:
    static Operand known(std::string value);
    static Operand of(std::string tensor, std::vector<std::string> coords);

    bool await_ready() const noexcept { return value_.has_value(); }
    void await_suspend(std::coroutine_handle<promise_type> handle) noexcept;
    std::string await_resume();

   private:
    std::optional<std::string> value_;
    Request request_;
    promise_type* promise_ = nullptr;
  };

  NodeEvaluation(NodeEvaluation&& other) noexcept;
  NodeEvaluation& operator=(NodeEvaluation&& other) noexcept;
  NodeEvaluation(const NodeEvaluation&) = delete;
  NodeEvaluation& operator=(const NodeEvaluation&) = delete;
  ~NodeEvaluation();

  // Runs the evaluation up to its next operand request, or to its end.
  void resume();
  bool done() const;
  // After resume() left it waiting: the operand it waits for.
  Request take_request();
  // The operand's value; the next resume() continues with it.
  void answer(std::string value);
  // Once done(): the node's expression; rethrows what the evaluation threw.
  std::string result();

 private:
  explicit NodeEvaluation(std::coroutine_handle<promise_type> handle) : handle_(handle) {}
  std::coroutine_handle<promise_type> handle_;
};

}  // namespace nova
