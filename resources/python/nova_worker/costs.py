"""Op classes (they drive colouring, cost models and fusion) and FLOP / byte estimates per node."""

import math

import torch

CONVOLUTION = {"convolution", "_convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
               "conv_transpose2d", "conv_transpose3d", "cudnn_convolution", "mkldnn_convolution"}
MATMUL = {"linear", "matmul", "mm", "bmm", "addmm", "baddbmm", "addbmm", "addmv", "mv", "einsum",
          "scaled_dot_product_attention", "_scaled_dot_product_flash_attention_for_cpu",
          "_scaled_dot_product_efficient_attention", "_scaled_dot_product_flash_attention"}
NORMALIZATION = {"layer_norm", "native_layer_norm", "group_norm", "native_group_norm", "batch_norm",
                 "native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
                 "_native_batch_norm_legit_functional", "instance_norm", "rms_norm", "_fused_rms_norm"}
SOFTMAX = {"softmax", "_softmax", "log_softmax", "_log_softmax", "_safe_softmax"}
REDUCTION = SOFTMAX | {"sum", "mean", "amax", "amin", "max", "min", "prod", "var", "std", "var_mean",
                       "std_mean", "logsumexp", "argmax", "argmin", "norm", "linalg_vector_norm",
                       "cumsum", "cumprod", "all", "any"}
DATA_MOVEMENT = {"view", "_unsafe_view", "reshape", "transpose", "permute", "t", "expand", "expand_as",
                 "squeeze", "unsqueeze", "clone", "detach", "contiguous", "split", "split_with_sizes",
                 "chunk", "unbind", "cat", "stack", "slice", "select", "index_select", "narrow",
                 "flatten", "unflatten", "lift_fresh_copy", "lift_fresh", "scalar_tensor", "alias",
                 "_to_copy", "to", "copy", "copy_", "ones", "zeros", "full", "empty", "arange",
                 "ones_like", "zeros_like", "full_like", "empty_like", "new_ones", "new_zeros",
                 "new_full", "new_empty", "as_strided", "repeat", "tensor", "constant_pad_nd", "pad",
                 "roll", "flip", "gather", "index", "empty_strided", "_assert_tensor_metadata"}
# Ops that only re-describe memory (no data moves): zero bytes as well as zero FLOPs.
VIEWS = {"view", "_unsafe_view", "reshape", "transpose", "permute", "t", "expand", "expand_as",
         "squeeze", "unsqueeze", "detach", "alias", "split", "split_with_sizes", "chunk", "unbind",
         "slice", "select", "narrow", "flatten", "unflatten", "as_strided", "_assert_tensor_metadata"}
# Elementwise ops with a transcendental or several arithmetic steps per element.
ELEMENTWISE_COST = {"gelu": 8, "silu": 4, "sigmoid": 4, "tanh": 4, "mish": 8, "softplus": 4,
                    "exp": 2, "log": 2, "erf": 4, "hardswish": 4, "elu": 4, "pow": 2, "rsqrt": 2,
                    "sqrt": 2, "div": 1, "hardsigmoid": 3, "logsigmoid": 4, "triu": 1, "tril": 1}

# Readable names for the overload packets whose ATen name hides what they do.
READABLE = {"conv1d": "convolution", "conv2d": "convolution", "conv3d": "convolution",
            "_convolution": "convolution", "min": "minimum", "max": "maximum"}


def packet_name(op):
    """aten.add.Tensor -> "add"."""
    return op._schema.name.split("::")[-1]


def readable_op(op, n_args):
    name = packet_name(op)
    if name in ("min", "max"):
        # min.other / max.other (two tensors) are elementwise; min.dim / max.dim are reductions.
        return READABLE[name] if op._overloadname == "other" else name
    return READABLE.get(name, name)


def op_class(op):
    name = packet_name(op).rstrip("_") or packet_name(op)  # in-place variants class as their op
    if name in CONVOLUTION:
        return "convolution"
    if name in MATMUL:
        return "matmul"
    if name in NORMALIZATION:
        return "normalization"
    if name in ("min", "max") and op._overloadname == "other":
        return "elementwise"
    if name in REDUCTION:
        return "reduction"
    if name in DATA_MOVEMENT or getattr(op, "is_view", False):
        return "data_movement"
    if torch.Tag.pointwise in getattr(op, "tags", ()) or name in ELEMENTWISE_COST:
        return "elementwise"
    return "other"


def numel(meta):
    return math.prod(meta.shape) if meta.shape else 1


def nbytes(meta):
    return numel(meta) * meta.itemsize


def flops(op, cls, inputs, outputs):
    """inputs: the tensor arguments' metas in schema order; outputs: output metas."""
    name = packet_name(op)
    if not outputs:
        return 0.0
    out = outputs[0]
    if cls == "convolution" and len(inputs) >= 2:
        weight = inputs[1]
        macs = numel(out) * math.prod(weight.shape[1:])
        return float(2 * macs + (numel(out) if len(inputs) >= 3 else 0))
    if cls == "matmul":
        if name in ("linear",):
            k = inputs[0].shape[-1]
            return float(2 * numel(out) * k + (numel(out) if len(inputs) >= 3 else 0))
        if name in ("addmm", "baddbmm", "addbmm", "addmv"):
            k = inputs[1].shape[-1]
            return float(2 * numel(out) * k + numel(out))
        if name in ("mm", "bmm", "matmul", "mv", "einsum") and inputs:
            k = inputs[0].shape[-1] if inputs[0].shape else 1
            return float(2 * numel(out) * k)
        if "attention" in name and len(inputs) >= 3:
            q, k_ = inputs[0], inputs[1]
            return float(4 * numel(q) * k_.shape[-2] + 5 * numel(q) // q.shape[-1] * k_.shape[-2])
        return float(2 * numel(out))
    if cls == "elementwise":
        return float(numel(out) * ELEMENTWISE_COST.get(name, 1))
    if cls == "reduction":
        n = max((numel(i) for i in inputs), default=numel(out))
        return float(n * (5 if name in SOFTMAX else 1))
    if cls == "normalization":
        n = max((numel(i) for i in inputs), default=numel(out))
        return float(8 * n)
    return 0.0


def bytes_moved(op, cls, inputs, outputs):
    if packet_name(op) in VIEWS:
        return 0.0
    seen, total = set(), 0
    for meta in inputs:
        if meta.name not in seen:
            seen.add(meta.name)
            total += nbytes(meta)
    return float(total + sum(nbytes(o) for o in outputs))
