import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """GroupNorm over channel groups, then Mish and a per-channel scale."""

    def __init__(self, channels, groups):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)
        self.gain = nn.Parameter(torch.ones(channels, 1, 1) * 1.5)

    def forward(self, x):
        return F.mish(self.norm(x)) * self.gain


batch_size = 16
channels = 64
groups = 8
height = width = 32


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, groups]
