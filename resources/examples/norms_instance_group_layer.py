import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Normalizations over different dimensions: batch norm in eval form (running statistics),
    instance norm with affine parameters, group norm, and layer norm over the last two dims,
    with SiLU and tanh between them."""

    def __init__(self, channels, groups, height, width):
        super().__init__()
        self.register_buffer("running_mean", torch.randn(channels) * 0.1)
        self.register_buffer("running_var", torch.rand(channels) + 0.5)
        self.bn_weight = nn.Parameter(torch.rand(channels) + 0.5)
        self.bn_bias = nn.Parameter(torch.randn(channels) * 0.1)
        self.instance = nn.InstanceNorm2d(channels, affine=True)
        self.group = nn.GroupNorm(groups, channels)
        self.layer = nn.LayerNorm([height, width])

    def forward(self, x):
        y = F.batch_norm(x, self.running_mean, self.running_var, self.bn_weight, self.bn_bias,
                         training=False, eps=1e-5)
        y = F.silu(self.instance(y))
        y = torch.tanh(self.group(y))
        return self.layer(y)


batch_size = 32
channels = 64
groups = 8
height = width = 64


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, groups, height, width]
