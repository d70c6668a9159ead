"""Requests carry contents, not paths: the reference source written into the work folder and
reported by the name core gave, the candidate JSON inline and its cubin as base64."""

import base64

import pytest

torch = pytest.importorskip("torch")
from nova_worker import candidates  # noqa: E402
from nova_worker.protocol import WorkerFailure  # noqa: E402

REFERENCE = """import torch


def module_fn(x, y):
    return x + y


def get_inputs():
    return [torch.randn(4, 8), torch.randn(4, 8)]
"""

# A plan with one library step (no kernel, so no cubin is loaded): out = x + y.
CANDIDATE = {"plan": {"inputs": [{"name": "x", "shape": [4, 8], "dtype": "float32"},
                                 {"name": "y", "shape": [4, 8], "dtype": "float32"}],
                      "outputs": [{"shape": [4, 8], "dtype": "float32"}], "temps": [],
                      "steps": [{"type": "library", "op": "aten.add.Tensor",
                                 "args": [{"ref": "input:0"}, {"ref": "input:1"}], "out": "output:0"}]}}


def test_the_reference_source_is_written_to_the_work_dir_and_named_as_core_named_it(tmp_path):
    args = {"reference_source": REFERENCE, "reference_name": "/client/models/group0.py", "work_dir": str(tmp_path)}
    problem = candidates.load_problem(args, "cpu")
    assert problem.name == "/client/models/group0.py"
    assert problem.path.startswith(str(tmp_path)) and problem.path.endswith("group0.py")
    assert problem.form == "group" and problem.input_names == ["x", "y"]
    inst = problem.instantiate(3)
    (out,) = inst.reference()
    assert torch.equal(out, inst.inputs[0] + inst.inputs[1])


def test_an_error_in_the_reference_is_the_users_with_the_name_core_gave(tmp_path):
    broken = REFERENCE.replace("def get_inputs():", "raise RuntimeError('bad reference')\n\n\ndef get_inputs():")
    args = {"reference_source": broken, "reference_name": "/client/g.py", "work_dir": str(tmp_path)}
    with pytest.raises(WorkerFailure) as err:
        candidates.load_problem(args, "cpu")
    assert err.value.kind == "user_error"
    assert (err.value.file, err.value.line) == ("/client/g.py", 8)
    assert "bad reference" in err.value.message and "/client/g.py" in err.value.traceback


def test_without_a_reference_the_request_is_bad(tmp_path):
    with pytest.raises(WorkerFailure) as err:
        candidates.load_problem({"work_dir": str(tmp_path)}, "cpu")
    assert err.value.kind == "bad_request" and "reference_source" in err.value.message


def test_the_candidate_json_comes_inline_and_the_cubin_as_base64():
    args = {"candidate": CANDIDATE, "cubin_b64": base64.b64encode(b"").decode()}
    loaded = candidates.load(args, "cpu")
    assert loaded.path_kind == "fast"
    x, y = torch.randn(4, 8), torch.randn(4, 8)
    (out,) = loaded.fn(x, y)
    assert torch.equal(out, x + y)
    assert candidates.decode_cubin({"cubin_b64": base64.b64encode(b"\x7fELF\x00\x01").decode()}) == b"\x7fELF\x00\x01"


@pytest.mark.parametrize("args, expected", [
    ({"cubin_b64": ""}, "lacks the argument 'candidate'"),
    ({"candidate": "/a/path.json", "cubin_b64": ""}, "'candidate' must be dict"),
    ({"candidate": CANDIDATE, "cubin_b64": "not base64!"}, "'cubin_b64' is not base64"),
    ({"candidate": CANDIDATE}, "lacks the argument 'cubin_b64'"),
])
def test_a_malformed_candidate_request_is_a_bad_request(args, expected):
    with pytest.raises(WorkerFailure) as err:
        candidates.load(args, "cpu")
    assert err.value.kind == "bad_request" and expected in err.value.message


def test_a_source_is_written_once_per_content(tmp_path):
    args = {"extension_source": "// kernel\n", "extension_name": "/client/seed.cu"}
    first, name = candidates.request_file(args, "extension", str(tmp_path), ".cu")
    again, _ = candidates.request_file(args, "extension", str(tmp_path), ".cu")
    other, _ = candidates.request_file(dict(args, extension_source="// other\n"), "extension", str(tmp_path), ".cu")
    assert name == "/client/seed.cu" and first == again and first != other
    assert open(first).read() == "// kernel\n" and first.endswith("seed.cu")


def test_a_full_path_build_is_found_again_only_for_the_same_source_flags_arch_and_versions():
    from nova_worker.candidates import extension_build_key

    base = extension_build_key(b"__global__ void k() {}", ("-O3",), "9.0", "2.11.0", "13.0")
    assert base == extension_build_key(b"__global__ void k() {}", ("-O3",), "9.0", "2.11.0", "13.0")
    assert len(base) == 16
    for other in (extension_build_key(b"__global__ void k2() {}", ("-O3",), "9.0", "2.11.0", "13.0"),
                  extension_build_key(b"__global__ void k() {}", ("-O2",), "9.0", "2.11.0", "13.0"),
                  extension_build_key(b"__global__ void k() {}", ("-O3",), "8.0", "2.11.0", "13.0"),
                  extension_build_key(b"__global__ void k() {}", ("-O3",), "9.0", "2.10.0", "13.0"),
                  extension_build_key(b"__global__ void k() {}", ("-O3",), "9.0", "2.11.0", "12.8")):
        assert other != base
