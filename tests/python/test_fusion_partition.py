"""fusion.partition: which captured nodes one kernel could replace, and each group's boundary."""

import pytest

pytest.importorskip("torch")
from nova_worker.fusion import partition  # noqa: E402


class Node:
    """The two things partition reads of a captured node (capture.IRNode)."""

    def __init__(self, out, inputs):
        self.out_names = [out]
        self._inputs = inputs

    def input_names(self):
        return list(self._inputs)


def groups_of(spec, outputs):
    nodes = [Node(out, inputs) for out, inputs, _ in spec]
    return partition(nodes, [cls for _, _, cls in spec], set(outputs))


def test_a_convolution_takes_its_elementwise_epilogue():
    groups = groups_of([("conv", ["x", "w"], "convolution"),
                        ("add", ["conv", "bias"], "elementwise"),
                        ("relu", ["add"], "elementwise")], ["relu"])
    assert len(groups) == 1
    g = groups[0]
    assert g.kind == "conv+epilogue" and g.anchor == 0 and g.members == [0, 1, 2]
    assert g.inputs == ["x", "w", "bias"] and g.outputs == ["relu"]


def test_a_second_anchor_starts_a_group_that_reads_the_first():
    groups = groups_of([("mm", ["a", "b"], "matmul"),
                        ("add", ["mm", "c"], "elementwise"),
                        ("sm", ["add"], "reduction"),
                        ("mul", ["sm", "d"], "elementwise")], ["mul"])
    assert [(g.kind, g.members) for g in groups] == [("gemm+epilogue", [0, 1]), ("reduction", [2, 3])]
    assert groups[0].outputs == ["add"]
    assert groups[1].inputs == ["add", "d"] and groups[1].outputs == ["mul"]


def test_an_elementwise_prologue_feeding_only_the_anchor_joins_it():
    groups = groups_of([("scaled", ["x"], "elementwise"),
                        ("mm", ["scaled", "w"], "matmul")], ["mm"])
    assert len(groups) == 1
    assert groups[0].kind == "gemm+epilogue" and groups[0].anchor == 1 and groups[0].members == [0, 1]


def test_a_prologue_whose_value_is_also_a_graph_output_stays_apart():
    groups = groups_of([("scaled", ["x"], "elementwise"),
                        ("mm", ["scaled", "w"], "matmul")], ["mm", "scaled"])
    assert [(g.kind, g.members) for g in groups] == [("elementwise", [0]), ("gemm+epilogue", [1])]


def test_data_movement_of_a_graph_input_goes_with_its_consumer():
    groups = groups_of([("v", ["x"], "data_movement"),
                        ("add", ["v", "y"], "elementwise")], ["add"])
    assert len(groups) == 1
    assert groups[0].kind == "elementwise" and groups[0].members == [0, 1]
    assert groups[0].inputs == ["x", "y"]


def test_an_unconsumed_value_is_still_a_group_output():
    groups = groups_of([("a", ["x"], "other")], [])
    assert groups[0].kind == "other" and groups[0].outputs == ["a"]


class CountingNode(Node):
    """A node that counts how often its inputs are asked for (a pytree flatten on a real node)."""

    calls = 0

    def input_names(self):
        CountingNode.calls += 1
        return super().input_names()


def test_a_wide_graph_flattens_each_nodes_inputs_once():
    # 2,000 parallel branches (mul then relu of the input), summed: intake of such a model took more
    # than the 600 s timeout when every join test flattened its nodes' inputs again (issue #21's sweep).
    spec = []
    for i in range(2000):
        spec.append((f"m{i}", ["x"], "elementwise"))
        spec.append((f"r{i}", [f"m{i}"], "elementwise"))
    spec.append(("stack", [f"r{i}" for i in range(2000)], "data_movement"))
    spec.append(("sum", ["stack"], "reduction"))
    nodes = [CountingNode(out, inputs) for out, inputs, _ in spec]
    CountingNode.calls = 0
    groups = partition(nodes, [cls for _, _, cls in spec], {"sum"})
    assert CountingNode.calls == len(nodes)
    assert sum(len(g.members) for g in groups) == len(nodes)


def fits_always(nodes, i, anchor):
    return True


def rows_of(spec, outputs, fits=fits_always):
    nodes = [Node(out, inputs) for out, inputs, _ in spec]
    return partition(nodes, [cls for _, _, cls in spec], set(outputs), row_reduction_fits=fits)


SCORES_LSE = [("kt", ["k"], "data_movement"),
              ("bmm", ["q", "kt"], "matmul"),
              ("scaled", ["bmm"], "elementwise"),
              ("lse", ["scaled"], "reduction"),
              ("half", ["lse"], "elementwise")]


def test_a_reduction_over_a_gemms_rows_joins_the_gemms_group_with_what_follows():
    groups = rows_of(SCORES_LSE, ["half"])
    assert [(g.kind, g.members) for g in groups] == [("gemm+epilogue", [0, 1, 2, 3, 4])]
    assert groups[0].inputs == ["k", "q"] and groups[0].outputs == ["half"]


def test_the_reduction_stays_apart_where_its_form_does_not_fit():
    groups = rows_of(SCORES_LSE, ["half"], fits=lambda nodes, i, anchor: False)
    assert [(g.kind, g.members) for g in groups] == [("gemm+epilogue", [0, 1, 2]), ("reduction", [3, 4])]
    # and without the predicate (the default), as before
    nodes = [Node(out, inputs) for out, inputs, _ in SCORES_LSE]
    assert len(partition(nodes, [c for _, _, c in SCORES_LSE], {"half"})) == 2


def test_the_reduction_stays_apart_where_the_product_is_read_elsewhere():
    # The scaled scores are also a graph output, or read by a later node: they must be stored.
    assert len(rows_of(SCORES_LSE, ["half", "scaled"])) == 2
    later = SCORES_LSE + [("other", ["scaled", "half"], "elementwise")]
    groups = rows_of(later, ["other"])
    assert groups[0].members == [0, 1, 2] and 3 not in groups[0].members


def test_the_reduction_stays_apart_where_an_operand_is_computed_in_the_gemms_group():
    spec = [("scaled_q", ["q"], "elementwise"), ("bmm", ["scaled_q", "k"], "matmul"),
            ("lse", ["bmm"], "reduction")]
    groups = rows_of(spec, ["lse"])
    assert [(g.kind, g.members) for g in groups] == [("gemm+epilogue", [0, 1]), ("reduction", [2])]


def test_the_fit_predicate_reads_the_reduced_dimension_and_the_tiles():
    import torch
    from nova_worker.capture import IRNode, Ref, TensorMeta
    from nova_worker.fusion import gemm_row_reduction_fits

    def meta(name, shape):
        return TensorMeta(name, torch.empty(shape, device="meta"))

    metas = {"q": meta("q", (8, 128, 64)), "kt": meta("kt", (8, 64, 256))}
    bmm = IRNode(torch.ops.aten.bmm.default, (Ref("q"), Ref("kt")), {}, ["s"], [meta("s", (8, 128, 256))])

    def lse(dim, op=torch.ops.aten.logsumexp.default):
        return IRNode(op, (Ref("s"), dim), {}, ["l"], [meta("l", (8, 128))])

    fits = gemm_row_reduction_fits(metas.get)
    assert fits([bmm, lse([-1])], 1, 0) and fits([bmm, lse([2])], 1, 0)
    assert not fits([bmm, lse([1])], 1, 0)          # over the product's columns, not its rows
    assert not fits([bmm, lse([1, 2])], 1, 0)
    assert not fits([bmm, lse([-1], torch.ops.aten.var.correction)], 1, 0)
    odd = IRNode(torch.ops.aten.bmm.default, (Ref("q"), Ref("kt")), {}, ["s"], [meta("s", (8, 128, 200))])
    assert not fits([odd, lse([-1])], 1, 0)         # 200 columns: not whole 64-wide tiles
