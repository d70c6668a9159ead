"""Intake captures on the meta device: the graph (nodes, shapes, dtypes, fusion groups, functional
sources) must be the one the full-size CPU route recorded (tests/fixtures/graphs), the saved example
inputs the same bytes, and a model the meta device cannot follow must fall back to the full-size
route with a warning saying why."""

import glob
import json
import os
import textwrap

import pytest

torch = pytest.importorskip("torch")
from nova_worker import capture, intake, meta_capture  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..", "..")
SHARED = os.environ.get("NOVA_SHARED", os.path.join(REPO, "..", "shared"))
FIXTURES = sorted(glob.glob(os.path.join(HERE, "..", "fixtures", "graphs", "*.json"))
                  + glob.glob(os.path.join(HERE, "..", "fixtures", "graphs", "coverage", "*.json")))
# The graph's fields; saved_inputs, warnings and the extras are not part of the graph.
GRAPH_FIELDS = ("model_form", "capture_route", "inputs", "scalar_inputs", "outputs", "params", "nodes", "groups")


def model_for(fixture):
    name = os.path.basename(json.load(open(fixture))["model_path"])
    for folder in (os.path.join(REPO, "resources", "examples"), os.path.join(SHARED, "examples")):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return os.path.abspath(path)
    raise AssertionError(f"{fixture} was recorded from {name}, found in neither resources/examples nor {SHARED}/examples")


def graph_of(result):
    """The graph fields with each node's file reduced to its name (the recordings were made in
    another checkout)."""
    graph = {k: result[k] for k in GRAPH_FIELDS}
    graph["nodes"] = [dict(n, file=os.path.basename(n["file"])) for n in graph["nodes"]]
    return json.loads(json.dumps(graph))


def run(model, save=""):
    return intake.run_intake({"model": model, "save_inputs": save, "check_groups": True}, lambda *_: None)


def force_full_size(monkeypatch):
    def refuse(model, inputs):
        raise RuntimeError("meta route refused by the test")
    monkeypatch.setattr(meta_capture, "meta_twin", refuse)


def test_every_recorded_graph_has_fixtures():
    assert len(FIXTURES) >= 26


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: os.path.relpath(f, os.path.join(HERE, "..", "fixtures", "graphs")))
def test_the_meta_capture_is_the_recorded_graph(fixture):
    result = run(model_for(fixture))
    assert result["warnings"] == []
    assert graph_of(result) == graph_of(json.load(open(fixture)))
    assert result["group_checks"] and all(c["ok"] and not c["values_compared"] for c in result["group_checks"]), \
        result["group_checks"]


def write_model(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


# A tensor kept as a plain attribute (lifted as a constant), a buffer, a constant made in forward.
ATTRIBUTES = """
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(32, 16)
            self.register_buffer("shift", torch.randn(16))
            self.scale = torch.rand(16) + 0.5

        def forward(self, x, alpha):
            y = torch.relu(self.fc(x) + self.shift) * self.scale
            return torch.minimum(y, torch.tensor(alpha)) * 2


    def get_inputs():
        return [torch.randn(8, 32), 0.75]


    def get_init_inputs():
        return []
"""


def test_meta_and_full_size_routes_agree_to_the_saved_bytes(tmp_path, monkeypatch):
    model = write_model(tmp_path, "attributes.py", ATTRIBUTES)
    meta = run(model, str(tmp_path / "meta.safetensors"))
    assert meta["warnings"] == []
    force_full_size(monkeypatch)
    full = run(model, str(tmp_path / "full.safetensors"))
    assert graph_of(meta) == graph_of(full)
    assert all(c["values_compared"] and c["ok"] for c in full["group_checks"]), full["group_checks"]
    assert "meta route refused by the test" in full["warnings"][-1]
    assert (tmp_path / "meta.safetensors").read_bytes() == (tmp_path / "full.safetensors").read_bytes()


def test_the_meta_twin_leaves_the_model_real():
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    model.extra = torch.ones(3)
    twin, inputs = meta_capture.meta_twin(model, [torch.randn(2, 4), 1.5])
    assert all(t.is_meta for t in list(twin.parameters()) + list(twin.buffers()) + [twin.extra, inputs[0]])
    assert isinstance(twin[0].weight, torch.nn.Parameter) and inputs[1] == 1.5
    assert not any(t.is_meta for t in list(model.parameters()) + list(model.buffers()) + [model.extra])


def one_input_model(forward):
    """A model file taking one 16x16 input; `forward`: the lines of its forward's body (line 8 on)."""
    body = textwrap.indent(textwrap.dedent(forward).strip(), " " * 12)
    return f"""
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def forward(self, x):
{body}


    def get_inputs():
        return [torch.randn(16, 16)]


    def get_init_inputs():
        return []
"""


BRANCH = one_input_model("""
    if x.mean() > -10:
        return torch.relu(x) * 2
    return torch.sigmoid(x)
""")


def test_a_forward_error_keeps_its_message(tmp_path):
    model = write_model(tmp_path, "bad_shape.py", BRANCH.replace("if x.mean() > -10:", "if True:")
                        .replace("torch.relu(x) * 2", "x @ torch.ones(3, 3)"))
    with pytest.raises(intake.WorkerFailure) as err:
        run(model)
    assert err.value.message.startswith("Model.forward raised RuntimeError: mat1 and mat2 shapes cannot be multiplied")
    assert err.value.line == 9 and "(bad_shape.py:9)" in err.value.message


BATCHNORM = """
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(8)

        def forward(self, x):
            return torch.relu(self.bn(x))


    def get_inputs():
        return [torch.randn(4, 8) + 3]


    def get_init_inputs():
        return []
"""


def test_buffers_are_saved_as_the_model_file_builds_them(tmp_path):
    """The full-size route saved the running statistics its own training-mode forward had updated;
    the meta route saves the model as Model(*get_init_inputs()) builds it, as later stages build it."""
    import safetensors

    path = tmp_path / "bn.safetensors"
    result = run(write_model(tmp_path, "bn.py", BATCHNORM), str(path))
    assert result["warnings"] == []
    entries = dict(safetensors.deserialize(path.read_bytes()))
    as_built = {"buffer.bn.running_mean": torch.zeros(8), "buffer.bn.running_var": torch.ones(8),
                "buffer.bn.num_batches_tracked": torch.tensor(0)}
    for name, want in as_built.items():
        assert bytes(entries[name]["data"]) == want.numpy().tobytes(), name


def test_with_a_value_device_the_group_check_compares_values(tmp_path, monkeypatch):
    """Where a GPU is, a meta capture's values are computed there for the groups' check; the CPU stands
    in for it here. The values must be those of the full-size route."""
    model = write_model(tmp_path, "attributes_on_device.py", ATTRIBUTES.replace(
        "torch.tensor(alpha)) * 2", "torch.tensor(alpha)) * torch.ones(16, device=x.device)"))
    monkeypatch.setattr(meta_capture, "value_device", lambda: torch.device("cpu"))
    recomputed = {}
    values_on = meta_capture.values_on
    monkeypatch.setattr(meta_capture, "values_on", lambda *a: recomputed.update(values_on(*a)) or recomputed)
    meta = run(model)
    assert meta["warnings"] == []
    assert meta["group_checks"] and all(c["ok"] and c["values_compared"] for c in meta["group_checks"])
    assert any(n["op"] == "ones" for n in meta["nodes"])

    captured = {}
    capture_export = capture.capture_export
    monkeypatch.setattr(capture, "capture_export",
                        lambda *a: captured.setdefault("cap", capture_export(*a)))
    force_full_size(monkeypatch)
    full = run(model)
    assert graph_of(meta) == graph_of(full)
    want = captured["cap"].values
    assert set(recomputed) == set(want)
    for name, value in want.items():
        assert torch.equal(recomputed[name], value), name


DATA_PTR = one_input_model("return torch.relu(x) * 2 if x.data_ptr() % 16 == 0 else torch.sigmoid(x)")


@pytest.mark.parametrize("name, source, first_warning, why", [
    # A branch on a value: meta tensors have none.
    ("branch.py", BRANCH, "value-dependent control flow at branch.py:8", "branch.py:8"),
    # Export cannot read a data pointer; the eager dispatch trace records the path, and is taken at
    # full size on the CPU (on meta it could record other ATen ops).
    ("data_ptr.py", DATA_PTR, "torch.export could not capture the model", "data pointer"),
])
def test_what_meta_cannot_follow_takes_the_full_size_route(tmp_path, name, source, first_warning, why):
    result = run(write_model(tmp_path, name, source))
    assert result["capture_route"] == "dispatch_trace"
    assert result["warnings"][0].startswith(first_warning), result["warnings"]
    fallback = result["warnings"][-1]
    assert fallback.startswith("captured with a full-size run on the CPU") and why in fallback, fallback
    assert [n["op"] for n in result["nodes"]] == ["relu", "mul"]
    assert all(c["ok"] and c["values_compared"] for c in result["group_checks"])
