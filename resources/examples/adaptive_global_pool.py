import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Pooling: a strided convolution with ReLU, an adaptive average pool to 7x7, an adaptive max
    pool to 4x4, a global average pool (AdaptiveAvgPool2d(1)) and a 2-D average pool, combined by a
    linear head."""

    def __init__(self, in_channels, channels, classes):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, channels, kernel_size=3, stride=2, padding=1)
        self.head = nn.Linear(channels * (49 + 16 + 1), classes)

    def forward(self, x):
        y = F.relu(self.conv(x))
        a = F.adaptive_avg_pool2d(y, (7, 7))
        m = F.adaptive_max_pool2d(y, (4, 4))
        g = F.adaptive_avg_pool2d(y, 1)
        local = F.avg_pool2d(y, kernel_size=2)
        feats = torch.cat([a.flatten(1), m.flatten(1), g.flatten(1)], dim=1)
        return self.head(feats), torch.tanh(local)


batch_size = 32
in_channels = 64
channels = 128
height = width = 64


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, channels, 10]
