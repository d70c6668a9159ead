import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """A transposed 3-D convolution (stride 2), GELU (erf form) and a scale, a 3-D average pool, and
    a global average over the volume with keepdim. Volume 8x16x16 in, 16x32x32 out, to keep the CPU
    intake short."""

    def __init__(self, in_channels, out_channels, scale):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size=(2, 4, 4), stride=2,
                                         padding=(0, 1, 1))
        self.scale = scale

    def forward(self, x):
        y = F.gelu(self.deconv(x)) * self.scale
        y = F.avg_pool3d(y, kernel_size=2, stride=2)
        return y - y.mean(dim=(2, 3, 4), keepdim=True)


batch_size = 16
in_channels = 128
out_channels = 64
depth, height, width = 8, 16, 16


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, 0.75]
