"""packaging/ray-compare.py, which lines up the local lane's and the Ray lane's `nova optimize` selections
(packaging/ray-gpu.sh): on the recorded H100 selections of session 18, a run against itself agrees; a
group that shipped another version, or a ratio 10% off with its interval apart, does not; a model one run
has no selection for is named. Exit status 0 only when every group agrees."""

import copy
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "packaging", "ray-compare.py")
RECORDED = os.path.join(HERE, "..", "fixtures", "optimize", "h100_session18")


def recorded(model):
    path = os.path.join(RECORDED, f"{model}.json")
    assert os.path.isfile(path), f"missing fixture {path}"
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def compare(tmp_path, local, ray, models):
    for name, runs in (("local", local), ("ray", ray)):
        (tmp_path / name).mkdir(exist_ok=True)
        for model, data in runs.items():
            (tmp_path / name / f"{model}.json").write_text(json.dumps(data))
    r = subprocess.run([sys.executable, SCRIPT, str(tmp_path / "local"), str(tmp_path / "ray"), *models],
                       capture_output=True, text=True, check=False)
    return r.returncode, r.stdout


def test_a_run_agrees_with_itself(tmp_path):
    mlp = recorded("mlp_block")
    code, out = compare(tmp_path, {"mlp_block": mlp}, {"mlp_block": mlp}, ["mlp_block"])
    assert code == 0, out
    assert "4 of 4 groups agree" in out
    assert "NVIDIA H100 80GB HBM3" in out


def test_another_version_or_a_ratio_apart_disagrees(tmp_path):
    mlp = recorded("mlp_block")
    other = copy.deepcopy(mlp)
    groups = other["selection"]["groups"]
    groups[0]["chosen_version"] = 99
    cold = groups[1]["cold_interval"]
    for key in ("ratio", "low", "high"):
        cold[key] *= 1.10
    code, out = compare(tmp_path, {"mlp_block": mlp}, {"mlp_block": other}, ["mlp_block"])
    assert code == 1
    assert "2 of 4 groups agree" in out
    rows = [line for line in out.splitlines() if line.startswith("mlp_block")]
    assert [row.split()[-1] for row in rows] == ["NO", "NO", "yes", "yes"]


def test_a_missing_selection_is_named(tmp_path):
    swish = recorded("swish_bias_clamp")
    code, out = compare(tmp_path, {"swish_bias_clamp": swish}, {}, ["swish_bias_clamp"])
    assert code == 1
    assert "no selection from the ray run" in out


RAY_SESSION22 = os.path.join(HERE, "..", "fixtures", "ray", "h100_session22")


def test_the_recorded_one_gpu_run_agrees_and_prints_what_it_printed_on_the_gpu_box():
    # Session 22 on an H100 (packaging/ray-gpu.sh): `nova optimize` on the local lane, then with --ray on a
    # Ray head of the same machine; the same verdicts, versions and ratios within their intervals.
    models = ["swish_bias_clamp", "matmul_scaling_residual_add"]
    r = subprocess.run([sys.executable, SCRIPT, os.path.join(RAY_SESSION22, "local"), os.path.join(RAY_SESSION22, "ray"),
                        *models], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(os.path.join(RAY_SESSION22, "compare.txt"), encoding="utf-8") as f:
        assert r.stdout == f.read()
    assert "2 of 2 groups agree" in r.stdout


def test_a_result_made_on_ray_names_the_cluster_node_and_gpu_it_ran_on():
    with open(os.path.join(RAY_SESSION22, "swish_bias_clamp.ray_environments.json"), encoding="utf-8") as f:
        environments = json.load(f)
    assert set(environments) == {"validation", "benchmark"}
    for kind, env in environments.items():
        ray = env["ray"]
        assert ray["address"] == "127.0.0.1:6390", kind
        assert ray["gpu_ids"] == ["0"] and ray["accelerator"] == "H100", kind
        assert len(ray["node_id"]) == 56 and ray["host"] == env["host"], kind
        assert env["gpu"] == "NVIDIA H100 80GB HBM3", kind
