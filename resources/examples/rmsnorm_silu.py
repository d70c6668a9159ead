import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """RMSNorm over the hidden size, then SiLU: a normalization with an epilogue."""

    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden) + 0.01 * torch.randn(hidden))
        self.eps = eps

    def forward(self, x):
        h = F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)
        return F.silu(h)


batch_size = 16
seq_len = 128
hidden = 512


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden, 1e-6]
