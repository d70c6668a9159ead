"""Intake's graph learned on the meta device: the model and its inputs (built for real by the loader,
with the user's seed) get twins whose tensors have shapes, strides and dtypes but no storage, so the
eager line-recording run, torch.export and the graph's interpretation cost no arithmetic at any size.
Real values stay with the loader's model and inputs: what is saved as example inputs comes from
there, unchanged. A model the meta device cannot follow (a branch on a tensor's value, .item(), an op
with no meta kernel, a tensor kept outside the module's attributes) makes `meta_twin` or the capture
raise, and intake then runs today's full-size route."""

import copy
import itertools

import torch
from torch.utils._pytree import tree_map


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


def restore_device(cap, model, inputs):
    """A device a forward read (`x.device`) shows in the nodes' arguments as the meta device: it
    becomes the device the loader's real tensors are on, as a full-size capture records it."""
    real = next((t.device for t in itertools.chain((v for v in inputs if isinstance(v, torch.Tensor)),
                                                   model.parameters(), model.buffers())), torch.device("cpu"))

    def swap(v):
        return real if isinstance(v, torch.device) and v.type == "meta" else v

    for node in cap.nodes:
        node.args = list(tree_map(swap, node.args))
        node.kwargs = dict(tree_map(swap, node.kwargs))


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
