"""Shared settings of @PACKAGE@'s tests: fp32 with TF32 off (the figures' setting), the tolerances
nova's validation uses (atol = rtol, by dtype), and the comparison it makes: non-finite values must
match the reference's, and a result passes when it is within the tolerance of eager's, or when on
every element its error against a float64 reference is no larger than eager's own error there (or
within the tolerance): nova's tolerance policy, under which a kernel more exact than eager (a 3xTF32
GEMM, say) passed validation and ships."""

import os
import sys

import pytest
import torch

# The installed package (with its compiled kernels) rather than the source folder's copy.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import installed_first  # noqa: E402,F401

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

TOLERANCES = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 1e-2, torch.float64: 1e-7}

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def eager_spread(again, want, repeats=2):
    """How far eager's own result moves from one call to the next: `again()` computes `want` (a list of
    tensors or None) once more, `repeats` times; per entry, the largest difference from `want` seen on
    any element. 0.0 where eager is deterministic. Gradients are the case: a convolution's weight
    gradient is a sum over the batch that cuDNN may add up in another order on every call."""
    spread = [0.0] * len(want)
    for _ in range(repeats):
        for i, (a, w) in enumerate(zip(again(), want)):
            if a is None or w is None or not w.is_floating_point():
                continue
            d = (a.detach().to(torch.float64) - w.detach().to(torch.float64)).abs()
            d = d[torch.isfinite(d)]
            if d.numel():
                spread[i] = max(spread[i], float(d.max()))
    return spread


def assert_matches(got, want, what, exact=None, spread=0.0):
    """got against eager's `want`; `exact` (a float64 reference, or a callable that makes one) is
    the second way to pass, for results that differ from eager because they are more exact. `spread`
    (eager_spread's figure for this result) widens the absolute tolerance by twice eager's own
    call-to-call difference: a difference eager shows against itself is not one of ours. Where eager is
    deterministic it is 0.0, and the tolerance is nova's."""
    assert got.shape == want.shape, f"{what}: shape {list(got.shape)}, expected {list(want.shape)}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
    got, want = got.detach(), want.detach()
    assert torch.equal(torch.isfinite(got), torch.isfinite(want)), f"{what}: NaN/Inf where the reference has none (or the reverse)"
    tol = TOLERANCES.get(want.dtype, 1e-4)
    finite = torch.isfinite(want)
    atol = tol + 2.0 * spread
    note = f" (eager's own call-to-call difference here: {spread:.3g})" if spread else ""
    try:
        torch.testing.assert_close(got[finite], want[finite], atol=atol, rtol=tol, msg=lambda m: f"{what}: {m}{note}")
    except AssertionError:
        if exact is None or not got.is_floating_point():
            raise
        x = (exact() if callable(exact) else exact).detach().to(torch.float64)
        g, e = got.to(torch.float64), want.to(torch.float64)
        ok = torch.isfinite(x) & torch.isfinite(g) & torch.isfinite(e)
        err_g = torch.where(ok, (g - x).abs(), torch.zeros_like(x))
        err_e = torch.where(ok, (e - x).abs(), torch.zeros_like(x))
        worse = int((err_g > torch.maximum(err_e, tol + tol * x.abs().nan_to_num(0, 0, 0))).sum())
        assert worse == 0, (f"{what}: differs from eager beyond the tolerance {tol:g}, and {worse} element(s) are "
                            f"further from the float64 result than eager's (max error vs float64 "
                            f"{float(err_g.max()):.3g}, eager's {float(err_e.max()):.3g})")


def float64_copy(values):
    """Floating-point tensors as float64 (detached), anything else as it is: a float64 reference's inputs."""
    return [v.detach().to(torch.float64) if isinstance(v, torch.Tensor) and v.is_floating_point() else v
            for v in values]
