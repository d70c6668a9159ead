"""KernelBench's current, compute-bound size of matmul_scaling_residual_add.py: the same Model, larger shapes."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def module_fn(
    x: torch.Tensor,
    scaling_factor: float,
    weight: torch.Tensor,
    bias: torch.Tensor,
) -> torch.Tensor:
    """Linear layer, then the result scaled and added back to itself as a residual.

    Args:
        x: input of shape (batch_size, in_features)
        scaling_factor: factor applied to the linear output before the residual add
        weight: (out_features, in_features)
        bias: (out_features,)
    """
    x = F.linear(x, weight, bias)
    original_x = x.clone().detach()
    x = x * scaling_factor
    x = x + original_x
    return x


class Model(nn.Module):
    """Matmul, scaling and residual addition (functional form: forward takes fn)."""

    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        linear = nn.Linear(in_features, out_features)
        self.weight = nn.Parameter(linear.weight)
        self.bias = nn.Parameter(linear.bias)

    def forward(self, x, scaling_factor, fn=module_fn):
        return fn(x, scaling_factor, self.weight, self.bias)


batch_size = 16384
in_features = 4096
out_features = 4096
scaling_factor = 0.5


def get_inputs():
    return [torch.randn(batch_size, in_features), scaling_factor]


def get_init_inputs():
    return [in_features, out_features, scaling_factor]
