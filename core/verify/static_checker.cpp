#include "core/verify/static_checker.h"

#include <algorithm>
#include <regex>
#include <set>

#include <fmt/format.h>

namespace nova {
namespace {

void add_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// PyTorch compute entry points an extension may call instead of computing itself.
const std::regex kTorchOp(
    R"(\b(?:torch|at)::(conv[123]d|convolution|conv_transpose[123]d|matmul|mm|bmm|addmm|baddbmm|linear|einsum|)"
    R"(relu|gelu|silu|sigmoid|tanh|softmax|log_softmax|layer_norm|batch_norm|group_norm|)"
    R"(scaled_dot_product_attention|clamp|clamp_min|clamp_max|min|max|minimum|maximum|add|sub|mul|div|)"
    R"(sum|mean|exp|log|pow|sqrt|where|hardswish|dropout)\s*\()");
const std::regex kTensorMethodOp(
    R"(\.\s*(conv2d|matmul|mm|bmm|addmm|relu|gelu|sigmoid|tanh|softmax|clamp|clamp_min|clamp_max|minimum|)"
    R"(maximum|add|sub|mul|div|sum|mean|exp|pow|sqrt)_?\s*\()");
}  // namespace

std::string StaticChecker::strip(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  enum { Code, Line, Block, Str, Chr } state = Code;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i], n = i + 1 < s.size() ? s[i + 1] : '\0';
    switch (state) {
      case Code:
        if (c == '/' && n == '/')
          state = Line, ++i;
        else if (c == '/' && n == '*')
          state = Block, ++i, out += ' ';
        else if (c == '"')
          state = Str, out += c;
        else if (c == '\'')
          state = Chr, out += c;
        else
          out += c;
        break;
      case Line:
        if (c == '\n') state = Code, out += c;
        break;
      case Block:
        if (c == '*' && n == '/')
          state = Code, ++i;
        else if (c == '\n')
          out += c;
        break;
      case Str:
      case Chr:
        if (c == '\\')
          ++i;
        else if ((state == Str && c == '"') || (state == Chr && c == '\''))
          state = Code, out += c;
        break;
    }
  }
  return out;
}

void StaticChecker::check_common(const std::string& code, StaticReport& r) const {
  static const std::regex global(R"(__global__\s+(?:[\w:<>,\s\*&]*?\s)?(\w+)\s*\()");
  // __launch_bounds__(...) sits between the return type and the name: not a kernel name.
  static const std::regex bounds(R"(__launch_bounds__\s*\([^)]*\))");
  const std::string plain = std::regex_replace(code, bounds, " ");
  for (std::sregex_iterator it(plain.begin(), plain.end(), global), end; it != end; ++it)
    add_unique(r.kernels, (*it)[1].str());
  if (r.kernels.empty()) r.refusals.push_back("no CUDA kernel: the source defines no __global__ function");

  static const std::regex try_block(R"(\btry\s*\{)");
  static const std::regex catch_block(R"(\bcatch\s*\()");
  if (std::regex_search(code, try_block) || std::regex_search(code, catch_block))
    r.refusals.push_back("try/catch fallback: a failure must surface, not fall back to another path");
  static const std::regex shell(
      R"(\b(system|popen|execl|execlp|execle|execv|execvp|execve|fork|vfork|posix_spawn)\s*\()");
  if (std::smatch m; std::regex_search(code, m, shell))
    r.refusals.push_back(fmt::format("host code shells out ({}())", m[1].str()));
  static const std::regex net(
      R"((\bsocket\s*\(|\bconnect\s*\(|\bgetaddrinfo\s*\(|#\s*include\s*<(sys/socket|netinet/in|arpa/inet|curl/curl)\.h>))");
  if (std::smatch m; std::regex_search(code, m, net))
    r.refusals.push_back(fmt::format("host code opens network connections ({})", m[1].str()));
  static const std::regex streams(
      R"(\b(cudaStreamCreate\w*|cuStreamCreate\w*|getStreamFromPool|getStreamFromExternal)\s*\()");
  if (std::smatch m; std::regex_search(code, m, streams))
    r.refusals.push_back(
        fmt::format("creates a CUDA stream of its own ({}): work must run on the caller's stream, where it "
                    "is timed and ordered",
                    m[1].str()));
}

StaticReport StaticChecker::check_extension(const std::string& source) const {
  StaticReport r;
  const std::string code = strip(source);
  check_common(code, r);
  for (const auto& k : r.kernels) {
    std::regex launch("\\b" + k + R"(\s*(<[^<>;]*>)?\s*<<<)");
    std::regex launch_api("(cudaLaunchKernel|cudaLaunchCooperativeKernel|cudaLaunchKernelEx)\\s*\\([^;]*\\b" +
                          k + "\\b");
    if (std::regex_search(code, launch) || std::regex_search(code, launch_api)) add_unique(r.launched, k);
  }
  if (!r.kernels.empty() && r.launched.empty())
    r.refusals.push_back(fmt::format("kernel {} is defined but never launched", join(r.kernels)));
  for (const auto* re : {&kTorchOp, &kTensorMethodOp})
    for (std::sregex_iterator it(code.begin(), code.end(), *re), end; it != end; ++it)
      add_unique(r.library_calls, (*it)[1].str());
  return r;
}

StaticReport StaticChecker::check_candidate(const Candidate& c) const {
  StaticReport r;
  const std::string code = strip(c.cuda_source);
  check_common(code, r);
  static const std::regex torch_header(R"(#\s*include\s*[<"](torch|ATen|c10)/)");
  if (std::regex_search(code, torch_header))
    r.refusals.push_back(
        "device code includes torch headers: the fast path compiles it with NVRTC, without them");
  for (const auto& step : c.plan.steps) {
    if (step.type == "kernel") {
      if (std::find(r.kernels.begin(), r.kernels.end(), step.kernel) == r.kernels.end())
        r.refusals.push_back(
            fmt::format("the plan launches {}, which the source does not define", step.kernel));
      else
        add_unique(r.launched, step.kernel);
    } else if (step.type == "library") {
      add_unique(r.library_calls, step.op);
    } else {
      r.refusals.push_back(fmt::format("unknown plan step type '{}'", step.type));
    }
  }
  if (!r.kernels.empty() && r.launched.empty())
    r.refusals.push_back(fmt::format("kernel {} is defined but the plan never launches it", join(r.kernels)));
  return r;
}

}  // namespace nova
