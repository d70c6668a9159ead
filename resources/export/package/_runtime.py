"""ModelNew and optimize(): the client's Model, unchanged in its constructor, forward signature and
state_dict, with each shipped fusion group's ATen nodes replaced by a call to the group's op.

On the first call with a new input signature (tensor shapes, dtypes, devices; the values of the
non-tensor arguments; training mode) the forward is captured with torch.export exactly as nova's
intake captured it (the same wrapper and decomposition, so the graph's nodes are numbered the same),
and each shipped group's nodes, found by the node ids and ATen targets recorded at export, are
replaced by one call. That call runs the op only on inputs of the shapes and dtypes its kernels were
built for (on CUDA); any other call runs the group's original nodes, taken from the same
capture, so every shape the client's model accepts still works. The shapes, dtypes and devices are
fixed for a signature, so that guard is decided once, at capture; a strided input (a transposed key
in attention) is made contiguous for the op. With autograd off (torch.no_grad) the graph runs below
the autograd layer, so no op passes through its autograd formula only to hand the call on. Where the capture fails or a group's
nodes are not found, that signature (or group) runs the client's original code, with a warning.

Under torch.compile (torch.compile(ModelNew(...)), or of a model passed through optimize()) the
forward is traced by dynamo as one graph per input signature: the capture of the signature is looked
up in code dynamo traces (resolved while tracing, and guarded: a new signature recompiles), the
rewritten graph is traced through, each group's op is a node of the compiled graph (its shape guard,
too, is decided while tracing) and inductor compiles what lies around the ops. Nothing is counted or
looked up in Python per call. Only a signature not captured yet, on the first call under compile,
breaks the graph once (torch.export runs outside the trace); the next call recompiles without it.
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
# The captures of each model, kept outside the model (torch.export restores the attributes of the
# module it traces) and keyed by id(model), each model's entries dropped when it is collected:
# {id(model): {input signature: Accelerated, or None where the capture failed}}, the eager lookup.
_captures = {}
# The same captures as a chain of _Link per model, {id(model): first link}, to which a capture only
# appends: the lookup under torch.compile (_traced_lookup), which dynamo traces through and guards (the
# links it read up to the signature's, or the last link's `next` being None where the signature is
# not there yet, so that its capture recompiles only the callers that missed it).
_chains = {}
_MISSING = object()  # a signature not captured yet
_EMPTY = {}
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
# path (the shape guard). `nova check-package` reads them to show that the kernels ran (in eager mode
# only). Calls under torch.compile are not counted: the choice is made once, while dynamo traces, and
# the compiled graph runs the op (or the original nodes) with no Python around it.
CALLS = {}


def _guard(specs):
    """The shape guard for one op, made once: whether the op's kernels can take these inputs
    (contiguous tensors on the kernels' device, of exactly the shapes and dtypes they were built for).
    Written as code with the shapes and dtypes in it: one test per input, no loop, and under
    torch.compile nothing for dynamo to guard on but the code itself (and _ops.COMPILED, KERNEL_DEVICE)."""
    if any(s["dtype"] not in _ops.DTYPES for s in specs):
        return lambda inputs: False
    names = [f"t{i}" for i in range(len(specs))]
    tests = " and ".join(
        f"isinstance({n}, torch.Tensor) and {n}.shape == {tuple(int(d) for d in s['shape'])!r} "
        f"and {n}.dtype == torch.{s['dtype']} and {n}.device.type == KERNEL_DEVICE and {n}.is_contiguous()"
        for n, s in zip(names, specs)) or "True"
    unpack = f"    {', '.join(names)}, = inputs\n" if names else ""
    src = (f"def takes(inputs):\n"
           f"    if not _ops.COMPILED or len(inputs) != {len(specs)}:\n"
           f"        return False\n"
           f"{unpack}"
           f"    return bool({tests})\n")
    namespace = {}
    exec(src, globals(), namespace)  # noqa: S102 (the manifest's shapes and dtypes, checked above)
    return namespace["takes"]


def accelerated(inputs, specs):
    """Whether the op's kernels can take these inputs: contiguous CUDA tensors of exactly the shapes
    and dtypes they were built for (the shape guard)."""
    return _guard(specs)(inputs)


def fits(values, specs, relocated=()):
    """The shape guard decided once, at capture, from the values export recorded for the group's inputs
    (node.meta["val"]): whether their shapes, dtypes and device, fixed for the signature, are the ones
    the kernels were built for. True or False, or None where a value was not recorded (the whole guard
    then runs on each call). Their layout is not part of it: see _contiguous_args. `relocated` marks the
    values that are moved to the inputs' device after the capture (0-dim constants the forward makes on
    the CPU): export recorded them where they were made."""
    if not _ops.COMPILED or len(values) != len(specs) or any(s["dtype"] not in _ops.DTYPES for s in specs):
        return False
    if any(not isinstance(v, torch.Tensor) for v in values):
        return None
    relocated = relocated or [False] * len(values)
    return all(tuple(v.shape) == tuple(int(d) for d in s["shape"]) and v.dtype == _ops.DTYPES[s["dtype"]]
               and (v.device.type == KERNEL_DEVICE or m) for v, s, m in zip(values, specs, relocated))


def _contiguous_args(specs):
    """The op's arguments where the capture decided the guard: each input made contiguous, which is
    the input itself where it already is (the common case) and a copy where the model hands the group
    a strided view (a transposed key in attention, a parameter the client stored transposed): the
    kernels index their inputs as contiguous. Scalars are always contiguous."""
    names = [f"t{i}" for i in range(len(specs))]
    args = [f"{n}.contiguous()" if len(s["shape"]) > 0 else n for n, s in zip(names, specs)]
    namespace = {}
    exec(f"def args(inputs):\n    {', '.join(names)}, = inputs\n    return ({', '.join(args)},)\n",  # noqa: S102
         {}, namespace)
    return namespace["args"]


def group_call(group, original, fit=None):
    """The callable that stands for a group in the captured graph: its op where the shape guard lets
    it, else `original` (the group's nodes from the same capture). `fit` is the guard as the capture
    decided it (see fits): False runs `original` on every call, True runs the op on contiguous inputs
    (see _contiguous_args), None checks the whole guard on each call. With autograd off the call is
    the op's twin without an autograd formula (see _ops), also in a graph torch.compile makes."""
    op, infer = _ops.op(group["op"]), _ops.infer_op(group["op"])
    # The ops' C++ entries, without OpOverload's Python __call__ (for the eager call).
    run_op, run_infer = getattr(op, "_op", op), getattr(infer, "_op", infer)
    grad_enabled = torch.is_grad_enabled
    takes = _guard(group["input_specs"]) if fit is None else None
    args = _contiguous_args(group["input_specs"]) if fit else None
    as_list = _ops.as_list
    is_compiling = torch.compiler.is_compiling

    counts = CALLS.setdefault(group["op"], {"kernel": 0, "fallback": 0})

    def fallback(*inputs):
        if not is_compiling():
            counts["fallback"] += 1
        return as_list(original(*inputs))

    def call(*inputs):
        if takes is not None:
            if not takes(inputs):
                return fallback(*inputs)
        else:
            inputs = args(inputs)
        # With autograd on, the op with its formula; off, its twin without one (see _ops).
        if is_compiling():
            return op(*inputs) if grad_enabled() else infer(*inputs)
        counts["kernel"] += 1
        return run_op(*inputs) if grad_enabled() else run_infer(*inputs)

    chosen = fallback if fit is False else call
    chosen.__name__ = f"{MANIFEST['package']}_{group['op']}"
    return chosen


def _graph_inputs(ep):
    """(input spec, placeholder node) for each of ep's graph inputs, in order."""
    placeholders = [n for n in ep.graph.nodes if n.op == "placeholder"]
    return list(zip(ep.graph_signature.input_specs, placeholders))


def _value_nodes(ep):
    """Value name as intake named it -> the fx node holding it (parameters as p_<path>, buffers as
    b_<path>, lifted constants as c_<path>; getitem nodes for multi-output ops)."""
    kinds = torch.export.graph_signature.InputKind
    values = {}
    for spec, node in _graph_inputs(ep):
        if spec.kind == kinds.USER_INPUT:
            values[node.name] = node
            continue
        prefix = {kinds.PARAMETER: "p_", kinds.BUFFER: "b_"}.get(spec.kind, "c_")
        values[prefix + re.sub(r"\W", "_", _strip_inner(spec.target))] = node
    for node in ep.graph.nodes:
        if node.op == "call_function":
            values[node.name] = node
    return values


def replace_groups(ep, moved=frozenset()):
    """Replaces each shipped group's nodes in ep's graph by one call; returns {id: the guard as the
    capture decided it (see fits)} of the groups replaced. `moved`: the constants (by name) that
    were moved to the inputs' device after the capture."""
    graph = ep.graph_module.graph
    relocated = {n for spec, n in _graph_inputs(ep) if spec.target in moved}
    calls = [n for n in graph.nodes if n.op == "call_function" and n.target is not operator.getitem]
    order = {n: i for i, n in enumerate(graph.nodes)}
    values = _value_nodes(ep)
    replaced = {}
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
        fit = fits([n.meta.get("val") for n in ins], group["input_specs"], [n in relocated for n in ins])
        with graph.inserting_before(first_use):
            call = graph.call_function(group_call(group, original, fit), tuple(ins))
            taken = [graph.call_function(operator.getitem, (call, k)) for k in range(len(outs))]
        for name, o, t in zip(group["outputs"], outs, taken):
            if "val" in o.meta:  # what the call returns, for a later group's guard (see fits)
                t.meta["val"] = o.meta["val"]
            o.replace_all_uses_with(t, delete_user_cb=lambda user: user not in members)
            values[name] = t  # a later group reads the output from the call now
        for n in reversed(list(graph.nodes)):
            if n in members:
                graph.erase_node(n)
        order = {n: i for i, n in enumerate(graph.nodes)}
        replaced[group["id"]] = fit
    graph.lint()
    ep.graph_module.recompile()
    return replaced


def _owner(model, path):
    """(module, attribute name) of a parameter or buffer path such as "block.fc.weight"; the module is
    None for the model's own attributes (the model is passed to each call: a capture holding it would
    keep every model with a parameter of its own alive for good)."""
    module_path, _, name = path.rpartition(".")
    return (model.get_submodule(module_path) if module_path else None), name


def _path_expr(path):
    """Code reading a parameter or buffer of `model` by its path ("block.0.weight"): nested getattr,
    since a module's name need not be an identifier."""
    expr = "model"
    for part in path.split("."):
        expr = f"getattr({expr}, {part!r})"
    return expr


def _direct_expr(path, table):
    """The same read without nn.Module's __getattr__: the submodules' and the owner's dicts
    (`table` is "_parameters" or "_buffers"), as nn.Module keeps them; for the eager call."""
    *modules, name = path.split(".")
    expr = "model"
    for part in modules:
        expr = f"{expr}._modules[{part!r}]"
    return f"{expr}.{table}[{name!r}]"


class Accelerated:
    """One captured signature of a model: the rewritten graph and how to call it. What each of the
    graph's inputs is read from and where each output goes are worked out once, here, as code, so a
    call does no more than gather the tensors, run the graph and hand the outputs back."""

    def __init__(self, model, forward, inputs):
        self.ep = export_program(model, forward, inputs)
        # Tensors the forward makes itself (torch.tensor(0.5)) are lifted as constants on the device
        # they were made on, often the CPU; a group's kernels take them on the inputs' device, so they
        # are moved there once (eager mixes a CPU scalar tensor with CUDA tensors the same way).
        device = next((v.device for v in inputs if isinstance(v, torch.Tensor)), None)
        moved = set()
        for name, value in list(self.ep.constants.items()):
            if isinstance(value, torch.Tensor) and device is not None and value.device != device and value.dim() == 0:
                self.ep.constants[name] = value.to(device)
                moved.add(name)
        self.replaced = replace_groups(self.ep, moved)
        self.out_spec = self.ep.call_spec.out_spec
        kinds = torch.export.graph_signature.InputKind
        okinds = torch.export.graph_signature.OutputKind
        # Where each of the forward's tensors is among its inputs (the signature fixes the positions).
        positions = [i for i, v in enumerate(inputs) if isinstance(v, torch.Tensor)]
        # Each graph input as an expression: a tensor input, a parameter or buffer read from the model
        # by its path (for the traced call; the eager call reads nn.Module's dicts directly), or one of
        # the constants export lifted (incl. non-persistent buffers).
        traced, direct, consts = [], [], []
        user = 0
        for spec in self.ep.graph_signature.input_specs:
            if spec.kind == kinds.USER_INPUT:
                traced.append(f"inputs[{positions[user]}]")
                direct.append(traced[-1])
                user += 1
            elif spec.kind in (kinds.PARAMETER, kinds.BUFFER) and spec.target not in self.ep.constants:
                path = _strip_inner(spec.target)
                traced.append(_path_expr(path))
                owner, name = _owner(model, path)
                table = "_parameters" if spec.kind == kinds.PARAMETER else "_buffers"
                registered = name in getattr(owner if owner is not None else model, table)
                direct.append(_direct_expr(path, table) if registered else traced[-1])
            else:
                traced.append(f"consts[{len(consts)}]")
                direct.append(traced[-1])
                consts.append(self.ep.constants[spec.target])
        self.consts = tuple(consts)
        user_names = [s.arg.name for s in self.ep.graph_signature.input_specs if s.kind == kinds.USER_INPUT]
        # Each graph output: whether it is a mutation to write back (into the tensor `targets` names) or
        # the forward's own output.
        self.writes = []
        targets = []
        for spec in self.ep.graph_signature.output_specs:
            if spec.kind == okinds.BUFFER_MUTATION:
                targets.append(_path_expr(_strip_inner(spec.target)))
            elif spec.kind == okinds.USER_INPUT_MUTATION:
                targets.append(f"inputs[{positions[user_names.index(spec.target)]}]")
            self.writes.append(spec.kind in (okinds.BUFFER_MUTATION, okinds.USER_INPUT_MUTATION))
        self.mutates = any(self.writes)
        # The forward returns one tensor and mutates nothing: the graph's only output is the result.
        self.single = not self.mutates and self.out_spec.is_leaf() and len(self.writes) == 1
        # The graph's generated forward itself, without nn.Module's call machinery (no hooks here).
        self.run = self.ep.graph_module.forward
        # The graph's inputs and the tensors that take the mutations, as code. Under torch.compile the
        # parameters and buffers are named by their paths from the model: dynamo then guards on the
        # model's tensors as it does for the original forward, and on nothing of this object's lists.
        namespace = {}
        exec(f"def gather(model, inputs, consts):\n    return [{', '.join(traced)}]\n"  # noqa: S102
             f"def direct(model, inputs, consts):\n    return [{', '.join(direct)}]\n"
             f"def targets(model, inputs):\n    return [{', '.join(targets)}]\n", {}, namespace)
        self.gather, self.direct, self.targets = namespace["gather"], namespace["direct"], namespace["targets"]

    def __call__(self, model, inputs):
        flat = self.direct(model, inputs, self.consts)
        if torch.is_grad_enabled():
            outs = self.run(*flat)
        else:
            # Autograd is off: below the autograd layer, as torch's own formula layer calls an op
            # (views and version counters are still kept), so no op of the graph passes through it
            # only to hand the call on.
            with _below_autograd():
                outs = self.run(*flat)
        if self.single:
            return outs[0]
        return self._outputs(model, inputs, outs)

    def traced(self, model, inputs):
        """The call under torch.compile, which dynamo traces into the caller's graph: the same as
        __call__, with the graph's inputs gathered by `gather`."""
        return self._outputs(model, inputs, self.run(*self.gather(model, inputs, self.consts)))

    def _outputs(self, model, inputs, outs):
        """The forward's outputs, after each mutation the graph returned is written back."""
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        if not self.mutates:
            return tree_unflatten(outs, self.out_spec)
        targets = iter(self.targets(model, inputs))
        user = []
        for mutation, value in zip(self.writes, outs):
            if mutation:
                with torch.no_grad():
                    next(targets).copy_(value)
            else:
                user.append(value)
        return tree_unflatten(user, self.out_spec)


_below_autograd = torch._C._AutoDispatchBelowAutograd
_PLAIN_SCALARS = (bool, int, float, str, type(None))


def _signature_key(model, inputs):
    key = [model.training]
    for v in inputs:
        if isinstance(v, torch.Tensor):
            key.append((v.shape, v.dtype, v.device, v.is_contiguous()))
        else:
            key.append(("S", type(v).__name__, v if isinstance(v, _PLAIN_SCALARS) else repr(v)))
    return tuple(key)


class _Link:
    __slots__ = ("signature", "acc", "next")

    def __init__(self, signature, acc):
        self.signature, self.acc, self.next = signature, acc, None


def captures(model):
    """The signatures captured for `model` so far: {signature: Accelerated, or None where the capture
    failed and the calls run the original code}."""
    return dict(_captures.get(id(model), _EMPTY))


def _forget(model_id):
    _captures.pop(model_id, None)
    _chains.pop(model_id, None)


@torch.compiler.disable
def _accelerated_for(model, forward, inputs):
    """The capture of this signature, made on its first call (outside any torch.compile trace)."""
    key = _signature_key(model, inputs)
    with _lock:
        cache = _captures.get(id(model))
        if cache is None:
            cache = _captures[id(model)] = {}
            weakref.finalize(model, _forget, id(model))
        if key not in cache:
            try:
                acc = Accelerated(model, forward, inputs)
            except Exception as exc:  # the client's forward could not be captured: it runs as written
                _warn_once(f"torch.export could not capture the forward for inputs {key[1:]} "
                           f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
                           "those calls run the original PyTorch code")
                acc = None
            cache[key] = acc
            link = _chains.get(id(model))
            if link is None:
                _chains[id(model)] = _Link(key, acc)
            else:
                while link.next is not None:
                    link = link.next
                link.next = _Link(key, acc)
        return cache[key]


def _traced_lookup(model, inputs):
    """The capture of this signature under torch.compile: dynamo traces this and folds it to a constant
    (the Accelerated, None or _MISSING), guarded on the signature and on the links it read."""
    key = _signature_key(model, inputs)
    link = _chains.get(id(model))
    while link is not None:
        if link.signature == key:
            return link.acc
        link = link.next
    return _MISSING


def accelerated_forward(original_forward):
    """A forward with original_forward's signature that runs the rewritten graph of its signature."""
    signature = inspect.signature(original_forward)
    params = list(signature.parameters.values())[1:]
    fn_default = signature.parameters["fn"].default if "fn" in signature.parameters else None
    plain = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    # The common call, every input given by position and fn (last) left out: no binding needed.
    fn_last = bool(params) and params[-1].name == "fn"
    positional = len(params) - (1 if fn_last else 0)
    fast = plain and "fn" not in [p.name for p in params[:positional]]
    # A constant, so that torch.compile guards on one closure cell here, not on the whole manifest.
    accelerate = plain and bool(_ops.SHIPPED)
    is_compiling = torch.compiler.is_compiling

    @functools.wraps(original_forward)
    def forward(self, *args, **kwargs):
        if not accelerate:
            return original_forward(self, *args, **kwargs)
        if fast and not kwargs and len(args) == positional:
            inputs = args
        else:
            bound = signature.bind(self, *args, **kwargs)
            bound.apply_defaults()
            if "fn" in bound.arguments and bound.arguments["fn"] is not fn_default:
                return original_forward(self, *args, **kwargs)  # another fn: the client's own code
            inputs = [v for name, v in list(bound.arguments.items())[1:] if name != "fn"]
        if is_compiling():  # traced: one graph with the ops, no lookup left at run time
            acc = _traced_lookup(self, inputs)
            if acc is _MISSING:  # a new signature: the one graph break, its capture
                acc = _accelerated_for(self, original_forward, inputs)
            if acc is None:
                return original_forward(self, *args, **kwargs)
            return acc.traced(self, inputs)
        acc = _captures.get(id(self), _EMPTY).get(_signature_key(self, inputs), _MISSING)
        if acc is _MISSING:  # a new signature: its capture
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


def _forward_params(cls):
    return [(p.name, p.kind) for p in inspect.signature(cls.forward).parameters.values()]


def _is_the_clients_model(model):
    """Whether model is an instance of the client's Model: the package's copy of the class, or the
    client's own (from their module, not the package's copy): a class of that name in its MRO whose
    forward takes the same parameters."""
    if isinstance(model, Model):
        return True
    want = _forward_params(Model)
    return any(cls.__name__ == Model.__name__ and "forward" in vars(cls) and _forward_params(cls) == want
               for cls in type(model).__mro__)


def optimize(model):
    """Accelerates an existing instance of the client's Model in place (and returns it): its class
    becomes an accelerated subclass; parameters, buffers and state_dict are unchanged."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError("optimize() takes an instance of the model's Model (a torch.nn.Module)")
    if not _is_the_clients_model(model):
        params = ", ".join(name for name, _ in _forward_params(Model))
        raise TypeError(f"optimize() takes an instance of {Model.__name__} (forward({params})), the model the "
                        f"package was made for; this is a {type(model).__name__}")
    check_state_dict(model)
    model.__class__ = accelerated_class(type(model))
    return model


ModelNew = accelerated_class(Model)
ModelNew.__name__ = ModelNew.__qualname__ = "ModelNew"
