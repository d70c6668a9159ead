"""Fusion groups: partitions the captured nodes into pieces one kernel could replace, and writes
each group as standalone PyTorch (module_fn + get_inputs) with the original ATen semantics."""

import contextlib

import torch

ANCHOR_KIND = {"convolution": "conv+epilogue", "matmul": "gemm+epilogue", "reduction": "reduction",
               "normalization": "norm"}
# Data movement that may ride along inside a group without breaking its chain.
MOVABLE = "data_movement"


class Group:
    def __init__(self, gid):
        self.id = gid
        self.anchor = None      # index into the node list
        self.members = []       # node indices, execution order
        self.inputs = []
        self.outputs = []
        self.source = ""

    @property
    def kind(self):
        return self._kind

    def to_json(self, nodes, ids):
        return {"id": self.id, "kind": self._kind,
                "anchor": ids[self.anchor] if self.anchor is not None else None,
                "nodes": [ids[m] for m in self.members], "inputs": self.inputs,
                "outputs": self.outputs, "flops": self.flops, "bytes": self.bytes,
                "functional_source": self.source}


# Reductions over a GEMM's rows that the builtin generator fuses into the GEMM's kernel
# (core/gen/gemm_row_reduce_rule.h): the product then never goes to memory.
ROW_REDUCTIONS = {"aten.logsumexp.default", "aten.sum.dim_IntList", "aten.mean.dim", "aten.amax.default",
                  "aten.amin.default"}


def gemm_row_reduction_fits(meta_of):
    """A predicate for partition(): fits(nodes, i, anchor) is true when reduction node i reduces the
    last dimension of GEMM node `anchor`'s fp32 product, and the product is in whole 64x64 tiles
    with K in steps of 32 (the fused kernel's tiles). meta_of(name) gives a tensor's TensorMeta."""
    def fits(nodes, i, anchor):
        n, g = nodes[i], nodes[anchor]
        if str(n.op) not in ROW_REDUCTIONS or not n.args or not g.outputs:
            return False
        product = g.outputs[0]
        if product.dtype != "float32" or len(product.shape) < 2:
            return False
        dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
        dims = [dim] if isinstance(dim, int) else list(dim or [])
        rank = len(product.shape)
        if [d % rank for d in dims] != [rank - 1]:
            return False
        k = [meta_of(x) for x in g.input_names()]
        k = k[0].shape[-1] if k and k[0] is not None and k[0].shape else 0
        return product.shape[-1] % 64 == 0 and product.shape[-2] % 64 == 0 and k and k % 32 == 0
    return fits


def partition(nodes, classes, graph_outputs, row_reduction_fits=None):
    """nodes: IRNodes in topological order; classes: their op classes. Returns Groups.

    row_reduction_fits(nodes, i, anchor): where given and true, reduction node i joins the group of
    GEMM node `anchor` whose product it reduces (see gemm_row_reduction_fits), provided nothing
    else reads any value of that group and the GEMM's operands are not computed inside it."""
    producer = {}
    for i, n in enumerate(nodes):
        for name in n.out_names:
            if name:
                producer[name] = i
    # Each node's inputs, flattened once (flattening per query made wide graphs quadratic in pytree work).
    input_names = [n.input_names() for n in nodes]
    node_producers = [[producer[x] for x in names if x in producer] for names in input_names]
    consumers = {}
    for i, prods in enumerate(node_producers):
        for p in prods:
            consumers.setdefault(p, set()).add(i)
    group_of = {}
    groups = []
    pending = set()  # data movement on graph inputs / constants, waiting for a consumer's group

    def producers(i):
        return node_producers[i]

    def depends_on(g_from, g_to):
        """True if group g_from (transitively) reads from group g_to."""
        stack, seen = [g_from], set()
        while stack:
            g = stack.pop()
            if g in seen:
                continue
            seen.add(g)
            for m in groups[g].members:
                for p in producers(m):
                    pg = group_of.get(p)
                    if pg is None or pg == g:
                        continue
                    if pg == g_to:
                        return True
                    stack.append(pg)
        return False

    def can_join(i, g):
        for p in producers(i):
            pg = group_of.get(p)
            if pg is not None and pg != g and depends_on(pg, g):
                return False
        return True

    def add(i, g):
        groups[g].members.append(i)
        group_of[i] = g
        for p in producers(i):  # pull in pending data movement this node reads
            if p in pending:
                pending.discard(p)
                add_before(p, g)

    def add_before(p, g):
        for q in producers(p):
            if q in pending:
                pending.discard(q)
                add_before(q, g)
        groups[g].members.append(p)
        group_of[p] = g

    def new_group(i):
        groups.append(Group(len(groups)))
        g = len(groups) - 1
        if classes[i] in ANCHOR_KIND:
            groups[g].anchor = i
        add(i, g)
        return g

    def gemm_rows(i, prod_groups):
        """The GEMM group reduction node i can join (see the docstring), or None."""
        if row_reduction_fits is None or classes[i] != "reduction" or len(prod_groups) != 1:
            return None
        g = prod_groups[0]
        grp = groups[g]
        if grp.anchor is None or classes[grp.anchor] != "matmul":
            return None
        for m in grp.members:
            if classes[m] == "reduction" or (m < grp.anchor and classes[m] != MOVABLE):
                return None  # one reduction per group; operands read in place (views only before the GEMM)
            if any(name in graph_outputs for name in nodes[m].out_names if name):
                return None
            if any(c != i and group_of.get(c) != g for c in consumers.get(m, ())):
                return None  # the product (or a value from it) is read elsewhere: it must be stored
        if not can_join(i, g) or not row_reduction_fits(nodes, i, grp.anchor):
            return None
        return g

    for i, cls in enumerate(classes):
        prod_groups = []
        for p in producers(i):
            g = group_of.get(p)
            if g is not None and g not in prod_groups:
                prod_groups.append(g)
        rows_of = gemm_rows(i, prod_groups)
        if rows_of is not None:
            add(i, rows_of)
        elif cls in ANCHOR_KIND:
            # An elementwise prologue feeding only this anchor becomes part of its group.
            target = None
            for g in prod_groups:
                grp = groups[g]
                if grp.anchor is None and all(c == i or group_of.get(c) == g for m in grp.members
                                              for c in consumers.get(m, ())) and can_join(i, g) \
                        and not any(nodes[m].out_names[0] in graph_outputs for m in grp.members):
                    target = g
            if target is not None:
                groups[target].anchor = i
                add(i, target)
            else:
                new_group(i)
        elif cls in ("elementwise", MOVABLE) and producers(i) and all(p in pending for p in producers(i)) \
                and all(x in producer for x in input_names[i]):
            pending.add(i)  # computes a constant (e.g. a causal mask): goes with its consumer
        elif cls in ("elementwise", MOVABLE):
            joinable = [g for g in prod_groups if can_join(i, g)]
            if joinable:  # prefer extending an anchored group (an epilogue), then the latest
                add(i, max(joinable, key=lambda g: (groups[g].anchor is not None, g)))
            elif cls == MOVABLE:
                pending.add(i)
            else:
                new_group(i)
        else:
            new_group(i)
    for i in sorted(pending):  # data movement nobody in a group consumed
        new_group(i)
    for grp in groups:
        grp.members.sort()
        if grp.anchor is not None:
            grp._kind = ANCHOR_KIND[classes[grp.anchor]]
        elif all(classes[m] == "elementwise" or classes[m] == MOVABLE for m in grp.members) and \
                any(classes[m] == "elementwise" for m in grp.members):
            grp._kind = "elementwise"
        elif all(classes[m] == MOVABLE for m in grp.members):
            grp._kind = "data_movement"
        else:
            grp._kind = "other"
    # Boundaries: values read from outside (call order) and values used outside.
    for grp in groups:
        inside = {name for m in grp.members for name in nodes[m].out_names if name}
        for m in grp.members:
            for name in input_names[m]:
                if name not in inside and name not in grp.inputs:
                    grp.inputs.append(name)
        for m in grp.members:
            for name in nodes[m].out_names:
                if not name:
                    continue
                used_outside = name in graph_outputs or any(
                    group_of.get(c) != grp.id and name in input_names[c]
                    for c in consumers.get(m, ()))
                if used_outside:
                    grp.outputs.append(name)
        if not grp.outputs:  # a group whose results nobody reads still yields its last value
            grp.outputs.append(next(n for n in nodes[grp.members[-1]].out_names if n))
    return groups


def py_expr(v, device=None):
    """v as Python source. `device`: the source that stands for a torch.device value (the group's
    tensors' device at run time), so a constant the model made on the capture device (CPU, when
    intake ran without a GPU) follows the inputs to the GPU instead of staying on the CPU."""
    from .capture import Ref
    if isinstance(v, Ref):
        return v.name
    if isinstance(v, float):
        if v != v:
            return "float('nan')"
        if abs(v) == float("inf"):
            return "float('inf')" if v > 0 else "float('-inf')"
        return repr(v)
    if isinstance(v, (list, tuple)):
        inner = ", ".join(py_expr(x, device) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' if len(v) == 1 else ''})"
    if isinstance(v, torch.dtype):
        return str(v)
    if isinstance(v, torch.device):
        return device or f"torch.device({str(v)!r})"
    if isinstance(v, (torch.layout, torch.memory_format)):
        return str(v)
    return repr(v)


def random_tensor_expr(meta):
    shape = "(" + "".join(f"{s}, " for s in meta.shape) + ")"
    dt = meta.torch_dtype
    if dt == torch.bool:
        return f"torch.rand({shape}) < 0.5"
    if dt.is_floating_point or dt.is_complex:
        return f"torch.randn({shape}, dtype={dt})"
    return f"torch.randint(0, 8, {shape}, dtype={dt})"


def functional_source(grp, nodes, meta_of, model_name):
    lines = [f'"""Fusion group {grp.id} ({grp._kind}) of {model_name}: ATen ops as captured."""',
             "import torch", "", "",
             f"def module_fn({', '.join(grp.inputs)}):"]
    device = f"{grp.inputs[0]}.device" if grp.inputs else None  # every group input is a tensor
    for m in grp.members:
        n = nodes[m]
        call_args = [py_expr(a, device) for a in n.args] + [f"{k}={py_expr(v, device)}" for k, v in n.kwargs.items()]
        call = f"torch.ops.{n.op}({', '.join(call_args)})"
        returns_list = len(n.op._schema.returns) == 1 and len(n.out_names) > 1
        if len(n.out_names) == 1 and not returns_list:
            lhs = n.out_names[0] or "_"
        else:
            lhs = ", ".join(x or "_" for x in n.out_names) + ("," if len(n.out_names) == 1 else "")
        lines.append(f"    {lhs} = {call}")
    outs = ", ".join(grp.outputs)
    lines.append(f"    return {outs}" if len(grp.outputs) == 1 else f"    return ({outs})")
    lines += ["", "", "def get_inputs():", "    return ["]
    for name in grp.inputs:
        lines.append(f"        {random_tensor_expr(meta_of(name))},  # {name}")
    lines += ["    ]", ""]
    return "\n".join(lines)


def _device_follow_error(module_fn, inputs):
    """The group validates on the GPU from a graph captured anywhere (often the CPU): it must compute
    on the device its inputs are on. Run on meta tensors, a constant left on the capture device
    shows as a device mismatch, or as an output off the meta device. Ops with no meta kernel pass."""
    try:
        got = module_fn(*[t.to("meta") if isinstance(t, torch.Tensor) else t for t in inputs])
    except Exception as exc:  # noqa: BLE001 (only a device mismatch is this check's business)
        text = str(exc)
        return f"does not follow its inputs' device: {text}" if "device" in text else ""
    got = got if isinstance(got, tuple) else (got,)
    off = [str(g.device) for g in got if isinstance(g, torch.Tensor) and g.device.type != "meta"]
    return f"does not follow its inputs' device: an output is on {off[0]}" if off else ""


def check_group(grp, values):
    """Runs the group's source on the values the captured graph computed and on get_inputs(). Values
    on the meta device (a meta capture: shapes without values) check the outputs' shapes, dtypes and
    devices only: values_compared is then false and max_abs_diff None."""
    result = {"group": grp.id, "ok": False, "max_abs_diff": None, "error": "", "values_compared": False}
    on_meta = any(isinstance(values[n], torch.Tensor) and values[n].is_meta for n in grp.inputs + grp.outputs)
    try:
        namespace = {}
        exec(compile(grp.source, f"<fusion group {grp.id}>", "exec"), namespace)
        with torch.no_grad():
            got = namespace["module_fn"](*[values[n] for n in grp.inputs])
            got = got if isinstance(got, tuple) else (got,)
            diff = 0.0
            for name, g in zip(grp.outputs, got):
                want = values[name]
                if g.shape != want.shape or g.dtype != want.dtype:
                    raise AssertionError(f"{name}: got {tuple(g.shape)} {g.dtype}, "
                                         f"want {tuple(want.shape)} {want.dtype}")
                if on_meta:
                    continue
                if want.is_floating_point():
                    d = (g.float() - want.float()).abs_().nan_to_num_(0.0)
                    diff = max(diff, float(d.max()) if d.numel() else 0.0)
                elif not torch.equal(g, want):
                    diff = float("inf")
            # get_inputs() on the values' device: full-size random inputs cost nothing on meta and
            # little on a GPU.
            devices = [values[n].device for n in grp.inputs if isinstance(values[n], torch.Tensor)]
            with torch.device(devices[0]) if devices else contextlib.nullcontext():
                namespace["module_fn"](*namespace["get_inputs"]())
            device_error = _device_follow_error(namespace["module_fn"], [values[n] for n in grp.inputs])
            if device_error:
                raise AssertionError(device_error)
        if on_meta:
            result["ok"] = True
            return result
        result["values_compared"] = True
        result["max_abs_diff"] = diff
        result["ok"] = diff <= 1e-4
        if not result["ok"]:
            result["error"] = f"outputs differ from the captured graph by {diff:g}"
    except Exception as exc:
        result["error"] = f"{type(exc).__name__}: {exc}"
    return result
