"""The whole-model check's validation (model_check.validate_model) on the CPU, with a stand-in for an
exported package: a ModelNew that matches the client's Model passes every trial and its call counts
come back; one that is wrong, or that modifies its input, fails with the reason. The benchmark times
every variant with autograd off (inference), as the group benchmarks do."""

import textwrap
import types

import pytest

torch = pytest.importorskip("torch")
from nova_worker import model_check  # noqa: E402

MODEL = textwrap.dedent("""
    import torch

    class Model(torch.nn.Module):
        def __init__(self, features):
            super().__init__()
            self.linear = torch.nn.Linear(features, features)

        def forward(self, x):
            return torch.relu(self.linear(x))

    def get_inputs():
        return [torch.randn(8, 16)]

    def get_init_inputs():
        return [16]
""")


def _package(forward, calls=None):
    """A module that looks like an exported package to model_check: ModelNew with Model's
    constructor and state_dict, and the runtime's call counters."""
    class ModelNew(torch.nn.Module):
        def __init__(self, features):
            super().__init__()
            self.linear = torch.nn.Linear(features, features)

        def forward(self, x):
            return forward(self, x)

    runtime = types.SimpleNamespace(CALLS=calls if calls is not None else {})
    return types.SimpleNamespace(ModelNew=ModelNew, _runtime=runtime, MANIFEST={"groups": []})


def _check(tmp_path, pkg, trials=3):
    # The model as core sends it to the worker (nova check-package: model_source, model_name).
    problem = model_check.load_client_model({"model_source": MODEL, "model_name": "client_model.py",
                                             "work_dir": str(tmp_path)}, "cpu")
    return model_check.validate_model(problem, pkg, trials, 1234, False, torch.device("cpu"), lambda *a, **k: None)


def test_the_client_model_loads_from_the_source_core_sends(tmp_path):
    problem = model_check.load_client_model({"model_source": MODEL, "model_name": "client_model.py",
                                             "work_dir": str(tmp_path)}, "cpu")
    assert problem.form == "model"
    assert problem.name == "client_model.py"


def test_a_functional_form_file_is_not_a_whole_model(tmp_path):
    functional = "import torch\n\ndef module_fn(x):\n    return torch.relu(x)\n\ndef get_inputs():\n    return [torch.randn(4)]\n"
    with pytest.raises(Exception) as info:
        model_check.load_client_model({"model_source": functional, "model_name": "f.py", "work_dir": str(tmp_path)}, "cpu")
    assert "needs the model file" in str(info.value)


def test_a_faithful_model_new_passes_and_its_call_counts_come_back(tmp_path):
    calls = {"group_0": {"kernel": 5, "fallback": 0}}

    def forward(self, x):
        calls["group_0"]["kernel"] += 1
        return torch.relu(self.linear(x))

    result = _check(tmp_path, _package(forward, calls))
    assert result["passed"], result["failures"]
    assert [t["seed"] for t in result["trials"]] == [1234, 1235, 1236]
    # Zeroed at the start, then two calls of ModelNew per trial.
    assert result["calls"] == {"group_0": {"kernel": 6, "fallback": 0}}


def test_a_wrong_model_new_fails_with_the_output_named(tmp_path):
    result = _check(tmp_path, _package(lambda self, x: self.linear(x)))
    assert not result["passed"]
    assert any(f.startswith("output 0: ") for f in result["failures"]), result["failures"]


def test_a_model_new_that_writes_its_input_fails(tmp_path):
    def forward(self, x):
        y = torch.relu(self.linear(x))
        x.zero_()
        return y

    result = _check(tmp_path, _package(forward), trials=1)
    assert not result["passed"]
    assert any("modified" in f for f in result["failures"]), result["failures"]


def test_a_package_that_cannot_be_imported_is_the_users_error(tmp_path):
    with pytest.raises(Exception) as info:
        model_check.import_package("nova_no_such_package_here", str(tmp_path))
    assert "cannot be imported" in str(info.value)


def test_the_whole_model_benchmark_times_every_variant_with_autograd_off(tmp_path, monkeypatch):
    """bench_model's timers and energy reading replaced by ones that call each variant and note whether
    autograd was on (the real ones need CUDA events and NVML): every variant, eager and ModelNew alike,
    runs without it, each gets its energy per call, and the method says so. torch.compile is left out (no compiler needed for this)."""
    seen = {}

    def timed(variants, *args, **kwargs):
        for name, fn in variants.items():
            fn()
            seen.setdefault(name, set()).add(torch.is_grad_enabled())
        return {name: [1.0, 1.0, 1.0] for name in variants}

    class NoFlush:
        write_bytes = read_bytes = 0

        def __init__(self, *args):
            pass

        def release(self):
            pass

    monkeypatch.setattr(model_check, "_warm_up", lambda fn: fn())
    monkeypatch.setattr(model_check, "_event_times", timed)
    monkeypatch.setattr(model_check, "_wall_times", timed)
    monkeypatch.setattr(model_check, "cold_leads", lambda variants: ({}, None, {}, 0))
    monkeypatch.setattr(model_check, "L2Flush", NoFlush)

    def energy(nvml, fn):  # bench._energy reads NVML around a loop of calls; here one call, a fixed reading
        fn()
        seen.setdefault("energy", set()).add(torch.is_grad_enabled())
        return {"available": True, "mj_per_call": 2.5, "calls": 1, "seconds": 0.3, "mean_power_w": 8.3}

    monkeypatch.setattr(model_check, "Nvml", lambda device: object())
    monkeypatch.setattr(model_check.torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(model_check, "_energy", energy)
    monkeypatch.setattr(model_check.torch, "compile", lambda module: (_ for _ in ()).throw(RuntimeError("no compiler")))
    problem = model_check.load_client_model({"model_source": MODEL, "model_name": "client_model.py",
                                             "work_dir": str(tmp_path)}, "cpu")
    pkg = _package(lambda self, x: torch.relu(self.linear(x)))
    assert torch.is_grad_enabled()
    bench = model_check.bench_model(problem, pkg, 1234, ["cold", "wall"], "clean", 3, 1.0, torch.device("cpu"),
                                    lambda *a, **k: None)
    assert torch.is_grad_enabled()  # restored for the caller
    assert seen == {"eager": {False}, "optimized": {False}, "energy": {False}}
    assert "torch.no_grad" in bench["method"]["autograd"]
    assert {m["variant"] for m in bench["measurements"]} == {"eager", "optimized"}
    assert set(bench["errors"]) == {"compile", "optimized+compile"}
    # Energy per call of every variant that was timed, as core reads it (ModelCheckResult::energy_mj).
    assert set(bench["energy"]) == {"eager", "optimized"}
    assert bench["energy"]["optimized"]["mj_per_call"] == 2.5
    assert "NVML" in bench["method"]["energy"]


def test_kernel_time_goes_to_the_first_owner_up_the_chain_of_cpu_events():
    ns = types.SimpleNamespace
    kernel = lambda us: ns(duration=us)  # noqa: E731
    group = ns(name="nova_group_3", cpu_parent=None, kernels=[])
    mm = ns(name="aten::mm", cpu_parent=group, kernels=[kernel(10.0), kernel(5.0)])
    op = ns(name="pkg::group_1_infer", cpu_parent=None, kernels=[kernel(2.0)])
    outside = ns(name="aten::add", cpu_parent=None, kernels=[kernel(1.5)])
    idle = ns(name="aten::empty", cpu_parent=group, kernels=[])
    owners = {"nova_group_3": 3, "pkg::group_1_infer": 1}
    times, counts = model_check.kernel_time_by_owner([group, mm, op, outside, idle], owners.get)
    assert times == {3: 15.0, 1: 2.0, None: 1.5}
    assert counts == {3: 2, 1: 1, None: 1}
    side = model_check._split_side(times, counts, 5, "before")
    assert side["groups"] == {"1": 0.4, "3": 3.0}
    assert side["outside_us"] == pytest.approx(0.3)
    assert side["total_us"] == pytest.approx(3.7)
    assert side["kernels_per_call"] == pytest.approx(0.8)


def test_each_groups_nodes_run_inside_a_profiler_range_named_after_the_group(tmp_path):
    """The capture numbers nodes as intake does (linear is node 0, relu node 1); with node 0 in group
    5 and node 1 in group 7, a CPU profile of the captured module shows aten::linear's work under
    nova_group_5 and aten::relu's under nova_group_7, and the outputs are the model's."""
    ns = {}
    exec(MODEL, ns)  # noqa: S102 (the test's own model)
    model = ns["Model"](16).eval()
    x = torch.randn(8, 16)
    gm, tensors, ranges = model_check.grouped_capture(model, [x], {0: 5, 1: 7})
    assert ranges == {"nova_group_5": 5, "nova_group_7": 7}
    with torch.no_grad(), torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        out = gm(*tensors)
    torch.testing.assert_close(out[0] if isinstance(out, (tuple, list)) else out, model(x))

    def owner_of(name):
        e = next(e for e in prof.events() if e.name == name)
        while e is not None and e.name not in ranges:
            e = e.cpu_parent
        return ranges[e.name] if e is not None else None
    assert owner_of("aten::linear") == 5
    assert owner_of("aten::relu") == 7


def test_a_wall_round_is_at_least_ten_calls_and_about_ten_ms():
    assert model_check.wall_round_calls(1400.0) == 10   # mlp_block: 3 calls a round before session 33
    assert model_check.wall_round_calls(100.0) == 100
    assert model_check.wall_round_calls(12.0) == 200    # at most 200
    assert model_check.wall_round_calls(0.0) == 200
