"""The export package's Python side (resources/export) on the CPU, without nvcc: a package for a
shared example is assembled from the templates and a manifest made from a real intake of the model
(nova_worker), every group "shipping"; CPU kernels standing in for the CUDA ones (each group's
original PyTorch code) are registered for the ops, so the shape guard, the replacement of each group's
nodes in the captured forward, the fake functions (opcheck), the autograd formulas and torch.compile
through the ops are exercised. Also the statistics copied for benchmark.py."""

import importlib
import importlib.util
import json
import os
import shutil
import sys

import pytest

torch = pytest.importorskip("torch")
from nova_worker import intake  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATES = os.path.join(HERE, "..", "..", "resources", "export")
SHARED = os.environ.get("NOVA_SHARED", os.path.join(HERE, "..", "..", "..", "shared"))
EXAMPLES = os.path.join(SHARED, "examples")


def assemble(tmp_path, model_file, name):
    """The package's Python side as PackageWriter lays it out, with package.json from intake."""
    path = os.path.join(EXAMPLES, model_file)
    assert os.path.isfile(path), f"missing shared example {path}"
    graph = intake.run_intake({"model": path}, lambda *a, **k: None)
    root = tmp_path / "pkg"
    pkg = root / name
    (pkg / "groups").mkdir(parents=True)
    for rel in ("package/__init__.py", "package/_ops.py", "package/_runtime.py", "package/_stats.py"):
        text = open(os.path.join(TEMPLATES, rel), encoding="utf-8").read().replace("@PACKAGE@", name)
        (pkg / os.path.basename(rel)).write_text(text)
    shutil.copy(path, pkg / "client_model.py")
    groups = []
    for g in graph["groups"]:
        meta = {t["name"]: t for n in graph["nodes"] for t in n["outputs"]}
        meta.update({t["name"]: t for t in graph["inputs"]})
        meta.update({p["tensor"]["name"]: p["tensor"] for p in graph["params"]})
        spec = lambda n: {"name": n, "shape": meta[n]["shape"], "dtype": meta[n]["dtype"]}  # noqa: E731
        op = f"group_{g['id']}"
        (pkg / "groups" / f"{op}.py").write_text(g["functional_source"])
        params = ", ".join(f"Tensor input_{i}" for i in range(len(g["inputs"])))
        groups.append({"id": g["id"], "kind": g["kind"], "ships": True, "reason": "test", "nodes": g["nodes"],
                       "node_targets": [graph["nodes"][i]["target"] for i in g["nodes"]],
                       "inputs": g["inputs"], "outputs": g["outputs"], "op": op,
                       "schema": f"{op}({params}) -> Tensor[]",
                       "input_specs": [spec(n) for n in g["inputs"]], "output_specs": [spec(n) for n in g["outputs"]],
                       "functional_source": f"groups/{op}.py"})
    manifest = {"format": "nova.export", "version": 1, "package": name, "model_file": model_file,
                "model_form": graph["model_form"], "inputs": graph["inputs"], "groups": groups,
                # As PackageManifest writes it: the state_dict entries, not the constants export lifted.
                "params": [{"name": p["name"], "shape": p["tensor"]["shape"], "dtype": p["tensor"]["dtype"]}
                           for p in graph["params"]
                           if not (p["graph_input"].startswith("c_") and p["name"] == p["graph_input"])],
                "figures": {}}
    (pkg / "package.json").write_text(json.dumps(manifest))
    sys.path.insert(0, str(root))
    try:
        module = importlib.import_module(name)
    finally:
        sys.path.remove(str(root))
    return module, graph


def with_cpu_kernels(module, calls):
    """CPU implementations of the ops (the group's original code), counting their calls; the shape
    guard then takes CPU tensors as the kernels' device."""
    ops, runtime = module._ops, module._runtime
    for g in ops.SHIPPED:
        original = ops.ORIGINAL[g["op"]]

        def kernel(*xs, _op=g["op"], _fn=original):
            # As the CUDA kernels' host code checks (they index their inputs as contiguous).
            assert all(x.is_contiguous() for x in xs), f"{_op}: a strided input reached the kernel"
            calls.append(_op)
            return [o.clone().contiguous() for o in ops.as_list(_fn(*xs))]

        torch.library.impl(f"{ops.NAMESPACE}::{g['op']}", "cpu", kernel)
        torch.library.impl(f"{ops.NAMESPACE}::{ops.infer_name(g['op'])}", "cpu", kernel)
    ops.COMPILED = True
    runtime.KERNEL_DEVICE = "cpu"


@pytest.fixture(scope="module")
def transformer(tmp_path_factory):
    module, graph = assemble(tmp_path_factory.mktemp("tiny"), "tiny_transformer_block.py", "nova_test_tiny")
    calls = []
    with_cpu_kernels(module, calls)
    return module, graph, calls


def test_the_schemas_are_defined_without_the_compiled_library(tmp_path):
    module, graph = assemble(tmp_path, "swish_bias_clamp.py", "nova_test_schemas")
    assert module.COMPILED is False and module.LOAD_ERROR
    for g in module._ops.SHIPPED:
        assert str(module._ops.op(g["op"])._schema) == f"nova_test_schemas::{g['schema']}"
        infer = g["schema"].replace(g["op"] + "(", g["op"] + "_infer(", 1)
        assert str(module._ops.infer_op(g["op"])._schema) == f"nova_test_schemas::{infer}"


def test_every_group_is_replaced_and_the_model_matches_the_original(transformer):
    module, graph, calls = transformer
    torch.manual_seed(0)
    original = module.Model(*module.get_init_inputs()).eval()
    new = module.ModelNew(*module.get_init_inputs()).eval()
    new.load_state_dict(original.state_dict())
    x = module.get_inputs()
    calls.clear()
    with torch.no_grad():
        got, want = new(*x), original(*x)
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
    acc = [a for a in module._runtime.captures(new).values() if a is not None]
    assert sorted(acc[0].replaced) == [g["id"] for g in graph["groups"]]
    assert sorted(set(calls)) == sorted(f"group_{g['id']}" for g in graph["groups"])
    # Fewer nodes than the capture: each group is one call now.
    assert not any(n.op == "call_function" and str(n.target) == "aten.layer_norm.default"
                   for n in acc[0].ep.graph_module.graph.nodes)


def test_another_batch_size_runs_the_original_code_of_each_group(transformer):
    module, _, calls = transformer
    torch.manual_seed(1)
    original = module.Model(*module.get_init_inputs()).eval()
    new = module.optimize(module.Model(*module.get_init_inputs()).eval())
    new.load_state_dict(original.state_dict())
    x = [torch.cat([t, t]) for t in module.get_inputs()]
    calls.clear()
    with torch.no_grad():
        torch.testing.assert_close(new(*x), original(*x), atol=1e-5, rtol=1e-5)
    assert calls == [], "no kernel may run on a shape it was not built for"


def _frames_of_one_call(model, x):
    """The Python functions one call of `model` runs, as (file, function) pairs."""
    seen = set()

    def profile(frame, event, arg):
        if event == "call":
            seen.add((frame.f_code.co_filename, frame.f_code.co_name))

    sys.setprofile(profile)
    try:
        out = model(*x)
    finally:
        sys.setprofile(None)
    return out, seen


def test_a_call_under_no_grad_skips_the_autograd_layer_and_the_guard_decided_at_capture(transformer):
    module, graph, calls = transformer
    torch.manual_seed(4)
    original = module.Model(*module.get_init_inputs()).eval()
    new = module.ModelNew(*module.get_init_inputs()).eval()
    new.load_state_dict(original.state_dict())
    x = module.get_inputs()
    with torch.no_grad():
        new(*x)
        acc = [a for a in module._runtime.captures(new).values() if a is not None][0]
        # Every group's shapes, dtypes and device were decided from the capture's recorded values.
        assert acc.replaced == {g["id"]: True for g in graph["groups"]}
        calls.clear()
        out, frames = _frames_of_one_call(new, x)
    torch.testing.assert_close(out, original(*x), atol=1e-5, rtol=1e-5)
    assert sorted(set(calls)) == sorted(f"group_{g['id']}" for g in graph["groups"])
    autograd_layer = [f for f in frames if f[0].endswith(os.path.join("_library", "autograd.py"))]
    assert autograd_layer == [], "with autograd off the op is called below its autograd formula"
    # With autograd on (the parameters require grad), the formula is there to record the backward.
    _, frames = _frames_of_one_call(new, x)
    assert any(f[0].endswith(os.path.join("_library", "autograd.py")) for f in frames)


def test_a_strided_input_runs_the_op_on_a_contiguous_copy(transformer):
    module, graph, calls = transformer
    torch.manual_seed(5)
    original = module.Model(*module.get_init_inputs()).eval()
    new = module.ModelNew(*module.get_init_inputs()).eval()
    new.load_state_dict(original.state_dict())
    group = next(g for g in module._ops.SHIPPED if "p_fc_weight" in g["inputs"])
    x = module.get_inputs()
    with torch.no_grad():
        new(*x)
        # The same values, stored transposed: a view of the same shape that is not contiguous.
        w = new.fc.weight.detach()
        new.fc.weight = torch.nn.Parameter(w.t().contiguous().t())
        assert not new.fc.weight.is_contiguous()
        calls.clear()
        torch.testing.assert_close(new(*x), original(*x), atol=1e-5, rtol=1e-5)
    # Every group still ran its op (the kernels index their inputs as contiguous: they got a copy).
    assert sorted(calls) == sorted(f"group_{g['id']}" for g in graph["groups"])
    assert group["op"] in calls


def test_gradients_through_the_ops_match_eager(transformer):
    module, _, calls = transformer
    torch.manual_seed(2)
    original = module.Model(*module.get_init_inputs())
    new = module.ModelNew(*module.get_init_inputs())
    new.load_state_dict(original.state_dict())
    x = module.get_inputs()[0]
    grads = []
    calls.clear()
    for m in (original, new):
        xi = x.clone().requires_grad_(True)
        m(xi).square().mean().backward()
        grads.append([xi.grad] + [p.grad for p in m.parameters()])
    assert calls, "the ops ran in the forward"
    for a, b in zip(*grads):
        torch.testing.assert_close(b, a, atol=1e-5, rtol=1e-4)


def test_opcheck_passes_for_every_op(transformer):
    module, _, _ = transformer
    for g in module._ops.SHIPPED:
        torch.manual_seed(3)
        inputs = tuple(t.requires_grad_(True) for t in module._ops.EXAMPLE_INPUTS[g["op"]]())
        torch.library.opcheck(module._ops.op(g["op"]), inputs,
                              test_utils=("test_schema", "test_autograd_registration", "test_faketensor",
                                          "test_aot_dispatch_static"))


def test_the_state_dict_and_signatures_are_the_originals(transformer):
    import inspect
    module, _, _ = transformer
    assert inspect.signature(module.ModelNew.forward) == inspect.signature(module.Model.forward)
    assert inspect.signature(module.ModelNew.__init__) == inspect.signature(module.Model.__init__)
    assert list(module.ModelNew(*module.get_init_inputs()).state_dict()) == \
        list(module.Model(*module.get_init_inputs()).state_dict())
    with pytest.raises(TypeError, match="the model the package was made for"):
        module.optimize(torch.nn.Linear(2, 2))


def test_a_constant_made_in_forward_is_no_parameter_and_its_group_runs_the_op(tmp_path):
    # conv2d_min_add_multiply's forward makes torch.tensor(constant_value): export lifts it as
    # c_lifted_tensor_0, an input of the group, but not part of the state_dict the package checks.
    module, graph = assemble(tmp_path, "conv2d_min_add_multiply.py", "nova_test_constant")
    assert any(p["graph_input"] == "c_lifted_tensor_0" for p in graph["params"])
    assert "c_lifted_tensor_0" not in [p["name"] for p in module.MANIFEST["params"]]
    calls = []
    with_cpu_kernels(module, calls)
    torch.manual_seed(0)
    original = module.Model(*module.get_init_inputs()).eval()
    # The client's own class (their module, not the package's copy) is accepted by optimize().
    spec = importlib.util.spec_from_file_location("client_conv", os.path.join(EXAMPLES, "conv2d_min_add_multiply.py"))
    client = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(client)
    theirs = client.Model(*module.get_init_inputs()).eval()
    theirs.load_state_dict(original.state_dict())
    assert module.optimize(theirs) is theirs
    x = module.get_inputs()
    with torch.no_grad():
        torch.testing.assert_close(theirs(*x), original(*x), atol=1e-5, rtol=1e-5)
    assert calls == [f"group_{g['id']}" for g in graph["groups"]]
    # A model without parameters of its own is still refused when it is another model.
    with pytest.raises(TypeError):
        module.optimize(torch.nn.ReLU())


SHARED_EXAMPLES = ["conv2d_min_add_multiply", "matmul_scaling_residual_add", "swish_bias_clamp", "softmax_rows",
                   "layernorm_gelu", "linear_relu_bias", "conv2d_relu_hardswish", "mlp_block", "tiny_transformer_block"]


@pytest.mark.parametrize("name", SHARED_EXAMPLES)
def test_every_group_of_each_shared_example_runs_its_op_on_the_kernels_device(tmp_path, name):
    # The package's path on a device other than the CPU, as on the GPU box: the meta device stands in
    # for CUDA (the ops' fake functions as their kernels), so constants made on the CPU (the lifted
    # torch.tensor(constant_value) of conv2d_min_add_multiply, which the capture moves to the inputs'
    # device), strided inputs (tiny_transformer_block's attention) and the guard decided at capture
    # meet the device they meet there. Every group of every
    # shared example must be replaced and run its op, and the output be the original's in shape.
    module, graph = assemble(tmp_path, f"{name}.py", f"nova_test_device_{name}")
    module._ops.COMPILED = True
    module._runtime.KERNEL_DEVICE = "meta"
    torch.manual_seed(0)
    original = module.Model(*module.get_init_inputs()).eval().to("meta")
    new = module.ModelNew(*module.get_init_inputs()).eval().to("meta")
    x = [v.to("meta") if isinstance(v, torch.Tensor) else v for v in module.get_inputs()]
    with torch.no_grad():
        new(*x)
        acc = [a for a in module._runtime.captures(new).values() if a is not None]
        assert acc, "the forward was captured"
        assert acc[0].replaced == {g["id"]: True for g in graph["groups"]}
        before = {op: dict(n) for op, n in module._runtime.CALLS.items()}
        got, want = new(*x), original(*x)
    assert (got.shape, got.dtype, got.device) == (want.shape, want.dtype, want.device)
    for g in graph["groups"]:
        op = f"group_{g['id']}"
        assert module._runtime.CALLS[op]["kernel"] - before[op]["kernel"] == 1, f"{op} did not run its op"
        assert module._runtime.CALLS[op]["fallback"] == before[op]["fallback"]


def test_the_functional_form_is_accelerated_and_another_fn_runs_as_given(tmp_path):
    module, graph = assemble(tmp_path, "matmul_scaling_residual_add.py", "nova_test_functional")
    calls = []
    with_cpu_kernels(module, calls)
    torch.manual_seed(0)
    original = module.Model(*module.get_init_inputs())
    new = module.ModelNew(*module.get_init_inputs())
    new.load_state_dict(original.state_dict())
    x = module.get_inputs()
    with torch.no_grad():
        torch.testing.assert_close(new(*x), original(*x))
        assert calls, "the functional form's groups ran their ops"
        calls.clear()
        seen = []
        new(*x, fn=lambda *a: seen.append(a) or module._runtime.client_model.module_fn(*a))
    assert seen and not calls


def test_the_ratio_interval_brackets_the_ratio_and_is_seeded(transformer):
    stats = importlib.import_module(transformer[0].__name__ + "._stats")
    base = [10.0 + 0.1 * (i % 7) for i in range(40)]
    cand = [5.0 + 0.05 * (i % 5) for i in range(40)]
    r = stats.ratio_interval(base, cand)
    assert r[1] <= r[0] <= r[2] and r[1] > 1.8
    assert r == stats.ratio_interval(base, cand)
    assert stats.ratio_interval(base[:4], cand) is None
    assert stats.summarize([3, 1, 2])["median"] == 2


def test_the_packages_wall_rounds_are_the_checks(transformer):
    from nova_worker import model_check
    stats = importlib.import_module(transformer[0].__name__ + "._stats")
    for slowest in (0.0, 12.0, 100.0, 333.0, 1400.0, 50000.0):
        assert stats.wall_round_calls(slowest) == model_check.wall_round_calls(slowest)
    assert stats.wall_round_calls(1400.0) == 10


def _run_in(folder, code, pythonpath):
    import subprocess
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    r = subprocess.run([sys.executable, "-c", code], cwd=folder, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_the_package_folder_imports_the_installed_copy_when_there_is_one(tmp_path):
    # From the package's folder (`python benchmark.py`, `pytest tests`) Python would import the
    # folder's copy, which has no compiled kernels: installed_first makes it take the installed one.
    text = open(os.path.join(TEMPLATES, "installed_first.py"), encoding="utf-8").read().replace("@PACKAGE@", "demo_pkg")
    source, installed = tmp_path / "source", tmp_path / "site"
    for folder, where in ((source, "source"), (installed, "installed")):
        (folder / "demo_pkg").mkdir(parents=True)
        (folder / "demo_pkg" / "__init__.py").write_text(f"WHERE = {where!r}\n")
    (source / "installed_first.py").write_text(text)
    code = "import installed_first, demo_pkg; print(demo_pkg.WHERE)"
    assert _run_in(source, code, str(installed)) == "installed"
    # Not installed (the CPU checks straight from the source folder): the folder's copy.
    assert _run_in(source, code, "") == "source"


# --- torch.compile of the optimized model ------------------------------------------------------------

def _recording_backend():
    """A torch.compile backend that keeps each graph dynamo hands it and runs it as it is."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    return graphs, backend


def _graph_breaks():
    from torch._dynamo.utils import counters
    return sum(counters["graph_break"].values())


def _ops_in(graph_module, namespace):
    return sorted(str(n.target) for n in graph_module.graph.nodes
                  if n.op == "call_function" and str(n.target).startswith(namespace + "."))


def _fresh_compile_state():
    from torch._dynamo.utils import counters
    torch._dynamo.reset()
    counters.clear()


def _pair(module, seed, optimize=False):
    torch.manual_seed(seed)
    original = module.Model(*module.get_init_inputs()).eval()
    new = (module.optimize(module.Model(*module.get_init_inputs()).eval()) if optimize
           else module.ModelNew(*module.get_init_inputs()).eval())
    new.load_state_dict(original.state_dict())
    return original, new


def test_torch_compile_of_a_captured_model_is_one_graph_with_the_ops(transformer):
    # After one eager call has captured the signature, dynamo traces the whole forward (the lookup of
    # the capture, the rewritten graph, each group's shape guard) into one graph holding the ops:
    # fullgraph=True compiles, no graph break, nothing left to run in Python around the ops.
    from torch._dynamo.utils import counters
    module, graph, calls = transformer
    runtime = module._runtime
    original, new = _pair(module, 4)
    x = module.get_inputs()
    # Autograd is off: the ops' twins without an autograd formula.
    ops = sorted(f"{module._ops.NAMESPACE}.group_{g['id']}_infer.default" for g in graph["groups"])
    with torch.no_grad():
        want = original(*x)
        new(*x)
        _fresh_compile_state()
        explained = torch._dynamo.explain(new)(*x)
        assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained.break_reasons
        assert _ops_in(explained.graphs[0], module._ops.NAMESPACE) == ops
        _fresh_compile_state()
        graphs, backend = _recording_backend()
        compiled = torch.compile(new, backend=backend, fullgraph=True)
        counted = {op: dict(n) for op, n in runtime.CALLS.items()}
        for _ in range(3):
            calls.clear()
            got = compiled(*x)
            torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
            assert sorted(calls) == sorted(f"group_{g['id']}" for g in graph["groups"]), "the kernels ran"
        _, frames = _frames_of_one_call(compiled, x)
        assert not [f for f in frames if f[0].endswith(os.path.join("_library", "autograd.py"))]
    assert _graph_breaks() == 0, dict(counters["graph_break"])
    assert len(graphs) == 1, "one graph, compiled once"
    assert _ops_in(graphs[0], module._ops.NAMESPACE) == ops
    # Under torch.compile nothing is counted in Python (CALLS counts eager calls only).
    assert {op: dict(n) for op, n in runtime.CALLS.items()} == counted


def test_torch_compile_recompiles_for_another_batch_size_and_keeps_the_first(transformer):
    module, graph, calls = transformer
    original, new = _pair(module, 5)
    x = module.get_inputs()
    x2 = [torch.cat([t, t]) for t in x]
    with torch.no_grad():
        new(*x)
        _fresh_compile_state()
        graphs, backend = _recording_backend()
        compiled = torch.compile(new, backend=backend)
        compiled(*x)
        assert (len(graphs), _graph_breaks()) == (1, 0)
        # A new signature: captured on its first call (the one graph break), then one graph.
        calls.clear()
        torch.testing.assert_close(compiled(*x2), original(*x2), atol=1e-5, rtol=1e-5)
        assert _graph_breaks() == 1 and calls == [], "no kernel may run on a shape it was not built for"
        seen = len(graphs)
        for _ in range(2):
            torch.testing.assert_close(compiled(*x2), original(*x2), atol=1e-5, rtol=1e-5)
        assert _graph_breaks() == 1 and len(graphs) == seen + 1 and calls == []
        assert _ops_in(graphs[-1], module._ops.NAMESPACE) == [], "the other batch size runs the original nodes"
        # The first signature's graph still serves it: no recompile, the kernels run.
        torch.testing.assert_close(compiled(*x), original(*x), atol=1e-5, rtol=1e-5)
        assert len(graphs) == seen + 1 and _graph_breaks() == 1
        assert sorted(calls) == sorted(f"group_{g['id']}" for g in graph["groups"])
    assert len(module._runtime.captures(new)) == 2


def test_torch_compile_from_the_first_call_breaks_once_then_runs_one_graph(transformer):
    # The first call under torch.compile captures the signature (torch.export outside the trace: one
    # graph break); the next call recompiles into one graph with the ops. optimize()'s instance here.
    module, graph, calls = transformer
    original, new = _pair(module, 6, optimize=True)
    x = module.get_inputs()
    ops = sorted(f"{module._ops.NAMESPACE}.group_{g['id']}_infer.default" for g in graph["groups"])
    with torch.no_grad():
        want = original(*x)
        _fresh_compile_state()
        graphs, backend = _recording_backend()
        compiled = torch.compile(new, backend=backend)
        calls.clear()
        torch.testing.assert_close(compiled(*x), want, atol=1e-5, rtol=1e-5)
        assert _graph_breaks() == 1 and calls, "captured, and the kernels ran"
        seen = len(graphs)
        for _ in range(3):
            calls.clear()
            torch.testing.assert_close(compiled(*x), want, atol=1e-5, rtol=1e-5)
            assert sorted(calls) == sorted(f"group_{g['id']}" for g in graph["groups"])
        assert _graph_breaks() == 1, "no graph break after the capture"
        assert len(graphs) == seen + 1 and _ops_in(graphs[-1], module._ops.NAMESPACE) == ops
        _fresh_compile_state()
        explained = torch._dynamo.explain(new)(*x)
        assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained.break_reasons


def test_torch_compile_with_inductor_and_gradients(transformer):
    # The default backend (inductor compiles what lies around the ops), and a training step through
    # AOT autograd: the ops' autograd formulas, gradients as eager's.
    module, graph, calls = transformer
    original, new = _pair(module, 7)
    x = module.get_inputs()
    with torch.no_grad():
        new(*x)
        _fresh_compile_state()
        compiled = torch.compile(new)
        for _ in range(2):
            calls.clear()
            torch.testing.assert_close(compiled(*x), original(*x), atol=1e-4, rtol=1e-4)
            assert sorted(calls) == sorted(f"group_{g['id']}" for g in graph["groups"])
    assert _graph_breaks() == 0
    original.train()
    new.train()
    _fresh_compile_state()
    compiled = torch.compile(new, backend="aot_eager")
    for step in range(2):
        grads = []
        calls.clear()
        for run, model in ((original, original), (compiled, new)):
            model.zero_grad()
            xi = x[0].clone().requires_grad_(True)
            run(xi).square().mean().backward()
            grads.append([xi.grad] + [p.grad for p in model.parameters()])
        assert calls, "the ops ran in the compiled forward"
        for a, b in zip(*grads):
            torch.testing.assert_close(b, a, atol=1e-5, rtol=1e-4)
    assert _graph_breaks() == 1, "the training signature's capture only"


def test_torch_compile_of_the_functional_form_with_keywords_and_another_fn(tmp_path):
    import inspect
    module, graph = assemble(tmp_path, "matmul_scaling_residual_add.py", "nova_test_compiled_fn")
    calls = []
    with_cpu_kernels(module, calls)
    original, new = _pair(module, 8)
    x = module.get_inputs()
    names = [n for n in inspect.signature(module.Model.forward).parameters if n not in ("self", "fn")]
    default_fn = inspect.signature(module.Model.forward).parameters["fn"].default
    seen = []

    def spy(*args):
        seen.append(len(args))
        return default_fn(*args)

    with torch.no_grad():
        want = original(*x)
        new(*x)
        _fresh_compile_state()
        graphs, backend = _recording_backend()
        compiled = torch.compile(new, backend=backend)
        for _ in range(2):
            calls.clear()
            torch.testing.assert_close(compiled(*x), want)
            torch.testing.assert_close(compiled(**dict(zip(names, x))), want)
            assert calls == ["group_0", "group_0"], "by position and by keyword, the op ran"
        calls.clear()
        torch.testing.assert_close(compiled(*x, fn=spy), want)
        assert seen and calls == [], "another fn runs as given"
    assert _graph_breaks() == 0
    assert any(_ops_in(g, module._ops.NAMESPACE) for g in graphs)


def test_a_model_with_a_parameter_of_its_own_is_freed_with_its_captures(tmp_path):
    # The captures are kept outside the model; they must not keep it alive (a parameter of the model
    # itself, swish_bias_clamp's bias, was held by its capture and the model never freed).
    import gc
    import weakref
    module, graph = assemble(tmp_path, "swish_bias_clamp.py", "nova_test_freed")
    with_cpu_kernels(module, [])
    new = module.ModelNew(*module.get_init_inputs()).eval()
    with torch.no_grad():
        new(torch.randn(2, 32, 4, 4))
    assert len(module._runtime.captures(new)) == 1
    ref, key = weakref.ref(new), id(new)
    del new
    gc.collect()
    assert ref() is None, "the model outlived its last reference"
    assert key not in module._runtime._captures and key not in module._runtime._chains
