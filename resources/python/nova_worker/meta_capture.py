"""Intake's graph learned on the meta device: the model and its inputs (built for real by the loader,
seed 0) get twins whose tensors have shapes, strides and dtypes but no storage, so the eager
line-recording run, torch.export and the graph's interpretation cost no arithmetic at any size. Real
values stay with the loader's model and inputs: the saved example inputs come from there, and where a
GPU is, the exported graph runs there on them for the fusion groups' check. A model the meta device
cannot follow (a branch on a tensor's value, .item(), an op with no meta kernel, a tensor the deep
copy misses) makes `meta_twin` or the capture raise, and intake then runs the full-size CPU route."""

import copy
import itertools
import operator

import torch
from torch.utils._pytree import tree_map

from . import capture


def _to_meta(t):
    meta = t.detach().to("meta")
    if isinstance(t, torch.nn.Parameter):
        return torch.nn.Parameter(meta, requires_grad=t.requires_grad)
    return meta.requires_grad_(t.requires_grad)


def meta_twin(model, inputs):
    """(model, inputs) copied onto the meta device: parameters, buffers and tensors kept as plain
    module attributes become meta tensors (nothing of their storage is copied); top-level tensor
    inputs likewise; other inputs are passed as they are."""
    memo = {}
    for module in model.modules():
        for value in list(module._parameters.values()) + list(module._buffers.values()) + list(vars(module).values()):
            if isinstance(value, torch.Tensor) and id(value) not in memo:
                memo[id(value)] = _to_meta(value)
    twin = copy.deepcopy(model, memo)
    return twin, [_to_meta(v) if isinstance(v, torch.Tensor) else v for v in inputs]


def _meta_to(device):
    def swap(v):
        return device if isinstance(v, torch.device) and v.type == "meta" else v
    return swap


def restore_device(cap, model, inputs):
    """A device a forward read (`x.device`) shows in the nodes' arguments as the meta device: it
    becomes the device the loader's real tensors are on, as a full-size capture records it."""
    real = next((t.device for t in itertools.chain((v for v in inputs if isinstance(v, torch.Tensor)),
                                                   model.parameters(), model.buffers())), torch.device("cpu"))
    swap = _meta_to(real)
    for node in cap.nodes:
        node.args = list(tree_map(swap, node.args))
        node.kwargs = dict(tree_map(swap, node.kwargs))


def value_device():
    """Where the values of a meta capture are computed for the fusion groups' check: the GPU when
    there is one; None without (the check then compares shapes and dtypes only)."""
    return torch.device("cuda") if torch.cuda.is_available() else None


def values_on(device, cap, model, inputs):
    """name -> real value of every tensor of an exported meta capture, computed on `device` from the
    loader's model and inputs (one full-size run of the graph there)."""
    real = real_values(cap, model, inputs)
    for name in cap.placeholders:
        if name not in real:  # a constant: lifted from forward (real already) or a module attribute
            value = cap.values[name]
            if value.is_meta:
                path = cap.targets[name]
                value = operator.attrgetter(path[len("inner."):] if path.startswith("inner.") else path)(model)
            real[name] = value
    swap = _meta_to(device)
    for node in cap.graph_module.graph.nodes:
        node.args = tree_map(swap, node.args)
        node.kwargs = tree_map(swap, node.kwargs)
    cap.graph_module.recompile()
    return capture.values_from(cap, {name: t.to(device) for name, t in real.items()})


def real_values(cap, model, inputs):
    """name -> real tensor for the graph's user inputs and parameters of a capture made on the meta
    twin of (model, inputs): the values the loader built, which saving writes."""
    tensors = [v for v in inputs if isinstance(v, torch.Tensor)]
    if len(tensors) != len(cap.inputs):
        raise RuntimeError(f"the meta capture has {len(cap.inputs)} tensor inputs, get_inputs() gave "
                           f"{len(tensors)}")
    values = {m.name: t for m, t in zip(cap.inputs, tensors)}
    owned = dict(model.named_parameters(remove_duplicate=False))
    owned.update(model.named_buffers(remove_duplicate=False))
    for pname, gname, _, _ in cap.params:
        if pname not in owned:
            raise RuntimeError(f"the graph reads {pname}, which is no parameter or buffer of the model")
        values[gname] = owned[pname].detach()
    return values
