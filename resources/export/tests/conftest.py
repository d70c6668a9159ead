"""Shared settings of @PACKAGE@'s tests: fp32 with TF32 off (the figures' setting), the tolerances
nova's validation uses (atol = rtol, by dtype), and the comparison it makes (non-finite values must
match the reference's)."""

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


def assert_matches(got, want, what):
    assert got.shape == want.shape, f"{what}: shape {list(got.shape)}, expected {list(want.shape)}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
    got, want = got.detach(), want.detach()
    assert torch.equal(torch.isfinite(got), torch.isfinite(want)), f"{what}: NaN/Inf where the reference has none (or the reverse)"
    tol = TOLERANCES.get(want.dtype, 1e-4)
    finite = torch.isfinite(want)
    torch.testing.assert_close(got[finite], want[finite], atol=tol, rtol=tol, msg=lambda m: f"{what}: {m}")
