import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """A depthwise convolution with an asymmetric kernel, dilation and padding, ReLU; a grouped
    convolution (4 groups) with stride 2, an asymmetric kernel and dilation, leaky ReLU; then a
    plain 1x3 convolution with asymmetric padding and a bias-and-clamp epilogue."""

    def __init__(self, channels, out_channels):
        super().__init__()
        self.depthwise = nn.Conv2d(channels, channels, kernel_size=(3, 5), padding=(2, 2), dilation=(2, 1),
                                   groups=channels)
        self.grouped = nn.Conv2d(channels, out_channels, kernel_size=(3, 1), stride=2, padding=(2, 0),
                                 dilation=(2, 1), groups=4)
        self.pointwise = nn.Conv2d(out_channels, out_channels, kernel_size=(1, 3), padding=(0, 1), bias=False)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.1)

    def forward(self, x):
        y = F.relu(self.depthwise(x))
        y = F.leaky_relu(self.grouped(y), negative_slope=0.05)
        return torch.clamp(self.pointwise(y) + self.bias, min=-1.0, max=1.0)


batch_size = 32
channels = 128
out_channels = 256
height = width = 64


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, out_channels]
