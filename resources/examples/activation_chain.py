import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """A long chain of activations and constants: SELU, softplus (beta 2), leaky ReLU, GELU in both
    forms, swish, mish, hardtanh, tanh, sigmoid, clamp and a where against a constant, on a 4-D
    activation map; a position ramp kept as an int64 buffer is added at the end."""

    def __init__(self, width):
        super().__init__()
        self.register_buffer("ramp", torch.arange(width))

    def forward(self, x):
        a = F.selu(x) + 0.5
        b = F.softplus(a, beta=2.0, threshold=10.0)
        c = F.leaky_relu(b - 1.0, negative_slope=0.2)
        d = F.gelu(c, approximate="tanh") + F.gelu(x)
        e = d * torch.sigmoid(d)
        f = F.mish(e) * 0.9
        g = F.hardtanh(f, min_val=-2.0, max_val=2.0)
        h = torch.where(x > 0.0, torch.tanh(g), torch.full_like(g, -0.25))
        return torch.clamp(h, min=-0.9) + torch.sigmoid(x) * 3.0 + self.ramp * 0.001


batch_size = 16
channels = 128
height = width = 64


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [width]
