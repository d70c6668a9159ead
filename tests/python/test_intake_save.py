"""intake.save_safetensors with the safetensors binding's two forms: the dict form (up to 0.7) and
the TensorSpec form (0.8), chosen by what the installed binding offers."""

import ctypes

import pytest

torch = pytest.importorskip("torch")
safetensors = pytest.importorskip("safetensors")
from nova_worker.intake import save_safetensors  # noqa: E402
from nova_worker.protocol import WorkerFailure  # noqa: E402

TENSORS = {"input.x": torch.arange(6, dtype=torch.float32).reshape(2, 3),
           "param.w": torch.tensor([1.5, -2.0], dtype=torch.bfloat16),
           "buffer.mask": torch.tensor([True, False, True]),
           "input.empty": torch.zeros(0, 4, dtype=torch.int64)}


def raw_bytes(t):
    return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""


def test_round_trip_with_the_installed_safetensors(tmp_path):
    path = tmp_path / "sub" / "m.inputs.safetensors"
    save_safetensors(str(path), TENSORS, {"format": "nova.example_inputs"})
    with open(path, "rb") as f:
        entries = dict(safetensors.deserialize(f.read()))
    assert set(entries) == set(TENSORS)
    for name, t in TENSORS.items():
        assert entries[name]["shape"] == list(t.shape), name
        assert bytes(entries[name]["data"]) == raw_bytes(t), name
    assert entries["param.w"]["dtype"].lower() in ("bf16", "bfloat16")


class DictBinding:
    """safetensors up to 0.7: serialize_file takes {name: {"dtype", "shape", "data"}}."""

    def __init__(self):
        self.written = None

    def serialize_file(self, tensor_dict, filename, metadata=None):
        for entry in tensor_dict.values():
            if not isinstance(entry, dict):
                raise TypeError("argument 'tensor_dict': expected a dict")
        self.written = {k: (v["dtype"], v["shape"], v["data"]) for k, v in tensor_dict.items()}


class SpecBinding:
    """safetensors 0.8: serialize_file takes {name: TensorSpec}, each pointing at live memory."""

    class TensorSpec:
        def __init__(self, *, dtype, shape, data_ptr, data_len):
            self.dtype, self.shape, self.data_ptr, self.data_len = dtype, list(shape), data_ptr, data_len

    def __init__(self):
        self.written = None

    def serialize_file(self, tensor_dict, filename, metadata=None):
        for entry in tensor_dict.values():
            if not isinstance(entry, self.TensorSpec):
                raise TypeError("argument 'tensor_dict': 'dict' object is not an instance of 'TensorSpec'")
        # Read the memory now, as the real binding does during the call.
        self.written = {k: (v.dtype, v.shape, ctypes.string_at(v.data_ptr, v.data_len))
                        for k, v in tensor_dict.items()}


@pytest.mark.parametrize("binding_type", [DictBinding, SpecBinding])
def test_each_binding_form_gets_the_same_bytes(tmp_path, binding_type):
    binding = binding_type()
    save_safetensors(str(tmp_path / "x.safetensors"), TENSORS, {}, binding=binding)
    assert set(binding.written) == set(TENSORS)
    for name, t in TENSORS.items():
        dtype, shape, data = binding.written[name]
        assert dtype == str(t.dtype).replace("torch.", "") and shape == list(t.shape), name
        assert data == raw_bytes(t), name


def test_an_unsupported_dtype_is_a_user_error(tmp_path):
    with pytest.raises(WorkerFailure) as err:
        save_safetensors(str(tmp_path / "c.safetensors"), {"input.z": torch.zeros(2, dtype=torch.complex64)}, {},
                         binding=DictBinding())
    assert err.value.kind == "user_error" and "complex64" in err.value.message
