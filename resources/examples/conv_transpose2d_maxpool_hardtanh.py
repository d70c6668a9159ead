import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """A transposed 2-D convolution (stride 2, padding 1, output padding 1), a bias add and
    hardtanh, then a 2-D max pool (kernel 3, stride 2, padding 1) and a sigmoid."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size=3, stride=2, padding=1,
                                         output_padding=1)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.1)
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        y = F.hardtanh(self.deconv(x) + self.bias, min_val=-0.5, max_val=0.5)
        return torch.sigmoid(self.pool(y))


batch_size = 32
in_channels = 128
out_channels = 64
height = width = 32


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
