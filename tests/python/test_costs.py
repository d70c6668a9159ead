"""costs: op classes and the FLOP / byte estimates per node."""

import pytest

torch = pytest.importorskip("torch")
from nova_worker import costs  # noqa: E402

aten = torch.ops.aten


class Meta:
    """The fields the cost model reads of a captured tensor (capture.TensorMeta)."""

    def __init__(self, name, shape, itemsize=4):
        self.name, self.shape, self.itemsize = name, list(shape), itemsize


def test_op_classes():
    assert costs.op_class(aten.conv2d.default) == "convolution"
    assert costs.op_class(aten.addmm.default) == "matmul"
    assert costs.op_class(aten.layer_norm.default) == "normalization"
    assert costs.op_class(aten.add.Tensor) == "elementwise"
    assert costs.op_class(aten.add_.Tensor) == "elementwise"  # in place classes as its op
    assert costs.op_class(aten.min.other) == "elementwise"
    assert costs.op_class(aten.min.dim) == "reduction"
    assert costs.op_class(aten.view.default) == "data_movement"
    assert costs.readable_op(aten.min.other, 2) == "minimum"
    assert costs.readable_op(aten.conv2d.default, 3) == "convolution"


def test_convolution_flops_count_two_per_mac_plus_the_bias():
    x, w, b = Meta("x", (1, 3, 32, 32)), Meta("w", (8, 3, 3, 3)), Meta("b", (8,))
    out = Meta("out", (1, 8, 30, 30))
    macs = 8 * 30 * 30 * 3 * 3 * 3
    assert costs.flops(aten.conv2d.default, "convolution", [x, w, b], [out]) == 2 * macs + 8 * 30 * 30
    assert costs.flops(aten.conv2d.default, "convolution", [x, w], [out]) == 2 * macs


def test_gemm_flops():
    x, w, b, out = Meta("x", (4, 16)), Meta("w", (32, 16)), Meta("b", (32,)), Meta("o", (4, 32))
    assert costs.flops(aten.linear.default, "matmul", [x, w, b], [out]) == 2 * 128 * 16 + 128
    wt = Meta("wt", (16, 32))
    assert costs.flops(aten.addmm.default, "matmul", [b, x, wt], [out]) == 2 * 128 * 16 + 128
    assert costs.flops(aten.mm.default, "matmul", [x, wt], [out]) == 2 * 128 * 16


def test_elementwise_and_reduction_flops_weigh_the_op():
    t = Meta("t", (10, 10))
    assert costs.flops(aten.gelu.default, "elementwise", [t], [t]) == 800
    assert costs.flops(aten.add.Tensor, "elementwise", [t, t], [t]) == 100
    assert costs.flops(aten._softmax.default, "reduction", [t], [t]) == 500
    assert costs.flops(aten.view.default, "data_movement", [t], [t]) == 0


def test_bytes_count_each_input_once_and_views_move_nothing():
    a, out = Meta("a", (10,)), Meta("o", (10,))
    assert costs.bytes_moved(aten.add.Tensor, "elementwise", [a, a], [out]) == 80.0
    half = Meta("h", (10,), itemsize=2)
    assert costs.bytes_moved(aten.mul.Tensor, "elementwise", [a, half], [out]) == 40 + 20 + 40
    assert costs.bytes_moved(aten.view.default, "data_movement", [a], [out]) == 0.0
    assert costs.nbytes(Meta("s", ())) == 4
