"""The tolerance policy (docs/VERIFY.md): a candidate passes within tolerance of eager, or when on
every element its error against the float64 reference is no larger than eager's own (the tolerance
as a floor); --match-eager keeps the first rule alone."""

import pytest

torch = pytest.importorskip("torch")
from nova_worker.validate import CLOSER_FLAG, closer_to_exact, judge_output  # noqa: E402


def _gemm(k=4096, seed=0):
    """A float32 GEMM row as eager computes it, the float64 truth, and the truth rounded to float32:
    the most accurate float32 answer there is (what a 3xTF32 kernel approaches)."""
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(64, k, generator=g) * 100
    b = torch.randn(k, 64, generator=g)
    exact = a.double() @ b.double()
    eager = a @ b
    rounded = exact.float()
    return eager, exact, rounded


def test_within_tolerance_of_eager_is_the_first_rule():
    eager, exact, _ = _gemm()
    ok, accepted, problem = judge_output(eager.clone(), eager, exact, 1e-4, match_eager=False)
    assert ok and accepted == "within_tolerance_of_eager" and problem == ""


def test_a_result_closer_to_float64_than_eager_passes_by_the_second_rule_only():
    eager, exact, rounded = _gemm()
    # Shift eager away from the truth so that the better answer differs from eager beyond 1e-4.
    biased_eager = eager + 0.05
    ok, accepted, problem = judge_output(rounded, biased_eager, exact, 1e-4, match_eager=False)
    assert ok, problem
    assert accepted == "closer_to_exact_than_eager"
    strict_ok, strict_accepted, strict_problem = judge_output(rounded, biased_eager, exact, 1e-4, match_eager=True)
    assert not strict_ok and strict_accepted == ""
    assert "exceeds tolerance" in strict_problem


def test_a_result_further_from_float64_than_eager_fails_with_both_reasons():
    eager, exact, _ = _gemm()
    worse = eager + 0.05
    ok, accepted, problem = judge_output(worse, eager, exact, 1e-4, match_eager=False)
    assert not ok and accepted == ""
    assert "exceeds tolerance" in problem
    assert "not closer to exact than eager" in problem
    assert "further from the float64 reference than eager" in problem


def test_one_worse_element_is_enough_to_fail_the_second_rule():
    exact = torch.linspace(-1, 1, 1000, dtype=torch.float64)
    eager = (exact + 1e-3).float()          # eager is off by 1e-3 everywhere
    cand = exact.float().clone()             # the candidate is exact ...
    cand[500] = float(exact[500]) + 5e-3     # ... except one element, worse than eager there
    r = closer_to_exact(cand, eager, exact, 1e-4)
    assert not r["ok"] and r["worse_elements"] == 1
    cand[500] = float(exact[500])
    assert closer_to_exact(cand, eager, exact, 1e-4)["ok"]


def test_the_tolerance_is_a_floor_where_eager_is_exact():
    exact = torch.ones(8, dtype=torch.float64)
    eager = exact.float()                    # eager exact: its error is 0 everywhere
    cand = eager + 1e-5                      # within atol + rtol*|x| = 2e-4
    assert closer_to_exact(cand, eager, exact, 1e-4)["ok"]


def test_nan_where_the_truth_is_finite_fails_the_second_rule_too():
    exact = torch.ones(4, dtype=torch.float64)
    eager = exact.float() + 1.0
    cand = exact.float().clone()
    cand[2] = float("nan")
    ok, _, problem = judge_output(cand, eager, exact, 1e-4, match_eager=False)
    assert not ok
    assert "NaN/Inf" in problem


def test_the_flag_says_what_the_label_means():
    assert CLOSER_FLAG.startswith("closer to exact than eager")
