"""Graph capture: torch.export first; when export cannot follow the model (value-dependent control
flow, unsupported constructs), an eager run under a TorchDispatchMode that records the ATen ops on
the path the example inputs take. Both routes yield the same plain Capture: ATen nodes with their
arguments, output metadata, module scope and the user's source line, plus every value computed
with the example inputs (used to check the fusion groups' functional sources)."""

import linecache
import operator
import os
import re
import sys

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

from . import costs


class Ref:
    """A reference to a tensor value by name inside a node's arguments."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


class TensorMeta:
    def __init__(self, name, t):
        self.name = name
        self.shape = [int(s) for s in t.shape]
        self.stride = [int(s) for s in t.stride()] if t.layout == torch.strided else []
        self.torch_dtype = t.dtype
        self.dtype = str(t.dtype).replace("torch.", "")
        self.itemsize = t.element_size()

    def to_json(self):
        return {"name": self.name, "shape": self.shape, "stride": self.stride, "dtype": self.dtype}


class IRNode:
    def __init__(self, op, args, kwargs, out_names, outputs):
        self.op = op                # torch._ops.OpOverload
        self.args = args            # positional arguments, tensors as Ref
        self.kwargs = kwargs
        self.out_names = out_names  # aligned with the op's returns (None where not a tensor)
        self.outputs = outputs      # TensorMeta of each tensor output
        self.scope = ""
        self.scope_type = ""
        self.file = ""
        self.line = 0
        self.source_text = ""

    @property
    def name(self):
        return self.outputs[0].name if self.outputs else self.out_names[0]

    def input_names(self):
        names = []
        for leaf in tree_flatten((self.args, self.kwargs))[0]:
            if isinstance(leaf, Ref) and leaf.name not in names:
                names.append(leaf.name)
        return names


class Capture:
    def __init__(self, route):
        self.route = route
        self.nodes = []
        self.inputs = []        # TensorMeta of user tensor inputs
        self.params = []        # (param name, graph input name, TensorMeta, is_buffer)
        self.constants = []     # TensorMeta of constant tensors the graph reads
        self.outputs = []       # output value names
        self.values = {}        # name -> tensor computed with the example inputs
        self.warnings = []
        # torch.export route only, to compute the values again from other tensors (values_from):
        self.graph_module = None
        self.placeholders = []  # value names of the graph module's inputs, in order
        self.sources = {}       # value name -> (graph node name, index into its tuple or None)
        self.targets = {}       # parameter, buffer or constant value name -> its path in the model

    def meta(self, name):
        for m in self.inputs + self.constants + [p[2] for p in self.params]:
            if m.name == name:
                return m
        for n in self.nodes:
            for m in n.outputs:
                if m.name == name:
                    return m
        return None


def _same_file(a, b):
    return os.path.realpath(a) == os.path.realpath(b)


def user_frame(model_path):
    """(line, text) of the innermost frame of the call stack in the user's model file."""
    frame = sys._getframe(1)
    while frame is not None:
        if _same_file(frame.f_code.co_filename, model_path):
            return frame.f_lineno, linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
        frame = frame.f_back
    return 0, ""


BRANCH_CALLS = {"__bool__", "item", "tolist", "__int__", "__float__", "__index__", "nonzero"}


class FunctionLineRecorder(TorchFunctionMode):
    """Eager run recording, for each top-level torch function call, the user's line; and every
    place a tensor's value decides Python control flow (bool(tensor), .item())."""

    def __init__(self, model_path):
        super().__init__()
        self.model_path = model_path
        self.calls = {}       # (name, occurrence) -> (line, text)
        self.counts = {}
        self.branches = []    # (line, text)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", str(func))
        line, text = user_frame(self.model_path)
        if name in BRANCH_CALLS and line and (line, text) not in self.branches:
            self.branches.append((line, text))
        key = name.strip("_")
        if key.startswith("r") and hasattr(torch.Tensor, key[1:]) and name.startswith("__"):
            key = key[1:]  # __radd__ -> add
        self.counts[key] = self.counts.get(key, 0) + 1
        self.calls[(key, self.counts[key])] = (line, text)
        return func(*args, **(kwargs or {}))


def _tensor_inputs_and_names(model, inputs, forward_names):
    names = []
    for i, value in enumerate(inputs):
        if not isinstance(value, torch.Tensor):
            continue
        name = forward_names[i] if i < len(forward_names) else ""
        if not name.isidentifier() or name in names or name.startswith(("p_", "b_", "c_")):
            name = f"input_{i}"
        names.append(name)
    return names


def scalar_inputs(inputs, forward_names):
    out = []
    for i, value in enumerate(inputs):
        if not isinstance(value, torch.Tensor):
            out.append({"index": i, "name": forward_names[i] if i < len(forward_names) else "",
                        "value": json_value(value)})
    return out


def json_value(v):
    if isinstance(v, Ref):
        return {"tensor": v.name}
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return v
    if isinstance(v, float):
        return v if v == v and abs(v) != float("inf") else str(v)
    if isinstance(v, (list, tuple)):
        return [json_value(x) for x in v]
    if isinstance(v, torch.Tensor):
        return v.tolist() if v.numel() <= 16 else f"tensor{list(v.shape)}"
    return str(v)


def make_wrapper(model, inputs, tensor_names):
    """A module whose forward takes only the tensor inputs, with the other inputs baked in as
    constants (export specialises on them)."""
    params, call, k = [], [], 0
    for i, value in enumerate(inputs):
        if isinstance(value, torch.Tensor):
            params.append(tensor_names[k])
            call.append(tensor_names[k])
            k += 1
        else:
            call.append(f"self._scalars[{i}]")
    src = f"def forward(self, {', '.join(params)}):\n    return self.inner({', '.join(call)})\n"
    namespace = {}
    exec(src, namespace)

    class IntakeWrapper(torch.nn.Module):
        forward = namespace["forward"]

        def __init__(self):
            super().__init__()
            self.inner = model
            self._scalars = {i: v for i, v in enumerate(inputs) if not isinstance(v, torch.Tensor)}

    return IntakeWrapper()


def _strip_inner(path):
    if path == "inner":
        return ""
    return path[len("inner."):] if path.startswith("inner.") else path


def _type_name(t, module_name, stem):
    s = t if isinstance(t, str) else f"{t.__module__}.{t.__qualname__}"
    return stem + s[len(module_name):] if s.startswith(module_name + ".") else s


def _location_from_stack_trace(stack_trace, model_path):
    line = 0
    for m in re.finditer(r'File "([^"]+)", line (\d+)', stack_trace or ""):
        if _same_file(m.group(1), model_path):
            line = int(m.group(2))
    return line


def export_program(model, inputs, forward_names):
    """(exported program, tensor inputs): torch.export of the model with its non-tensor inputs baked
    in, then functionalised or decomposed only where needed. Intake and profiling both capture
    through here, so their node numbering (call_function nodes but getitem, in order) agrees."""
    tensor_names = _tensor_inputs_and_names(model, inputs, forward_names)
    tensors = tuple(v for v in inputs if isinstance(v, torch.Tensor))
    ep = torch.export.export(make_wrapper(model, inputs, tensor_names), tensors)
    # The export IR is already ATen; functionalise (in-place ops) or decompose only where needed.
    targets = [n.target for n in ep.graph.nodes if n.op == "call_function" and n.target is not operator.getitem]
    if any(not isinstance(t, torch._ops.OpOverload) for t in targets):
        ep = ep.run_decompositions()
    elif any(t._schema.is_mutable for t in targets):
        ep = ep.run_decompositions({})
    return ep, tensors


def capture_export(model, inputs, forward_names, model_path, module_name, lines):
    ep, tensors = export_program(model, inputs, forward_names)
    cap = Capture("torch.export")
    stem = os.path.splitext(os.path.basename(model_path))[0]
    kinds = torch.export.graph_signature.InputKind
    rename, flat_args = {}, []
    for spec, user_value in zip(ep.graph_signature.input_specs, _user_iter(ep, tensors)):
        name = spec.arg.name
        if spec.kind == kinds.USER_INPUT:
            flat_args.append(user_value)
            continue
        target = _strip_inner(spec.target)
        if spec.kind in (kinds.PARAMETER, kinds.BUFFER):
            value = ep.state_dict.get(spec.target)
            if value is None:
                value = ep.constants[spec.target]
            prefix = "p_" if spec.kind == kinds.PARAMETER else "b_"
        else:
            value = ep.constants[spec.target]
            prefix = "c_"
        rename[name] = prefix + re.sub(r"\W", "_", target)
        cap.targets[rename[name]] = target
        flat_args.append(value)
    values = _interpret(ep.graph_module, flat_args)
    cap.graph_module = ep.graph_module
    nodes = list(ep.graph.nodes)
    getitems = {}
    for n in nodes:
        if n.op == "call_function" and n.target is operator.getitem:
            getitems.setdefault(n.args[0].name, {})[n.args[1]] = n.name

    def ref(v):
        return Ref(rename.get(v.name, v.name)) if isinstance(v, torch.fx.Node) else v

    for spec, n in zip(ep.graph_signature.input_specs, [n for n in nodes if n.op == "placeholder"]):
        name = rename.get(n.name, n.name)
        meta = TensorMeta(name, n.meta["val"])
        cap.values[name] = values[n.name]
        cap.placeholders.append(name)
        cap.sources[name] = (n.name, None)
        if spec.kind == kinds.USER_INPUT:
            cap.inputs.append(meta)
        elif spec.kind in (kinds.PARAMETER, kinds.BUFFER):
            cap.params.append((_strip_inner(spec.target), name, meta, spec.kind == kinds.BUFFER))
        else:
            cap.constants.append(meta)
    for n in nodes:
        if n.op == "output":
            cap.outputs = [ref(o).name for o in tree_flatten(n.args[0])[0] if isinstance(o, torch.fx.Node)]
        if n.op != "call_function" or n.target is operator.getitem:
            continue
        if not isinstance(n.target, torch._ops.OpOverload):
            raise RuntimeError(f"graph node {n.name} calls {n.target}, not an ATen op")
        val = n.meta.get("val")
        if isinstance(val, (list, tuple)):
            out_names = [getitems.get(n.name, {}).get(i, f"{n.name}_{i}") if isinstance(v, torch.Tensor)
                         else None for i, v in enumerate(val)]
            outputs = [TensorMeta(nm, v) for nm, v in zip(out_names, val) if nm]
            for i, nm in enumerate(out_names):
                if nm:
                    cap.values[nm] = values[n.name][i]
                    cap.sources[nm] = (n.name, i)
        else:
            out_names = [n.name]
            outputs = [TensorMeta(n.name, val)] if isinstance(val, torch.Tensor) else []
            cap.values[n.name] = values[n.name]
            cap.sources[n.name] = (n.name, None)
        node = IRNode(n.target, list(tree_map(ref, n.args)), dict(tree_map(ref, n.kwargs)), out_names, outputs)
        stack = list((n.meta.get("nn_module_stack") or {}).values())
        if stack:
            node.scope = _strip_inner(stack[-1][0])
            node.scope_type = _type_name(stack[-1][1], module_name, stem)
        if not node.scope:
            node.scope_type = _type_name(type(model), module_name, stem)
        node.file = model_path
        node.line = _location_from_stack_trace(n.meta.get("stack_trace"), model_path)
        torch_fn = n.meta.get("torch_fn")
        if torch_fn and lines is not None:
            base, _, idx = torch_fn[0].rpartition("_")
            hit = lines.calls.get((base, int(idx))) if idx.isdigit() else None
            if hit and hit[0]:
                node.line = hit[0]
        if node.line:
            node.source_text = linecache.getline(model_path, node.line).strip()
        cap.nodes.append(node)
    return cap


def _user_iter(ep, tensors):
    it = iter(tensors)
    kinds = torch.export.graph_signature.InputKind
    for spec in ep.graph_signature.input_specs:
        yield next(it) if spec.kind == kinds.USER_INPUT else None


def values_from(cap, inputs):
    """name -> value of every tensor of an exported capture, computed again from `inputs` (value name
    -> tensor for each of cap.placeholders), e.g. real tensors on a GPU for a graph captured on meta."""
    env = _interpret(cap.graph_module, [inputs[name] for name in cap.placeholders])
    return {name: env[node] if index is None else env[node][index] for name, (node, index) in cap.sources.items()}


def _interpret(gm, flat_args):
    env = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            result = super().run_node(n)
            env[n.name] = result
            return result

    with torch.no_grad():
        Recorder(gm).run(*flat_args)
    return env


SCALAR_READS = {"_local_scalar_dense", "is_nonzero", "item", "equal"}


class DispatchRecorder(TorchDispatchMode):
    """Records every ATen op an eager forward runs, naming values as it goes."""

    def __init__(self, cap, model_path, names):
        super().__init__()
        self.cap = cap
        self.model_path = model_path
        self.names = names        # id(tensor) -> name
        self.keep = []            # keeps named tensors alive so their ids stay unique
        self.used = set(names.values())
        self.scope = [("", "")]

    def fresh(self, base):
        name, i = base, 1
        while name in self.used:
            name = f"{base}_{i}"
            i += 1
        self.used.add(name)
        return name

    def name_of(self, t):
        name = self.names.get(id(t))
        if name is None:  # a tensor made outside the recorded ops: a constant of the graph
            name = self.fresh("c_const")
            self.names[id(t)] = name
            self.keep.append(t)
            self.cap.constants.append(TensorMeta(name, t))
            self.cap.values[name] = t.detach().clone()
        return name

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        base = costs.packet_name(func)
        if base in SCALAR_READS:
            return out
        conv = lambda v: Ref(self.name_of(v)) if isinstance(v, torch.Tensor) else v
        node_args, node_kwargs = list(tree_map(conv, list(args))), dict(tree_map(conv, kwargs))
        flat = list(out) if isinstance(out, (list, tuple)) else [out]
        out_names, outputs = [], []
        for t in flat:
            if isinstance(t, torch.Tensor):
                name = self.fresh(base.lstrip("_"))
                self.names[id(t)] = name
                self.keep.append(t)
                self.cap.values[name] = t
                out_names.append(name)
                outputs.append(TensorMeta(name, t))
            else:
                out_names.append(None)
        node = IRNode(func, node_args, node_kwargs, out_names, outputs)
        node.scope, node.scope_type = self.scope[-1]
        node.file = self.model_path
        node.line, node.source_text = user_frame(self.model_path)
        self.cap.nodes.append(node)
        return out


def capture_dispatch(model, inputs, forward_names, model_path, module_name):
    cap = Capture("dispatch_trace")
    stem = os.path.splitext(os.path.basename(model_path))[0]
    names = {}
    tensor_names = iter(_tensor_inputs_and_names(model, inputs, forward_names))
    for value in inputs:
        if isinstance(value, torch.Tensor):
            name = next(tensor_names)
            names[id(value)] = name
            cap.inputs.append(TensorMeta(name, value))
            cap.values[name] = value
    for is_buffer, items in ((False, model.named_parameters()), (True, model.named_buffers())):
        for pname, t in items:
            gname = ("b_" if is_buffer else "p_") + re.sub(r"\W", "_", pname)
            names[id(t)] = gname
            cap.params.append((pname, gname, TensorMeta(gname, t), is_buffer))
            cap.values[gname] = t.detach()
    paths = {id(m): p for p, m in model.named_modules()}
    recorder = DispatchRecorder(cap, model_path, names)

    def pre_hook(mod, args):
        path = paths.get(id(mod))
        if path is not None:
            recorder.scope.append((path, _type_name(type(mod), module_name, stem)))

    def post_hook(mod, args, out):
        if paths.get(id(mod)) is not None and len(recorder.scope) > 1:
            recorder.scope.pop()

    from torch.nn.modules import module as nn_module
    handles = [nn_module.register_module_forward_pre_hook(pre_hook),
               nn_module.register_module_forward_hook(post_hook)]
    try:
        with torch.no_grad(), recorder:
            out = model(*inputs)
    finally:
        for h in handles:
            h.remove()
    cap.outputs = [names[id(t)] for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]
    # Only what the outputs depend on (drops the ops that computed a branch condition).
    needed, kept = set(cap.outputs), []
    for node in reversed(cap.nodes):
        if any(n in needed for n in node.out_names if n):
            kept.append(node)
            needed.update(node.input_names())
    cap.nodes = list(reversed(kept))
    cap.constants = [c for c in cap.constants if c.name in needed]
    return cap
