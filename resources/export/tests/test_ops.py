"""Each op of @PACKAGE@ against its group's original PyTorch code (groups/group_N.py): the schema the
package states, fresh inputs at the shape its kernels were built for (several draws, inputs left
unchanged), torch.library.opcheck (schema, fake function, autograd registration), the op under AOTDispatcher
(torch.compile's path) forward and backward against eager, and a second shape,
which the shape guard sends to the original code instead of the kernels (the op itself refuses it)."""

import pytest
import torch

from @PACKAGE@ import _ops, _runtime

from conftest import assert_matches, eager_spread, float64_copy, needs_cuda

GROUPS = _ops.SHIPPED
IDS = [g["op"] for g in GROUPS]
needs_built = pytest.mark.skipif(not _ops.COMPILED, reason=f"the extension is not built here: {_ops.LOAD_ERROR}")


def fresh_inputs(group, seed, device="cuda"):
    torch.manual_seed(seed)
    return [x.to(device) for x in _ops.EXAMPLE_INPUTS[group["op"]]()]


@pytest.mark.parametrize("group", GROUPS, ids=IDS)
def test_the_op_has_the_stated_schema(group):
    schema = str(_ops.op(group["op"])._schema)
    assert schema == f"{_ops.NAMESPACE}::{group['schema']}"
    twin = group["schema"].replace(group["op"] + "(", _ops.infer_name(group["op"]) + "(", 1)
    assert str(_ops.infer_op(group["op"])._schema) == f"{_ops.NAMESPACE}::{twin}"


@pytest.mark.parametrize("group", GROUPS, ids=IDS)
def test_the_original_code_takes_the_recorded_inputs(group):
    inputs = fresh_inputs(group, 0, "cpu")
    assert [list(x.shape) for x in inputs] == [s["shape"] for s in group["input_specs"]]
    outs = _ops.as_list(_ops.ORIGINAL[group["op"]](*inputs))
    assert [list(o.shape) for o in outs] == [s["shape"] for s in group["output_specs"]]


@needs_cuda
@needs_built
@pytest.mark.parametrize("group", GROUPS, ids=IDS)
def test_the_op_matches_the_original_on_fresh_inputs(group):
    for seed in range(3):
        inputs = fresh_inputs(group, seed)
        before = [x.clone() for x in inputs]
        got = _ops.op(group["op"])(*inputs)
        torch.cuda.synchronize()
        want = _ops.as_list(_ops.ORIGINAL[group["op"]](*inputs))
        exact = []  # the float64 result, made only if an output differs from eager beyond the tolerance

        def exact_output(k, inputs=inputs, exact=exact):
            if not exact:
                exact.extend(_ops.as_list(_ops.ORIGINAL[group["op"]](*float64_copy(inputs))))
            return exact[k]

        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_matches(g, w, f"{group['op']} output {i} (seed {seed})", lambda i=i: exact_output(i))
        for x, b in zip(inputs, before):
            assert torch.equal(x, b), f"{group['op']} modified an input"


@needs_cuda
@needs_built
@pytest.mark.parametrize("group", GROUPS, ids=IDS)
def test_opcheck(group):
    # Static shapes: the kernels take only the shapes they were built for (other shapes never reach
    # the op), so the fake function states those; the dynamic-shape check would ask for more.
    # opcheck's own AOTDispatcher test compares gradients with assert_close's default fp32 tolerance
    # (1e-5): a backward that recomputes a large GEMM or convolution in another layout differs by more
    # than that in rounding alone; test_aot_dispatch_matches_eager makes the same check at nova's.
    inputs = tuple(x.requires_grad_(x.is_floating_point()) for x in fresh_inputs(group, 0))
    torch.library.opcheck(_ops.op(group["op"]), inputs,
                          test_utils=("test_schema", "test_autograd_registration", "test_faketensor"))


@needs_cuda
@needs_built
@pytest.mark.parametrize("group", GROUPS, ids=IDS)
def test_the_twin_without_autograd_runs_the_same_kernels(group):
    # group_N_infer, what the package calls with autograd off: the same kernels, so the same outputs,
    # and a fake function that states them (torch.compile traces it under torch.no_grad()).
    inputs = fresh_inputs(group, 3)
    twin = _ops.infer_op(group["op"])
    with torch.no_grad():
        want = _ops.op(group["op"])(*inputs)
        got = twin(*inputs)
    for k, (g, w) in enumerate(zip(got, want)):
        assert_matches(g, w, f"{group['op']}_infer output {k}")
    torch.library.opcheck(twin, tuple(inputs), test_utils=("test_schema", "test_faketensor"))


@needs_cuda
@needs_built
@pytest.mark.parametrize("group", GROUPS, ids=IDS)
def test_aot_dispatch_matches_eager(group):
    # The op traced by AOTDispatcher (what torch.compile does with it), forward and backward, against
    # the op called in eager mode, at nova's tolerances.
    op = _ops.op(group["op"])
    compiled = torch.compile(lambda *xs: op(*xs), backend="aot_eager", fullgraph=True)

    def run(fn):
        inputs = [x.requires_grad_(x.is_floating_point()) for x in fresh_inputs(group, 0)]
        outs = fn(*inputs)
        torch.manual_seed(7)
        weights = [torch.randn_like(o) for o in outs]
        loss = sum((o * w).sum() for o, w in zip(outs, weights) if o.is_floating_point())
        grads = torch.autograd.grad(loss, [x for x in inputs if x.requires_grad], allow_unused=True)
        return [o.detach() for o in outs], list(grads)

    want, want_grads = run(op)
    got, got_grads = run(compiled)
    spread = eager_spread(lambda: run(op)[1], want_grads)
    for i, (g, w) in enumerate(zip(got, want)):
        assert_matches(g, w, f"{group['op']} output {i} under AOTDispatcher")
    for i, (g, w) in enumerate(zip(got_grads, want_grads)):
        if w is None:
            assert g is None or not g.any()
        else:
            assert_matches(g, w, f"{group['op']} gradient {i} under AOTDispatcher", spread=spread[i])


@needs_cuda
@needs_built
@pytest.mark.parametrize("group", GROUPS, ids=IDS)
def test_another_shape_runs_the_original_code(group):
    inputs = fresh_inputs(group, 0)
    specs = group["input_specs"]
    assert _runtime.accelerated(inputs, specs)
    grown = [torch.cat([x, x]) if x.dim() > 0 else x for x in inputs[:1]] + inputs[1:]
    assert not _runtime.accelerated(grown, specs)
    calls = []

    def original(*xs):
        calls.append(xs)
        return (xs[0],)

    out = _runtime.group_call(group, original)(*grown)
    assert len(calls) == 1 and out[0] is grown[0], "the guard must send another shape to the original code"
    with pytest.raises(RuntimeError):
        _ops.op(group["op"])(*grown)  # the kernels' own check: never a result for a shape they were not built for
    assert not _runtime.accelerated([x.cpu() for x in inputs], specs)
    if inputs[0].dim() >= 2:
        assert not _runtime.accelerated([inputs[0].transpose(0, 1).contiguous().transpose(0, 1)] + inputs[1:], specs)


@needs_cuda
@needs_built
@pytest.mark.parametrize("group", GROUPS, ids=IDS)
def test_gradients_match_the_original(group):
    inputs = [x.requires_grad_(x.is_floating_point()) for x in fresh_inputs(group, 0)]
    got = _ops.op(group["op"])(*inputs)
    weights = [torch.randn_like(o) for o in got]
    sum(((o * w).sum() for o, w in zip(got, weights) if o.is_floating_point())).backward()
    got_grads = [x.grad.clone() if x.grad is not None else None for x in inputs]

    def original_gradients():
        refs = [x.detach().clone().requires_grad_(x.requires_grad) for x in inputs]
        want = _ops.as_list(_ops.ORIGINAL[group["op"]](*refs))
        sum(((o * w).sum() for o, w in zip(want, weights) if o.is_floating_point())).backward()
        return [r.grad for r in refs]

    want_grads = original_gradients()
    spread = eager_spread(original_gradients, want_grads)
    for i, (g, w) in enumerate(zip(got_grads, want_grads)):
        if w is None:
            assert g is None or not g.any()
        else:
            assert_matches(g, w, f"{group['op']} gradient of input {i}", spread=spread[i])
