"""The PyTorch side of a validation or benchmark: loads the problem a candidate replaces.

Two forms are accepted:
  * a fusion group's functional source (core's FusionGroup.functional_source): `module_fn(*inputs)`
    and `get_inputs()`; every input, weights included, is drawn fresh for each seed;
  * a model file in KernelBench's functional form (`Model(*get_init_inputs())`, `get_inputs()`,
    `forward(..., fn=module_fn)`), as full-path torch extensions like the seed's are written; the
    model is rebuilt under each seed, so its weights are fresh too.
An Instance holds one draw of inputs and calls the reference or a candidate on them.
"""

import inspect
import os

import torch

from .loader import import_user_module
from .protocol import WorkerFailure

# torch.export's prefixes for parameters, buffers and lifted constants: these keep their shape
# when the batch size changes.
_PARAM_PREFIXES = ("p_", "b_", "c_")


def _fresh_like(t, shape):
    if t.is_floating_point():
        return torch.randn(shape, dtype=t.dtype)
    if t.dtype == torch.bool:
        return torch.rand(shape) < 0.5
    return torch.randint(0, 8, shape, dtype=t.dtype)


class Instance:
    """One draw of inputs on the device, with the calls that run on them."""

    def __init__(self, problem, inputs, model=None):
        self.problem = problem
        self.inputs = inputs
        self.model = model

    def tensors(self):
        """Everything a candidate could modify: the inputs and the model's parameters/buffers."""
        ts = [x for x in self.inputs if isinstance(x, torch.Tensor)]
        if self.model is not None:
            ts += list(self.model.parameters()) + list(self.model.buffers())
        return ts

    def reference(self):
        with torch.no_grad():
            if self.model is not None:
                out = self.model(*self.inputs)
            else:
                out = self.problem.fn(*self.inputs)
        return out if isinstance(out, tuple) else (out,)

    def candidate(self, fn):
        with torch.no_grad():
            if self.model is not None:
                out = self.model(*self.inputs, fn=fn)
            else:
                out = fn(*self.inputs)
        return out if isinstance(out, (tuple, list)) and not isinstance(out, torch.Tensor) else (out,)

    def candidate_fn(self, fn):
        """A zero-argument callable of the candidate, for timing: the same call shape as
        reference_fn, with nothing around it that eager does not also pay per call (the caller
        turns autograd off for both; outputs are not normalized to a tuple)."""
        if self.model is not None:
            return lambda: self.model(*self.inputs, fn=fn)
        return lambda: fn(*self.inputs)

    def reference_fn(self):
        """A zero-argument callable of the reference (for timing and torch.compile)."""
        if self.model is not None:
            return lambda: self.model(*self.inputs)
        return lambda: self.problem.fn(*self.inputs)

    def compiled_fn(self):
        if self.model is not None:
            compiled = torch.compile(self.model)
        else:
            compiled = torch.compile(self.problem.fn)
        return lambda: compiled(*self.inputs)

    def upcast(self):
        """The same draw in float64 (the near-exact reference)."""
        inputs = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                  for x in self.inputs]
        model = None
        if self.model is not None:
            import copy
            model = copy.deepcopy(self.model).double()
        return Instance(self.problem, inputs, model)


class Problem:
    """The reference a candidate must match, loaded from a file (see the module docstring)."""

    def __init__(self, path, device="cuda", name=None):
        self.path = os.path.abspath(path)
        self.name = name or self.path  # how messages and results name it (core's path of the source)
        self.device = torch.device(device)
        self.module = import_user_module(self.path, "nova_problem_", self.name)
        m = self.module
        if not hasattr(m, "get_inputs"):
            raise WorkerFailure("user_error", f"{self.name}: no get_inputs()", file=self.name)
        self.form = "model" if hasattr(m, "Model") and hasattr(m, "get_init_inputs") else "group"
        if self.form == "group" and not hasattr(m, "module_fn"):
            raise WorkerFailure("user_error", f"{self.name}: neither module_fn (fusion group) nor "
                                              "Model/get_init_inputs", file=self.name)
        self.fn = getattr(m, "module_fn", None)
        self.input_names = []
        if self.form == "group":
            self.input_names = list(inspect.signature(self.fn).parameters)

    def _batch_indices(self, inputs):
        """Positions of inputs that carry the batch dimension: tensors other than parameters
        whose first dimension equals the first such tensor's."""
        idx = []
        batch = None
        for i, x in enumerate(inputs):
            if not isinstance(x, torch.Tensor) or x.dim() == 0:
                continue
            name = self.input_names[i] if i < len(self.input_names) else ""
            if name.startswith(_PARAM_PREFIXES):
                continue
            if batch is None:
                batch = x.shape[0]
            if x.shape[0] == batch:
                idx.append(i)
        return idx, batch

    def instantiate(self, seed, batch=None):
        """Fresh inputs (and weights) from `seed`; `batch` replaces the batch size if given."""
        torch.manual_seed(seed)
        model = None
        if self.form == "model":
            model = self.module.Model(*self.module.get_init_inputs()).to(self.device).eval()
        inputs = list(self.module.get_inputs())
        if batch is not None:
            idx, _ = self._batch_indices(inputs)
            for i in idx:
                inputs[i] = _fresh_like(inputs[i], (batch,) + tuple(inputs[i].shape[1:]))
        inputs = [x.to(self.device).contiguous() if isinstance(x, torch.Tensor) else x for x in inputs]
        return Instance(self, inputs, model)

    def batch_size(self):
        torch.manual_seed(0)
        idx, batch = self._batch_indices(list(self.module.get_inputs()))
        return batch if idx else None
