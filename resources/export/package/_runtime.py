"""ModelNew and optimize(): the client's Model, unchanged in its constructor, forward signature and
state_dict, with each shipped fusion group's ATen nodes replaced by a call to the group's op.

On the first call with a new input signature (tensor shapes, dtypes, devices; the values of the
non-tensor arguments; training mode) the forward is captured with torch.export exactly as nova's
intake captured it (the same wrapper and decomposition, so the graph's nodes are numbered the same),
and each shipped group's nodes, found by the node ids and ATen targets recorded at export, are
replaced by one call. That call runs the op only on inputs of the shapes and dtypes its kernels were
built for (contiguous, on CUDA); any other call runs the group's original nodes, taken from the same
capture, so every shape the client's model accepts still works. Where the capture fails or a group's
nodes are not found, that signature (or group) runs the client's original code, with a warning.
"""

import functools
import inspect
import operator
import re
import threading
import warnings
import weakref

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from . import _ops
from . import client_model

MANIFEST = _ops.MANIFEST
Model = client_model.Model
get_inputs = client_model.get_inputs
get_init_inputs = client_model.get_init_inputs

# The device type the kernels run on (a test of the package's pure parts registers CPU kernels).
KERNEL_DEVICE = "cuda"

_lock = threading.Lock()
_captures = weakref.WeakKeyDictionary()  # model -> {input signature: Accelerated or None}
_warned = set()


def _warn_once(message):
    if message not in _warned:
        _warned.add(message)
        warnings.warn(f"{MANIFEST['package']}: {message}", RuntimeWarning, stacklevel=3)


# --- the capture, as nova's intake does it (nova_worker/capture.py) ---------------------------------

def forward_param_names(forward):
    """Names of forward's positional parameters (without self and fn)."""
    try:
        params = list(inspect.signature(forward).parameters.values())[1:]
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.name != "fn" and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _tensor_names(inputs, forward_names):
    names = []
    for i, value in enumerate(inputs):
        if not isinstance(value, torch.Tensor):
            continue
        name = forward_names[i] if i < len(forward_names) else ""
        if not name.isidentifier() or name in names or name.startswith(("p_", "b_", "c_")):
            name = f"input_{i}"
        names.append(name)
    return names


def _make_wrapper(model, forward, inputs, tensor_names):
    """A module whose forward takes only the tensor inputs and calls the client's forward with the
    other inputs baked in (export specialises on them)."""
    params, call, k = [], [], 0
    for i, value in enumerate(inputs):
        if isinstance(value, torch.Tensor):
            params.append(tensor_names[k])
            call.append(tensor_names[k])
            k += 1
        else:
            call.append(f"self._scalars[{i}]")
    src = f"def forward(self, {', '.join(params)}):\n    return self._forward(self.inner, {', '.join(call)})\n"
    namespace = {}
    exec(src, namespace)

    class ExportWrapper(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model
            self._scalars = {i: v for i, v in enumerate(inputs) if not isinstance(v, torch.Tensor)}
            self._forward = forward

    ExportWrapper.forward = namespace["forward"]
    return ExportWrapper()


def _strip_inner(path):
    if path == "inner":
        return ""
    return path[len("inner."):] if path.startswith("inner.") else path


def export_program(model, forward, inputs):
    """torch.export of the client's forward with its non-tensor inputs baked in, functionalised or
    decomposed only where needed (as intake did)."""
    names = _tensor_names(inputs, forward_param_names(forward))
    tensors = tuple(v for v in inputs if isinstance(v, torch.Tensor))
    ep = torch.export.export(_make_wrapper(model, forward, inputs, names), tensors)
    targets = [n.target for n in ep.graph.nodes if n.op == "call_function" and n.target is not operator.getitem]
    if any(not isinstance(t, torch._ops.OpOverload) for t in targets):
        ep = ep.run_decompositions()
    elif any(t._schema.is_mutable for t in targets):
        ep = ep.run_decompositions({})
    return ep


# --- replacing the groups ---------------------------------------------------------------------------

# Calls of each op in eager mode: how many ran the kernels and how many took the original PyTorch
# path (the shape guard). `nova check-package` reads them to show that the kernels ran.
CALLS = {}


def accelerated(inputs, specs):
    """Whether the op's kernels can take these inputs: contiguous CUDA tensors of exactly the shapes
    and dtypes they were built for (the shape guard)."""
    if not _ops.COMPILED or len(inputs) != len(specs):
        return False
    for t, s in zip(inputs, specs):
        if not (isinstance(t, torch.Tensor) and t.device.type == KERNEL_DEVICE and t.is_contiguous()
                and t.dtype == _ops.DTYPES.get(s["dtype"]) and list(t.shape) == s["shape"]):
            return False
    return True


def group_call(group, original):
    """The callable that stands for a group in the captured graph: its op where the shape guard lets
    it, else `original` (the group's nodes from the same capture)."""
    op = _ops.op(group["op"])
    specs = group["input_specs"]

    counts = CALLS.setdefault(group["op"], {"kernel": 0, "fallback": 0})

    def call(*inputs):
        if accelerated(inputs, specs):
            if not torch.compiler.is_compiling():
                counts["kernel"] += 1
            return op(*inputs)
        if not torch.compiler.is_compiling():
            counts["fallback"] += 1
        return _ops.as_list(original(*inputs))

    call.__name__ = f"{MANIFEST['package']}_{group['op']}"
    return call


def _value_nodes(ep):
    """Value name as intake named it -> the fx node holding it (parameters as p_<path>, buffers as
    b_<path>, lifted constants as c_<path>; getitem nodes for multi-output ops)."""
    kinds = torch.export.graph_signature.InputKind
    values = {}
    placeholders = [n for n in ep.graph.nodes if n.op == "placeholder"]
    for spec, node in zip(ep.graph_signature.input_specs, placeholders):
        if spec.kind == kinds.USER_INPUT:
            values[node.name] = node
            continue
        prefix = {kinds.PARAMETER: "p_", kinds.BUFFER: "b_"}.get(spec.kind, "c_")
        values[prefix + re.sub(r"\W", "_", _strip_inner(spec.target))] = node
    for node in ep.graph.nodes:
        if node.op == "call_function":
            values[node.name] = node
    return values


def replace_groups(ep):
    """Replaces each shipped group's nodes in ep's graph by one call; returns the ids replaced."""
    graph = ep.graph_module.graph
    calls = [n for n in graph.nodes if n.op == "call_function" and n.target is not operator.getitem]
    order = {n: i for i, n in enumerate(graph.nodes)}
    values = _value_nodes(ep)
    replaced = []
    for group in _ops.SHIPPED:
        ids = group["nodes"]
        if any(i >= len(calls) or str(calls[i].target) != t for i, t in zip(ids, group["node_targets"])):
            _warn_once(f"group {group['id']}'s nodes are not where intake found them in this capture: "
                       "the group runs its original PyTorch code")
            continue
        members = set(calls[i] for i in ids)
        members |= {u for n in list(members) for u in n.users if u.target is operator.getitem}
        ins = [values.get(name) for name in group["inputs"]]
        outs = [values.get(name) for name in group["outputs"]]
        if any(n is None for n in ins + outs) or any(n in members for n in ins):
            _warn_once(f"group {group['id']}'s inputs or outputs are not in this capture: it runs PyTorch")
            continue
        # The group's original nodes as a graph of their own: the fallback of its call.
        sub = torch.fx.Graph()
        env = {n: sub.placeholder(f"input_{k}") for k, n in enumerate(ins)}
        try:
            for n in graph.nodes:
                if n in members:
                    env[n] = sub.node_copy(n, lambda a: env[a])
        except KeyError:
            _warn_once(f"group {group['id']} reads a value that is not one of its inputs: it runs PyTorch")
            continue
        sub.output(tuple(env[o] for o in outs))
        original = torch.fx.GraphModule(torch.nn.Module(), sub)
        # One call where every input is ready and before any use of an output outside the group.
        users = [u for o in outs for u in o.users if u not in members]
        first_use = min(users, key=order.get) if users else next(n for n in graph.nodes if n.op == "output")
        if any(order[n] >= order[first_use] for n in ins):
            _warn_once(f"group {group['id']} cannot be placed in this capture's order: it runs PyTorch")
            continue
        with graph.inserting_before(first_use):
            call = graph.call_function(group_call(group, original), tuple(ins))
            taken = [graph.call_function(operator.getitem, (call, k)) for k in range(len(outs))]
        for name, o, t in zip(group["outputs"], outs, taken):
            o.replace_all_uses_with(t, delete_user_cb=lambda user: user not in members)
            values[name] = t  # a later group reads the output from the call now
        for n in reversed(list(graph.nodes)):
            if n in members:
                graph.erase_node(n)
        order = {n: i for i, n in enumerate(graph.nodes)}
        replaced.append(group["id"])
    graph.lint()
    ep.graph_module.recompile()
    return replaced


class Accelerated:
    """One captured signature of a model: the rewritten graph and how to call it."""

    def __init__(self, model, forward, inputs):
        self.ep = export_program(model, forward, inputs)
        self.replaced = replace_groups(self.ep)
        self.out_spec = self.ep.call_spec.out_spec

    def __call__(self, model, inputs):
        kinds = torch.export.graph_signature.InputKind
        tensors = iter([v for v in inputs if isinstance(v, torch.Tensor)])
        flat = []
        for spec in self.ep.graph_signature.input_specs:
            if spec.kind == kinds.USER_INPUT:
                flat.append(next(tensors))
            elif spec.kind == kinds.PARAMETER:
                flat.append(model.get_parameter(_strip_inner(spec.target)))
            elif spec.kind == kinds.BUFFER and spec.target in self.ep.constants:
                flat.append(self.ep.constants[spec.target])  # a non-persistent buffer
            elif spec.kind == kinds.BUFFER:
                flat.append(model.get_buffer(_strip_inner(spec.target)))
            else:
                flat.append(self.ep.constants[spec.target])
        outs = self.ep.graph_module(*flat)
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        okinds = torch.export.graph_signature.OutputKind
        user = []
        user_inputs = [v for v in inputs if isinstance(v, torch.Tensor)]
        for spec, value in zip(self.ep.graph_signature.output_specs, outs):
            if spec.kind == okinds.BUFFER_MUTATION:
                with torch.no_grad():
                    model.get_buffer(_strip_inner(spec.target)).copy_(value)
            elif spec.kind == okinds.USER_INPUT_MUTATION:
                names = [s.arg.name for s in self.ep.graph_signature.input_specs if s.kind == kinds.USER_INPUT]
                with torch.no_grad():
                    user_inputs[names.index(spec.target)].copy_(value)
            else:
                user.append(value)
        return tree_unflatten(user, self.out_spec)


def _signature_key(model, inputs):
    key = [model.training]
    for v in inputs:
        if isinstance(v, torch.Tensor):
            key.append(("T", tuple(v.shape), v.dtype, str(v.device), v.is_contiguous()))
        else:
            key.append(("S", type(v).__name__, repr(v)))
    return tuple(key)


def captures(model):
    """The signatures captured for `model` so far: {signature: Accelerated, or None where the capture
    failed and the calls run the original code}."""
    return dict(_captures.get(model, {}))


@torch.compiler.disable
def _accelerated_for(model, forward, inputs):
    # Kept outside the model: torch.export restores the attributes of the module it traces.
    cache = _captures.setdefault(model, {})
    key = _signature_key(model, inputs)
    with _lock:
        if key not in cache:
            try:
                cache[key] = Accelerated(model, forward, inputs)
            except Exception as exc:  # the client's forward could not be captured: it runs as written
                _warn_once(f"torch.export could not capture the forward for inputs {key[1:]} "
                           f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
                           "those calls run the original PyTorch code")
                cache[key] = None
        return cache[key]


def accelerated_forward(original_forward):
    """A forward with original_forward's signature that runs the rewritten graph of its signature."""
    signature = inspect.signature(original_forward)
    fn_default = signature.parameters["fn"].default if "fn" in signature.parameters else None
    plain = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in signature.parameters.values())

    @functools.wraps(original_forward)
    def forward(self, *args, **kwargs):
        if not plain or not _ops.SHIPPED:
            return original_forward(self, *args, **kwargs)
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        if "fn" in bound.arguments and bound.arguments["fn"] is not fn_default:
            return original_forward(self, *args, **kwargs)  # another fn: the client's own code
        inputs = [v for name, v in list(bound.arguments.items())[1:] if name != "fn"]
        acc = _accelerated_for(self, original_forward, inputs)
        if acc is None:
            return original_forward(self, *args, **kwargs)
        return acc(self, inputs)

    return forward


_classes = {}


def accelerated_class(cls):
    """A subclass of `cls` whose forward is accelerated; nothing else differs (no new parameters,
    buffers or constructor arguments), so its state_dict is cls's."""
    if getattr(cls, "_nova_package", None) == MANIFEST["package"]:
        return cls
    if cls not in _classes:
        _classes[cls] = type(cls.__name__ + "New", (cls,), {
            "forward": accelerated_forward(cls.forward), "_nova_package": MANIFEST["package"],
            "__module__": __name__, "__doc__": cls.__doc__})
    return _classes[cls]


def check_state_dict(model):
    """Raises ValueError unless the model holds the parameters the package was exported for."""
    have = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    for p in MANIFEST["params"]:
        if p["name"] in have and have[p["name"]] != tuple(p["shape"]):
            raise ValueError(f"{p['name']} has shape {list(have[p['name']])}, the package was exported for "
                             f"{p['shape']}: this is not the model the package was made for")
    missing = [p["name"] for p in MANIFEST["params"] if p["name"] not in have]
    if missing:
        raise ValueError(f"the model has no {', '.join(missing[:5])}: this is not the model the package was made for")


def optimize(model):
    """Accelerates an existing instance of the client's Model in place (and returns it): its class
    becomes an accelerated subclass; parameters, buffers and state_dict are unchanged."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError("optimize() takes an instance of the model's Model (a torch.nn.Module)")
    check_state_dict(model)
    model.__class__ = accelerated_class(type(model))
    return model


ModelNew = accelerated_class(Model)
ModelNew.__name__ = ModelNew.__qualname__ = "ModelNew"
