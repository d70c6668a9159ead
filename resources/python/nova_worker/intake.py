"""The `intake` command: model file -> ModelGraph JSON (the layout of core/graph/model_graph.h),
with fusion groups, cost estimates, and the example inputs and parameters saved as safetensors.

args: {"model": path, "save_inputs": path or "", "check_groups": bool}. The model stays a path (the
graph records the user's own file and lines); see docs/WORKER_PROTOCOL.md."""

import os
import time
import sys

from . import schemas
from .protocol import WorkerFailure, require


def _first_line(exc):
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def output_problem(output):
    """Why forward's return value gives nothing to optimize, or None when it holds a tensor."""
    import torch
    from torch.utils._pytree import tree_leaves

    if output is None:
        return "returned None"
    if not any(isinstance(leaf, torch.Tensor) for leaf in tree_leaves(output)):
        return f"returned no tensor (a {type(output).__name__})"
    return None


def run_intake(args, progress) -> schemas.IntakeResult:
    import torch

    from . import capture, costs, fusion, loader, meta_capture

    started = time.monotonic()
    model_path = os.path.abspath(require(args, "model", str))
    module, model, inputs, form = loader.load(model_path, progress)
    forward_names = loader.forward_param_names(model)
    base = os.path.basename(model_path)

    progress("capturing the graph on the meta device (shapes, no values)", 0.25)
    try:
        meta_model, meta_inputs = meta_capture.meta_twin(model, inputs)
        cap, warnings = _capture(meta_model, meta_inputs, forward_names, model_path, module, progress,
                                 dispatch_trace=False)
        meta_capture.restore_device(cap, model, inputs)
        on_meta = True
    except Exception as exc:  # noqa: BLE001 (any failure on meta: the full-size route decides, with its own errors)
        reason = exc.message if isinstance(exc, WorkerFailure) else f"{type(exc).__name__}: {_first_line(exc)}"
        print(f"nova_worker: intake on the meta device failed: {reason}", file=sys.stderr)
        progress("the meta device could not follow the model; running it at full size on the CPU", 0.3)
        cap, warnings = _capture(model, inputs, forward_names, model_path, module, progress)
        warnings.append(f"captured with a full-size run on the CPU: the meta device (shapes without values) "
                        f"could not follow the model ({reason[:300]})")
        on_meta = False

    progress("estimating costs and forming fusion groups", 0.7)
    classes = [costs.op_class(n.op) for n in cap.nodes]
    ids = {i: i for i in range(len(cap.nodes))}
    nodes_json = []
    for i, (n, cls) in enumerate(zip(cap.nodes, classes)):
        in_metas = [cap.meta(x) for x in n.input_names()]
        in_metas = [m for m in in_metas if m is not None]
        node_args = []
        schema_args = n.op._schema.arguments
        for k, value in enumerate(n.args):
            node_args.append(_arg_json(schema_args[k].name if k < len(schema_args) else f"arg{k}", value))
        for key, value in n.kwargs.items():
            node_args.append(_arg_json(key, value))
        nodes_json.append({
            "id": i, "target": str(n.op), "op": costs.readable_op(n.op, len(n.args)), "op_class": cls,
            "args": node_args, "outputs": [m.to_json() for m in n.outputs],
            "scope": n.scope, "scope_type": n.scope_type, "file": n.file, "line": n.line,
            "source_text": n.source_text,
            "flops": costs.flops(n.op, cls, in_metas, n.outputs),
            "bytes": costs.bytes_moved(n.op, cls, in_metas, n.outputs)})

    groups = fusion.partition(cap.nodes, classes, set(cap.outputs),
                              row_reduction_fits=fusion.gemm_row_reduction_fits(cap.meta))
    for g in groups:
        g.flops = sum(nodes_json[m]["flops"] for m in g.members)
        g.bytes = float(sum(costs.nbytes(cap.meta(x)) for x in g.inputs + g.outputs))
        g.source = fusion.functional_source(g, cap.nodes, cap.meta, base)
    checks = []
    if args.get("check_groups", True):
        values = cap.values
        device = meta_capture.value_device() if on_meta and cap.graph_module is not None else None
        if device is not None:
            progress(f"computing the graph's values on {device} for the groups' check", 0.75)
            try:
                values = meta_capture.values_on(device, cap, model, inputs)
            except Exception as exc:  # noqa: BLE001 (the check falls back to shapes and dtypes)
                warnings.append(f"the fusion groups' check compared shapes and dtypes only: computing the "
                                f"graph's values on {device} failed ({type(exc).__name__}: {_first_line(exc)[:200]})")
        progress("checking each group's functional source against the captured graph", 0.8)
        for g in groups:
            checks.append(fusion.check_group(g, values))
            if not checks[-1]["ok"]:
                warnings.append(f"fusion group {g.id} ({g.kind}): functional source check failed: "
                                f"{checks[-1]['error']}")

    saved = args.get("save_inputs") or ""
    if saved:
        progress("saving example inputs and parameters", 0.9)
        _save(saved, cap, meta_capture.real_values(cap, model, inputs) if on_meta else cap.values)

    return {
        "format": "nova.model_graph", "version": 1,
        "model_path": model_path, "model_form": form, "capture_route": cap.route,
        "warnings": warnings,
        "inputs": [m.to_json() for m in cap.inputs],
        "scalar_inputs": capture.scalar_inputs(inputs, forward_names),
        "outputs": [cap.meta(o).to_json() for o in cap.outputs],
        "params": [{"name": p, "graph_input": gname, "tensor": meta.to_json(), "is_buffer": buf}
                   for p, gname, meta, buf in cap.params]
                  # Constant tensors the graph reads (e.g. torch.tensor(0.5) lifted by export) count as
                  # buffers: generators and validation receive them like parameters.
                  + [{"name": m.name, "graph_input": m.name, "tensor": m.to_json(), "is_buffer": True}
                     for m in cap.constants],
        "nodes": nodes_json,
        "groups": [g.to_json(cap.nodes, ids) for g in groups],
        "saved_inputs": saved,
        "torch_version": torch.__version__,
        # Extras beyond the ModelGraph layout: for the log and the tests.
        "group_checks": checks,
        "elapsed_s": time.monotonic() - started,
    }


def _arg_json(name, value):
    from .capture import Ref, json_value
    if isinstance(value, Ref):
        return {"name": name, "tensor": value.name, "constant": None}
    return {"name": name, "tensor": "", "constant": json_value(value)}


# torch dtype -> the name the safetensors binding takes (stored as F32, BF16, ... in the file).
SAFETENSORS_DTYPES = {"float32": "float32", "float16": "float16", "bfloat16": "bfloat16",
                      "float64": "float64", "int64": "int64", "int32": "int32", "int16": "int16",
                      "int8": "int8", "uint8": "uint8", "bool": "bool"}


def _capture(model, inputs, forward_names, model_path, module, progress, dispatch_trace=True):
    """(Capture, warnings) of one forward of model(*inputs): an eager run records source lines and
    value-dependent branches, then torch.export, or the eager dispatch trace where export fails.
    dispatch_trace=False: export's failure is raised instead (on meta, a dispatch trace may record other
    ATen ops than on the CPU, e.g. attention's CPU kernel; the full-size route decides)."""
    import torch

    from . import capture, loader

    base = os.path.basename(model_path)
    lines = capture.FunctionLineRecorder(model_path)
    try:
        with torch.no_grad(), lines:
            output = model(*inputs)
    except Exception as exc:
        file, line = loader.deepest_user_frame(exc, model_path)
        raise WorkerFailure("user_error", f"Model.forward raised {type(exc).__name__}: {_first_line(exc)}"
                            + (f" ({base}:{line})" if line else ""),
                            loader.user_traceback(exc, model_path), file, line) from None
    if problem := output_problem(output):
        raise WorkerFailure("user_error", f"Model.forward {problem}: Nova optimizes what forward returns, "
                            f"so it must return a tensor (or a tuple, list or dict of tensors)")

    progress("capturing the graph with torch.export", 0.4)
    warnings = []
    try:
        cap = capture.capture_export(model, inputs, forward_names, model_path, module.__name__, lines)
    except Exception as exc:
        print(f"nova_worker: torch.export failed: {type(exc).__name__}: {_first_line(exc)}", file=sys.stderr)
        if not dispatch_trace:
            raise
        progress("torch.export failed; recording the path the example inputs take", 0.5)
        cap = capture.capture_dispatch(model, inputs, forward_names, model_path, module.__name__)
        for line, text in lines.branches:
            warnings.append(f"value-dependent control flow at {base}:{line} (`{text}`): captured the "
                            f"path taken with the example inputs; other inputs may take another path")
        warnings.append(f"torch.export could not capture the model ({type(exc).__name__}: "
                        f"{_first_line(exc)[:200]}); used the eager dispatch trace instead")
    return cap, warnings + cap.warnings


def _save(path, cap, values):
    """Example inputs and parameters as safetensors. values: name -> real tensor."""
    tensors = {}
    for m in cap.inputs:
        tensors[f"input.{m.name}"] = values[m.name]
    for pname, gname, _, is_buffer in cap.params:
        tensors[("buffer." if is_buffer else "param.") + pname] = values[gname]
    save_safetensors(path, tensors, {"format": "nova.example_inputs"})


def save_safetensors(path, tensors, metadata, binding=None):
    """Writes {name: tensor} through the safetensors binding's raw serialize_file (safetensors.torch
    would need the `packaging` module, and numpy has no bfloat16). Two forms of the binding exist:
    up to 0.7 it takes {name: {"dtype", "shape", "data": bytes}}; from 0.8 {name: TensorSpec(dtype=,
    shape=, data_ptr=, data_len=)}, pointing at memory the caller keeps alive. `binding`: the
    safetensors module (a stand-in in tests)."""
    import torch
    if binding is None:
        import safetensors as binding
    spec_form = hasattr(binding, "TensorSpec")
    entries, keep_alive = {}, []
    for key, t in tensors.items():
        t = t.detach().contiguous().cpu()
        dtype = str(t.dtype).replace("torch.", "")
        if dtype not in SAFETENSORS_DTYPES:
            raise WorkerFailure("user_error", f"cannot save {key}: dtype {dtype} is not supported")
        raw = t.reshape(-1).view(torch.uint8) if t.numel() else torch.zeros(1, dtype=torch.uint8)
        size = t.numel() * t.element_size()
        if spec_form:
            keep_alive.append(raw)
            entries[key] = binding.TensorSpec(dtype=SAFETENSORS_DTYPES[dtype], shape=list(t.shape),
                                              data_ptr=raw.data_ptr(), data_len=size)
        else:
            entries[key] = {"dtype": SAFETENSORS_DTYPES[dtype], "shape": list(t.shape),
                            "data": raw.numpy().tobytes()[:size]}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    binding.serialize_file(entries, path, metadata=metadata)
    del keep_alive  # the binding has written the file: the memory may go
