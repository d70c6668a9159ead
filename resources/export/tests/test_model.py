"""@PACKAGE@'s ModelNew against the client's Model: the same constructor, forward signature and
state_dict keys (a Model checkpoint loads unchanged); the same outputs on fresh inputs and weights,
several trials, both orders, inputs unchanged, NaN/Inf where the original has them; at the example
shape and at a doubled batch; optimize() in place; gradients against eager. On a machine without a
CUDA GPU the same checks run on the CPU, where every group takes its original PyTorch path."""

import copy
import inspect

import pytest
import torch

import @PACKAGE@
from @PACKAGE@ import MANIFEST, Model, ModelNew, _ops, _runtime, get_init_inputs, get_inputs, optimize

from conftest import assert_matches, eager_spread, float64_copy

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def build(seed, device):
    torch.manual_seed(seed)
    original = Model(*get_init_inputs()).to(device).eval()
    new = ModelNew(*get_init_inputs()).to(device).eval()
    new.load_state_dict(original.state_dict())
    return original, new


def draw(seed, device, grow=False):
    torch.manual_seed(1000 + seed)
    out = []
    for x in get_inputs():
        if isinstance(x, torch.Tensor):
            if grow and x.dim() > 0:
                x = torch.cat([x, torch.randn_like(x) if x.is_floating_point() else x])
            x = x.to(device)
        out.append(x)
    return out


def outputs(y):
    return [t for t in torch.utils._pytree.tree_leaves(y) if isinstance(t, torch.Tensor)]


def test_the_constructor_and_forward_signatures_are_the_originals():
    assert inspect.signature(ModelNew.__init__) == inspect.signature(Model.__init__)
    assert inspect.signature(ModelNew.forward) == inspect.signature(Model.forward)
    assert issubclass(ModelNew, Model)


def test_the_state_dict_keys_are_the_originals_and_a_checkpoint_loads():
    torch.manual_seed(0)
    original = Model(*get_init_inputs())
    new = ModelNew(*get_init_inputs())
    assert list(new.state_dict().keys()) == list(original.state_dict().keys())
    assert {k: v.shape for k, v in new.state_dict().items()} == {k: v.shape for k, v in original.state_dict().items()}
    for p in MANIFEST["params"]:
        assert p["name"] in original.state_dict(), f"{p['name']} (recorded at export) is not in Model's state_dict"
    new.load_state_dict(original.state_dict(), strict=True)


def compare_on(device, grow):
    for trial in range(3):
        original, new = build(trial, device)
        inputs = draw(trial, device, grow)
        before = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        with torch.no_grad():
            try:
                first_new = outputs(new(*inputs))
            except Exception:
                original(*inputs)  # an input the client's own model refuses is not the package's to take
                raise
            want = outputs(original(*inputs))
            again = outputs(new(*inputs))  # both orders: the optimized model after the original too
        for x, b in zip(inputs, before):
            if isinstance(x, torch.Tensor):
                assert torch.equal(x, b), "the optimized model modified an input"
        exact = []  # the model in float64, run only if an output differs from eager beyond the tolerance

        def exact_output(k, original=original, inputs=inputs, exact=exact):
            if not exact:
                with torch.no_grad():
                    exact.extend(outputs(copy.deepcopy(original).double()(*float64_copy(inputs))))
            return exact[k]

        assert len(first_new) == len(want)
        for i, (a, b, w) in enumerate(zip(first_new, again, want)):
            assert_matches(a, w, f"output {i} (trial {trial}, {device})", lambda i=i: exact_output(i))
            assert_matches(b, w, f"output {i} (trial {trial}, {device}, after the original)", lambda i=i: exact_output(i))


@pytest.mark.parametrize("device", DEVICES)
def test_the_whole_model_matches_the_original(device):
    compare_on(device, grow=False)


@pytest.mark.parametrize("device", DEVICES)
def test_a_doubled_batch_matches_the_original(device):
    original, _ = build(0, device)
    try:
        with torch.no_grad():
            original(*draw(0, device, grow=True))
    except Exception as exc:
        pytest.skip(f"the client's Model does not take a doubled batch ({type(exc).__name__})")
    compare_on(device, grow=True)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.skipif(not _ops.COMPILED, reason=f"the extension is not built here: {_ops.LOAD_ERROR}")
def test_every_shipped_group_runs_its_op_at_the_example_shape():
    _, new = build(0, "cuda")
    inputs = draw(0, "cuda")
    with torch.no_grad():
        new(*inputs)
        before = {op: dict(n) for op, n in _runtime.CALLS.items()}
        new(*inputs)
    captured = [a for a in _runtime.captures(new).values() if a is not None]
    assert captured, "the forward was not captured"
    assert sorted(captured[0].replaced) == sorted(g["id"] for g in _ops.SHIPPED)
    # And each op's kernels ran: the shape guard let the example's inputs through (a constant the
    # forward makes on the CPU or another dtype would send them to PyTorch; a strided input is copied).
    for g in _ops.SHIPPED:
        ran = _runtime.CALLS[g["op"]]["kernel"] - before.get(g["op"], {}).get("kernel", 0)
        fell_back = _runtime.CALLS[g["op"]]["fallback"] - before.get(g["op"], {}).get("fallback", 0)
        assert ran >= 1 and fell_back == 0, f"{g['op']}: {ran} call(s) ran the kernels, {fell_back} the original PyTorch ops"


@pytest.mark.parametrize("device", DEVICES)
def test_optimize_accelerates_an_instance_in_place(device):
    original, _ = build(0, device)
    copy = Model(*get_init_inputs()).to(device).eval()
    copy.load_state_dict(original.state_dict())
    keys = list(copy.state_dict().keys())
    assert optimize(copy) is copy
    assert isinstance(copy, Model) and list(copy.state_dict().keys()) == keys
    inputs = draw(0, device)
    with torch.no_grad():
        for i, (a, w) in enumerate(zip(outputs(copy(*inputs)), outputs(original(*inputs)))):
            assert_matches(a, w, f"output {i} of optimize(model)")


def test_optimize_refuses_another_model():
    with pytest.raises((ValueError, TypeError)):
        optimize(torch.nn.Linear(3, 3))


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_match_eager(device):
    original, new = build(0, device)
    original.train()
    new.train()
    inputs = draw(0, device)

    def gradients(model):
        xs = [x.detach().clone().requires_grad_(x.is_floating_point()) if isinstance(x, torch.Tensor) else x
              for x in inputs]
        torch.manual_seed(7)
        loss = sum((o * torch.randn_like(o)).sum() for o in outputs(model(*xs)) if o.is_floating_point())
        model.zero_grad()
        loss.backward()
        return ([p.grad.clone() if p.grad is not None else None for p in model.parameters()] +
                [x.grad for x in xs if isinstance(x, torch.Tensor) and x.requires_grad])

    want_grads = gradients(original)
    got_grads = gradients(new)
    spread = eager_spread(lambda: gradients(original), want_grads)
    for i, (w, g) in enumerate(zip(want_grads, got_grads)):
        if w is None:
            assert g is None or not g.any()
        else:
            assert g is not None, f"gradient {i} is missing"
            assert_matches(g, w, f"gradient {i}", spread=spread[i])


@pytest.mark.skipif(MANIFEST["model_form"] != "functional", reason="the model is not in the functional form")
def test_the_functional_form_runs_another_fn_as_given():
    original, new = build(0, "cpu")
    calls = []
    default_fn = inspect.signature(Model.forward).parameters["fn"].default

    def spy(*args):
        calls.append(len(args))
        return default_fn(*args)

    inputs = draw(0, "cpu")
    with torch.no_grad():
        got = outputs(new(*inputs, fn=spy))
        want = outputs(original(*inputs))
    assert calls, "a forward with another fn must call that fn"
    for i, (a, w) in enumerate(zip(got, want)):
        assert_matches(a, w, f"output {i} with fn=spy")


def test_the_package_says_whether_its_kernels_are_loaded():
    assert isinstance(@PACKAGE@.COMPILED, bool)
    if not @PACKAGE@.COMPILED and _ops.SHIPPED:
        assert @PACKAGE@.LOAD_ERROR


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_the_shipped_kernels_are_loaded():
    # Otherwise every test that needs the kernels would be skipped and the package would run the
    # original PyTorch code: installed without its compiled library, or imported from the source folder.
    if _ops.SHIPPED:
        assert @PACKAGE@.COMPILED, f"the package's kernels are not loaded: {@PACKAGE@.LOAD_ERROR}"
