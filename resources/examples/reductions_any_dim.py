import torch
import torch.nn as nn


class Model(nn.Module):
    """Reductions over dimensions other than the last: a channel sum with keepdim, a spatial mean over
    (2, 3) with keepdim, min with indices over the height, max without indices (amax) over (1, 3),
    and argmax over the channels."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        centred = x - x.mean(dim=(2, 3), keepdim=True)
        energy = (centred * centred).sum(dim=1, keepdim=True)
        low, where_low = torch.min(x, dim=2)
        peak = torch.amax(x, dim=(1, 3))
        best = torch.argmax(x, dim=1)
        return energy, low * 2.0, where_low, peak, best


batch_size = 32
channels = 128
height = width = 32


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
