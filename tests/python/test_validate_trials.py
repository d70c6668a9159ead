"""The whole validation loop (every trial, the second shape, the verdict) on the CPU, with a Python
function standing in for the compiled candidate: what reached the H200 broken once (the second
trial failed for every candidate because a variable of the loop was rebound)."""

import textwrap

import pytest

torch = pytest.importorskip("torch")
from nova_worker import candidates, validate  # noqa: E402

GROUP = textwrap.dedent("""
    import torch

    def module_fn(x, bias):
        return torch.clamp(x * torch.sigmoid(x) + bias, -1.0, 1.0)

    def get_inputs():
        return [torch.randn(16, 64), torch.randn(64)]
""")


def _run(tmp_path, monkeypatch, fn, trials=3, match_eager=False):
    ref = tmp_path / "group.py"
    ref.write_text(GROUP)
    monkeypatch.setattr(candidates, "load",
                        lambda args, device="cuda": candidates.LoadedCandidate(fn, "fast", 0.0))
    args = {"device": "cpu", "reference": str(ref), "trials": trials, "match_eager": match_eager,
            "work_dir": str(tmp_path / "work")}
    return validate.validate(args, lambda *a, **k: None)


def test_a_correct_candidate_passes_every_trial_and_the_second_shape(tmp_path, monkeypatch):
    result = _run(tmp_path, monkeypatch, lambda x, b: torch.clamp(x * torch.sigmoid(x) + b, -1.0, 1.0))
    assert result["passed"], result["failures"]
    assert [t["seed"] for t in result["trials"]] == [1234, 1235, 1236]
    assert all(t["ok"] for t in result["trials"])
    second = next(c for c in result["checks"] if c["name"] == "second_shape")
    assert second["passed"] and "batch 32" in second["detail"]


def test_a_wrong_candidate_fails_with_the_output_named(tmp_path, monkeypatch):
    result = _run(tmp_path, monkeypatch, lambda x, b: torch.clamp(x + b, -1.0, 1.0))
    assert not result["passed"]
    assert len(result["trials"]) == 3
    assert any(p.startswith("output 0: ") and "tolerance" in p for p in result["failures"]), result["failures"]


def test_a_hard_coded_batch_is_caught_by_the_second_shape(tmp_path, monkeypatch):
    def fixed(x, b):
        y = torch.clamp(x * torch.sigmoid(x) + b, -1.0, 1.0)
        return y if x.shape[0] == 16 else torch.zeros_like(y)
    result = _run(tmp_path, monkeypatch, fixed)
    assert not result["passed"]
    assert any("wrong at batch 32" in f for f in result["failures"]), result["failures"]
