import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """A 3-D convolution with an asymmetric kernel, stride and padding, batch norm in training form
    (batch statistics, running buffers updated, int64 num_batches_tracked counted), then Mish and a
    per-channel scale. Volume 16x32x32 keeps the CPU intake under a few seconds."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size=(3, 3, 5), stride=(1, 2, 1),
                              padding=(1, 1, 2))
        self.bn = nn.BatchNorm3d(out_channels)
        self.gain = nn.Parameter(torch.rand(out_channels, 1, 1, 1) + 0.5)

    def forward(self, x):
        return F.mish(self.bn(self.conv(x))) * self.gain


batch_size = 16
in_channels = 64
out_channels = 64
depth, height, width = 16, 32, 32


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
