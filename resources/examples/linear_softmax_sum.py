import torch
import torch.nn as nn


class Model(nn.Module):
    """A linear layer followed by row reductions of its result: softmax over the features, then the
    sum of the softmax times a weight vector per row; a bare linear layer with nothing to fuse; and
    a matmul with a numpy-style transposed operand (x.T @ y)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.head = nn.Linear(in_features, out_features)
        self.weight = nn.Parameter(torch.randn(out_features))

    def forward(self, x, y):
        p = torch.softmax(self.fc(x), dim=-1)
        score = (p * self.weight).sum(dim=-1)
        plain = self.head(x)
        gram = x.T @ y
        return score, plain, gram


batch_size = 128
in_features = 512
out_features = 256


def get_inputs():
    return [torch.randn(batch_size, in_features), torch.randn(batch_size, out_features)]


def get_init_inputs():
    return [in_features, out_features]
