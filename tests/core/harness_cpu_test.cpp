// The candidate harness (nova_worker.harness.CandidateRunner) on the CPU, with a stand-in for
// libcuda: cuLaunchKernel is a C function pointer (a ctypes callback, called without argtypes as
// the real one is) that runs the "kernel" on host memory from the parameters it was handed, and
// the raw stream query returns a known handle. What this proves without a GPU: the launch
// arguments prepared once (dims, stream holder, parameter array) reach the driver with each call's
// data pointers and scalars; a library step's result is used without allocating it first; the
// allocator validation swaps in is used; wrong inputs are refused with the reason; and the bench's
// timed candidate callable is the bare call, as eager's is.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/env/settings.h"
#include "core/worker/child_process.h"
#include "support/worker_python.h"

namespace nova {
namespace {

constexpr const char* kHarnessScript = R"(
import ctypes, json, torch
from nova_worker import candidates, harness
from nova_worker.reference import Instance

launches = []
def kernel(fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
    # out[i, j] = temp[i, j] * scale + bias[j]  for n = rows * cols elements
    p = lambda i: ctypes.cast(params[i], ctypes.POINTER(ctypes.c_void_p)).contents.value
    temp_ptr, bias_ptr, out_ptr = p(0), p(1), p(2)
    n = ctypes.cast(params[3], ctypes.POINTER(ctypes.c_int64)).contents.value
    cols = ctypes.cast(params[4], ctypes.POINTER(ctypes.c_int32)).contents.value
    scale = ctypes.cast(params[5], ctypes.POINTER(ctypes.c_float)).contents.value
    view = lambda ptr, k: torch.frombuffer((ctypes.c_float * k).from_address(ptr), dtype=torch.float32)
    view(out_ptr, n).copy_(view(temp_ptr, n) * scale + view(bias_ptr, cols).repeat(n // cols))
    launches.append({"fn": fn, "dims": [gx, gy, gz, bx, by, bz, shared], "stream": stream,
                     "out_ptr": out_ptr, "bias_ptr": bias_ptr, "extra": extra})
    return 700 if scale < 0 else 0

proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *[ctypes.c_uint] * 7, ctypes.c_void_p,
                         ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)
callback = proto(kernel)
launch = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.cast(callback, ctypes.c_void_p).value)  # no argtypes

class FakeLib:
    cuLaunchKernel = launch
    def cuGetErrorString(self, code, out): return 0

class FakeModule:
    def __init__(self, cubin, names):
        self._lib = FakeLib()
        self.functions = {n: ctypes.c_void_p(0xF00 + i) for i, n in enumerate(names)}

harness.CompiledModule = FakeModule
torch._C._cuda_getCurrentRawStream = lambda index: 0x5000 + index

def plan(scale=0.5, temp_shape=(4, 3)):
    return {"plan": {
        "inputs": [{"name": "x", "shape": [4, 5], "dtype": "float32"},
                   {"name": "w", "shape": [3, 5], "dtype": "float32"},
                   {"name": "bias", "shape": [3], "dtype": "float32"}],
        "outputs": [{"name": "out", "shape": [4, 3], "dtype": "float32"}],
        "temps": [{"name": "mm", "shape": list(temp_shape), "dtype": "float32"}],
        "steps": [
            {"type": "library", "op": "aten.mm.default", "out": "temp:0",
             "args": [{"ref": "input:0"}, {"ref": "input:1", "view": "t"}]},
            {"type": "kernel", "kernel": "epilogue", "grid": [3, 2, 1], "block": [128, 1, 1], "shared_bytes": 64,
             "args": [{"ref": "temp:0"}, {"ref": "input:2"}, {"ref": "output:0"},
                      {"scalar_type": "int64", "scalar": 12}, {"scalar_type": "int32", "scalar": 3},
                      {"scalar_type": "float", "scalar": scale}]}]}}

def error(fn):
    try:
        fn()
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    return "no error"

torch.manual_seed(0)
x, w, bias = torch.randn(4, 5), torch.randn(3, 5), torch.randn(3)
expect = (x @ w.t()) * 0.5 + bias
runner = harness.CandidateRunner(plan(), b"", "cpu")
allocations = []
def counting(shape, dtype):
    allocations.append([list(shape), str(dtype)])
    return candidates.poison(torch.empty(shape, dtype=dtype))
runner.allocator = counting
first = runner(x, w, bias)
second = runner(x, w, bias)
bare = Instance(None, [x, w, bias]).candidate_fn(runner)()
good_launches = list(launches)
out = {
    "outputs": [len(first), len(bare)],
    "max_err": max(float((o[0] - expect).abs().max()) for o in (first, second, bare)),
    "distinct_outputs": first[0].data_ptr() != second[0].data_ptr(),
    "launches": good_launches,
    "first_out_ptr": first[0].data_ptr(), "second_out_ptr": second[0].data_ptr(), "bias_ptr": bias.data_ptr(),
    "allocations": allocations,
    "wrong_count": error(lambda: runner(x, w)),
    "not_tensor": error(lambda: runner(x, [1.0], bias)),
    "wrong_shape": error(lambda: runner(torch.randn(5, 4), w, bias)),
    "wrong_dtype": error(lambda: runner(x.double(), w, bias)),
    "not_contiguous": error(lambda: runner(torch.randn(5, 4).t(), w, bias)),
    "wrong_device": error(lambda: harness.CandidateRunner(plan(), b"", "cuda:0")(x, w, bias)),
    "library_shape": error(lambda: harness.CandidateRunner(plan(temp_shape=(4, 4)), b"", "cpu")(x, w, bias)),
    "launch_failure": error(lambda: harness.CandidateRunner(plan(scale=-1.0), b"", "cpu")(x, w, bias)),
}
print(json.dumps(out))
)";

TEST(HarnessCpu, LaunchesWithEachCallsPointersAndRefusesWrongInputs) {
  std::string python = Settings{}.resolved_python();
  if (!test::has_torch(python)) GTEST_SKIP() << python << " has no torch";
  auto r = ChildProcess::run({python, "-c", kHarnessScript}, test::worker_env(), std::chrono::seconds(300));
  ASSERT_EQ(r.status.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);  // the script's one line
  EXPECT_EQ(j["outputs"], nlohmann::json({1, 1}));
  EXPECT_LT(j["max_err"].get<double>(), 1e-5);  // the stand-in kernel computed from the right pointers
  EXPECT_TRUE(j["distinct_outputs"]);
  ASSERT_EQ(j["launches"].size(), 3u);
  for (const auto& l : j["launches"]) {
    EXPECT_EQ(l["fn"], 0xF00);
    EXPECT_EQ(l["dims"], nlohmann::json({3, 2, 1, 128, 1, 1, 64}));
    EXPECT_EQ(l["stream"], 0x5000 - 1);  // the raw stream of the runner's device (CPU: index -1)
    EXPECT_EQ(l["bias_ptr"], j["bias_ptr"]);
    EXPECT_TRUE(l["extra"].is_null());
  }
  EXPECT_EQ(j["launches"][0]["out_ptr"], j["first_out_ptr"]);
  EXPECT_EQ(j["launches"][1]["out_ptr"], j["second_out_ptr"]);
  // Only the output is allocated, with the swapped-in allocator: the library step's result is
  // the temp, not a buffer allocated and thrown away.
  EXPECT_EQ(
      j["allocations"],
      nlohmann::json({{{4, 3}, "torch.float32"}, {{4, 3}, "torch.float32"}, {{4, 3}, "torch.float32"}}));
  EXPECT_EQ(j["wrong_count"], "ValueError: candidate takes 3 inputs, got 2");
  EXPECT_EQ(j["not_tensor"], "TypeError: input 1 (w) must be a tensor");
  EXPECT_EQ(j["wrong_shape"], "ValueError: input 0 (x): expected float32[4, 5], got float32[5, 4]");
  EXPECT_EQ(j["wrong_dtype"], "ValueError: input 0 (x): expected float32[4, 5], got float64[4, 5]");
  EXPECT_EQ(j["not_contiguous"], "ValueError: input 0 (x) must be contiguous");
  EXPECT_EQ(j["wrong_device"], "ValueError: input 0 (x) is on cpu, the candidate runs on cuda:0");
  EXPECT_EQ(j["library_shape"],
            "ValueError: library step aten.mm.default gave shape [4, 3], plan expects [4, 4]");
  EXPECT_EQ(j["launch_failure"], "CudaError: cuLaunchKernel(epilogue) failed: unknown error (700)");
}

}  // namespace
}  // namespace nova
