"""validate.compare and tolerance_for: the correctness verdict of one output against its reference."""

import math

import pytest

torch = pytest.importorskip("torch")
from nova_worker import schemas  # noqa: E402
from nova_worker.validate import compare, tolerance_for  # noqa: E402


def test_within_atol_plus_rtol_passes_and_reports_the_errors():
    want = torch.tensor([1.0, 100.0, -2.0])
    got = want + torch.tensor([5e-5, 5e-3, 0.0])  # 100 * 1e-4 + 1e-4 allows 1.01e-2 on the second
    r = compare(got, want, 1e-4)
    assert r["ok"] and r["shape_ok"] and r["reason"] == ""
    assert r["max_abs"] == pytest.approx(5e-3, rel=1e-3)
    assert r["max_rel"] == pytest.approx(5e-5, rel=1e-2)
    assert r["nonfinite"] == 0


def test_beyond_tolerance_fails_with_the_error_in_the_reason():
    want = torch.zeros(4)
    got = torch.tensor([0.0, 0.0, 3e-4, 0.0])
    r = compare(got, want, 1e-4)
    assert not r["ok"]
    assert r["max_abs"] == pytest.approx(3e-4, rel=1e-3)
    assert "exceeds tolerance 0.0001" in r["reason"]


def test_nan_where_the_reference_is_finite_fails():
    r = compare(torch.tensor([1.0, float("nan")]), torch.tensor([1.0, 2.0]), 1e-4)
    assert not r["ok"]
    assert r["nonfinite"] == 1
    assert "NaN/Inf values where the reference is finite" in r["reason"]


def test_matching_nan_and_inf_pass_and_a_wrong_inf_fails():
    want = torch.tensor([float("nan"), float("inf"), 1.0])
    assert compare(want.clone(), want, 1e-4)["ok"]
    r = compare(torch.tensor([float("nan"), float("-inf"), 1.0]), want, 1e-4)
    assert not r["ok"] and "differ from the reference's" in r["reason"]


def test_shape_mismatch_fails_without_errors():
    r = compare(torch.zeros(2, 3), torch.zeros(3, 2), 1e-4)
    assert not r["ok"] and not r["shape_ok"]
    assert r["max_abs"] is None and "shape [2, 3], expected [3, 2]" in r["reason"]


def test_tolerances_by_dtype():
    assert tolerance_for(torch.float32, False) == 1e-4
    assert tolerance_for(torch.float32, True) == 1e-5
    assert tolerance_for(torch.float16, False) == 1e-2
    assert tolerance_for(torch.bfloat16, True) == 1e-2
    assert tolerance_for(torch.float64, False) == 1e-7
    assert tolerance_for(torch.int32, False) == 1e-4


def test_comparison_keys_are_the_declared_schema():
    r = compare(torch.ones(2), torch.ones(2), 1e-4)
    assert set(r) == schemas.fields(schemas.Comparison)
    assert not math.isnan(r["max_rel"])


def test_integer_results_are_exact_or_wrong():
    # argmax's positions: an index off by one fails even where atol + rtol * |index| would allow it.
    want = torch.tensor([20000, 3, 7], dtype=torch.int64)
    assert compare(want.clone(), want, 1e-4)["ok"]
    r = compare(torch.tensor([20001, 3, 7], dtype=torch.int64), want, 1e-4)
    assert not r["ok"] and r["reason"] == "1 of 3 integer values differ from the reference's"
    assert r["max_abs"] == 1.0
    r = compare(want.to(torch.int32), want, 1e-4)
    assert not r["ok"] and "dtype int32, expected int64" in r["reason"]


def test_a_wrong_integer_result_cannot_pass_as_closer_to_exact():
    from nova_worker.validate import judge_output
    want = torch.tensor([4, 5], dtype=torch.int64)
    ok, accepted, problem = judge_output(torch.tensor([4, 6]), want, want, 1e-4, match_eager=False)
    assert not ok and accepted == "" and "integer values differ" in problem
