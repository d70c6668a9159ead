"""An LLM's answer in KernelBench's form (ModelNew + load_inline) read without running it
(nova_worker/kernelbench_form.py): a correct answer becomes one full-path extension whose forward
takes the group's inputs in order; sources built at run time, PyTorch compute in forward, state made
in __init__ and Python that does not parse are refused with a sentence naming what is wrong."""

import json
import os
import re
import subprocess
import sys

import pytest

from nova_worker import kernelbench_form
from nova_worker.kernelbench_form import Refused, convert

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "llm")
PACKAGE = os.path.join(os.path.dirname(__file__), "..", "..", "resources", "python")


def python_block(name):
    """The last ```python block of a scripted answer (tests/fixtures/llm/NAME.md)."""
    with open(os.path.join(FIXTURES, name + ".md"), encoding="utf-8") as f:
        text = f.read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, f"{name}.md has no ```python block"
    return blocks[-1]


def answer(forward_body, init_body="self.mod = mod", functions='["fn"]', sources=None, forward_args="x, y"):
    """A small answer in KernelBench's form, varied part by part."""
    sources = sources or ('cuda_src = "__global__ void k(float* p) {}\\n'
                          'torch::Tensor fn(torch::Tensor x, torch::Tensor y) { return x; }"\n')
    return (f"import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n\n{sources}\n"
            f"mod = load_inline(name='m', cpp_sources='torch::Tensor fn(torch::Tensor x, torch::Tensor y);',\n"
            f"                  cuda_sources=cuda_src, functions={functions})\n\n\n"
            f"class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            f"        {init_body}\n\n    def forward(self, {forward_args}):\n        {forward_body}\n")


def test_a_correct_elementwise_answer_becomes_an_extension_whose_forward_takes_the_groups_inputs():
    source = python_block("model_new_swish")
    out = convert(source, ["x", "p_bias"])
    assert out["function"] == "swish_bias_clamp_cuda"
    assert out["arguments"] == ["input:0", "input:1"]
    assert out["notes"] == []  # extra_cflags=[""] and verbose change nothing
    ext = out["extension_source"]
    # The answer's sources, CUDA first, then the declarations; then forward over the group's inputs.
    cuda_at = ext.index("__global__ void swish_bias_clamp_kernel")
    decl_at = ext.index("torch::Tensor swish_bias_clamp_cuda(torch::Tensor x, torch::Tensor bias);")
    assert ext.index("#include <torch/extension.h>") < cuda_at < decl_at
    assert "auto nova_group_forward(torch::Tensor nova_input_0, torch::Tensor nova_input_1) " \
           "{ return swish_bias_clamp_cuda(nova_input_0, nova_input_1); }" in ext
    assert ext.count("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)") == 1
    assert 'm.def("forward", &nova_group_forward' in ext


def test_the_linear_answer_maps_forwards_three_arguments_through_the_attribute_set_in_init():
    out = convert(python_block("model_new_linear"), ["x", "p_weight", "p_bias"])
    assert out["function"] == "linear_scale_cuda"
    assert out["arguments"] == ["input:0", "input:1", "input:2"]
    assert "__global__ void linear_scale_model_new" in out["extension_source"]


def test_arguments_are_mapped_by_name_in_the_order_the_call_gives_them_with_numbers_passed_as_literals():
    out = convert(answer("return self.mod.fn(y, x, 0.5, 3, True)"), ["a", "b"])
    assert out["arguments"] == ["input:1", "input:0", "0.5", "3", "True"]
    assert "return fn(nova_input_1, nova_input_0, 0.5, 3, true);" in out["extension_source"]


def test_sources_bound_to_names_concatenated_or_in_lists_are_read():
    sources = ('HEAD = "#include <cuda_runtime.h>\\n"\n'
               'BODY = "__global__ void k(float* p) {}\\n"\n'
               'cuda_src = [HEAD + BODY, "torch::Tensor fn(torch::Tensor x, torch::Tensor y) { return x; }"]\n')
    out = convert(answer("return mod.fn(x, y)", init_body="pass", sources=sources), ["x", "y"])
    ext = out["extension_source"]
    assert "// ---- cuda_sources[0] ----\n#include <cuda_runtime.h>\n__global__ void k" in ext
    assert "// ---- cuda_sources[1] ----\ntorch::Tensor fn(" in ext


def test_load_inline_imported_under_another_name_is_found():
    source = answer("return mod.fn(x, y)", init_body="pass").replace(
        "from torch.utils.cpp_extension import load_inline", "from torch.utils.cpp_extension import load_inline as li")
    source = source.replace("mod = load_inline(", "mod = li(")
    assert convert(source, ["x", "y"])["function"] == "fn"


def test_torch_compute_in_forward_is_refused_naming_the_statement():
    with pytest.raises(Refused, match=r"forward does more than return one call.*`s = torch\.sigmoid\(x\)`"):
        convert(python_block("model_new_torch_ops"), ["x", "p_bias"])
    with pytest.raises(Refused, match=r"returns `torch\.relu\(self\.mod\.fn\(x, y\)\)`, which is not a call"):
        convert(answer("return torch.relu(self.mod.fn(x, y))"), ["x", "y"])
    with pytest.raises(Refused, match=r"argument 1 of the call of fn, `x\.contiguous\(\)`"):
        convert(answer("return self.mod.fn(x.contiguous(), y)"), ["x", "y"])


def test_sources_built_at_run_time_are_refused():
    with pytest.raises(Refused, match=r"cuda_sources is an f-string \(line 7\).*built at run time"):
        convert(python_block("model_new_runtime_sources"), ["x", "p_bias"])
    formatted = 'cuda_src = "__global__ void k(float* p) {{ }} // {}".format(256)\n'
    with pytest.raises(Refused, match=r"cuda_sources is built at run time \(`'__global__.*\.format\(256\)`"):
        convert(answer("return self.mod.fn(x, y)", sources=formatted), ["x", "y"])
    twice = 'cuda_src = "a"\ncuda_src = "b"\n'
    with pytest.raises(Refused, match=r"`cuda_src`, which is assigned more than once"):
        convert(answer("return self.mod.fn(x, y)", sources=twice), ["x", "y"])


def test_python_that_does_not_parse_is_refused_with_its_line():
    with pytest.raises(Refused, match=r"the Python does not parse: '\(' was never closed \(line 17\)"):
        convert(python_block("model_new_syntax_error"), ["x", "p_bias"])


def test_what_cannot_be_mapped_to_the_group_is_refused():
    with pytest.raises(Refused, match=r"forward takes 1 argument\(s\) \(x\) but the group has 2 input\(s\) \(a, b\)"):
        convert(answer("return self.mod.fn(x, x)", forward_args="x"), ["a", "b"])
    with pytest.raises(Refused, match=r"__init__ does more than bind the loaded module.*nn\.Parameter"):
        convert(answer("return self.mod.fn(x, y)", init_body="self.w = nn.Parameter(torch.ones(3))"), ["x", "y"])
    with pytest.raises(Refused, match=r"calls `other`, which load_inline's functions do not list \(fn\)"):
        convert(answer("return self.mod.other(x, y)"), ["x", "y"])
    two = answer("return self.mod.fn(x, y)") + "\nmod2 = load_inline(name='n', cpp_sources='', cuda_sources='')\n"
    with pytest.raises(Refused, match=r"calls load_inline 2 times \(lines 7, 19\)"):
        convert(two, ["x", "y"])
    with pytest.raises(Refused, match=r"calls no torch\.utils\.cpp_extension\.load_inline"):
        convert("import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n", ["x"])


def test_ignored_build_flags_are_said():
    source = answer("return self.mod.fn(x, y)").replace("functions=[\"fn\"])",
                                                         "functions=[\"fn\"], extra_cuda_cflags=['--use_fast_math'])")
    out = convert(source, ["x", "y"])
    assert out["notes"] == ["load_inline's extra_cuda_cflags (`['--use_fast_math']`) is not used: the full path "
                            "builds with its own nvcc flags"]


def test_reading_an_answer_runs_none_of_it(tmp_path):
    marker = tmp_path / "ran"
    source = answer("return self.mod.fn(x, y)").replace(
        "import torch\n", f"import torch\nopen({str(marker)!r}, 'w').write('ran')\n", 1)
    convert(source, ["x", "y"])
    assert not marker.exists()


def test_the_command_line_answers_json_and_says_what_a_bad_request_lacks():
    env = dict(os.environ, PYTHONPATH=PACKAGE)
    request = json.dumps({"source": python_block("model_new_torch_ops"), "inputs": ["x", "p_bias"]})
    r = subprocess.run([sys.executable, "-m", "nova_worker.kernelbench_form"], input=request, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["problem"].startswith("ModelNew.forward does more than return one call")
    r = subprocess.run([sys.executable, "-m", "nova_worker.kernelbench_form"], input='{"source": 3}', env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "bad request" in r.stderr and "inputs" in r.stderr
    assert kernelbench_form.__doc__ and "executes nothing" in kernelbench_form.__doc__
