"""The Ray lane (nova_worker/ray_lane.py) on a real Ray cluster of this machine: a head and worker nodes
on loopback, started by the test, each with logical GPUs (Ray's bookkeeping; no GPU is needed). Each
request goes through the lane's real entry point (`python -m nova_worker.ray_lane --address A --once`,
the process core starts), over the worker protocol. The evaluations are the protocol tests' commands
(`_where`, `_fail`, `_sleep`), which need no GPU but are scheduled as GPU tasks."""

import concurrent.futures
import json
import os
import subprocess
import sys
import time

import pytest

from nova_worker import PROTOCOL_VERSION

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # the test clusters report nothing anywhere
from ray.cluster_utils import Cluster  # noqa: E402 (packaging/requirements.txt)

PACKAGE_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "resources", "python"))
NODE = {"num_cpus": 2, "object_store_memory": 80 * 1024 * 1024}


def lane_call(address, cmd, args, budget_s=120, extra=(), cancel_after_s=None):
    """One request through `python -m nova_worker.ray_lane --once`, as core sends it: returns the
    messages after the hello (progress..., then the result or error) and the process's exit code."""
    env = dict(os.environ, PYTHONPATH=PACKAGE_DIR, PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.Popen([sys.executable, "-m", "nova_worker.ray_lane", "--address", address, *extra, "--once"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    hello = json.loads(proc.stdout.readline())
    assert hello["type"] == "hello" and hello["protocol"] == PROTOCOL_VERSION
    proc.stdin.write(json.dumps({"type": "request", "id": 1, "protocol": PROTOCOL_VERSION, "cmd": cmd,
                                 "args": args}) + "\n")
    proc.stdin.flush()
    messages = []
    if cancel_after_s is not None:  # core's cancel, as WorkerConnection sends it
        time.sleep(cancel_after_s)
        proc.stdin.write(json.dumps({"type": "cancel", "id": 1}) + "\n")
        proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        if not line:
            break
        messages.append(json.loads(line))
        if messages[-1]["type"] in ("result", "error"):
            break
    proc.stdin.close()
    rc = proc.wait(timeout=budget_s)
    return messages, rc, proc.stderr.read()


@pytest.fixture(scope="module")
def cluster():
    """A head with one logical GPU and two worker nodes with one each."""
    c = Cluster(initialize_head=True, head_node_args=dict(NODE, num_gpus=1))
    workers = [c.add_node(**NODE, num_gpus=1) for _ in range(2)]
    c.wait_for_nodes()
    yield c, workers
    c.shutdown()


def test_a_gpu_command_runs_as_a_task_with_one_gpu_and_says_where(cluster):
    c, _ = cluster
    messages, rc, err = lane_call(c.address, "_where", {"label": "v1"})
    assert rc == 0, err
    assert messages[0]["type"] == "progress" and "queued on the Ray cluster at" in messages[0]["message"]
    result = messages[-1]
    assert result["type"] == "result", messages
    assert result["result"]["label"] == "v1"
    placement = result["result"]["ray"]
    assert placement["address"] == c.address
    assert len(placement["gpu_ids"]) == 1  # one GPU asked for, one given
    assert result["result"]["cuda_visible_devices"] == placement["gpu_ids"][0]  # Ray narrowed the devices
    assert placement["pid"] != os.getpid() and placement["pid"] == result["result"]["pid"]
    assert result["result"]["environment"]["ray"] == placement  # stored with the result


def test_each_evaluation_gets_a_process_of_its_own(cluster):
    """Ray reuses worker processes unless told not to: a GPU task's process must not serve another
    (its CUDA context, a crash or a leak would reach the next evaluation)."""
    c, _ = cluster
    pids = []
    for i in range(4):  # one after another: some land on a node that ran one before
        messages, rc, err = lane_call(c.address, "_where", {"label": f"v{i}"})
        assert messages[-1]["type"] == "result", (messages, err)
        pids.append((messages[-1]["result"]["ray"]["node_id"], messages[-1]["result"]["pid"]))
    assert len(set(pids)) == 4, pids


def test_a_worker_error_on_a_node_comes_back_with_its_kind_and_names_the_node(cluster):
    c, _ = cluster
    messages, rc, err = lane_call(c.address, "_fail", {"kind": "user_error", "message": "bad model", "file": "m.py",
                                                       "line": 7})
    error = messages[-1]
    assert error["type"] == "error", messages
    assert error["error"]["kind"] == "user_error"
    assert error["error"]["message"].startswith("bad model (on the Ray node ")
    assert (error["error"]["file"], error["error"]["line"]) == ("m.py", 7)


def test_a_process_that_crashes_every_time_is_reported_after_the_retries(cluster):
    """Ray cannot tell a crashing kernel from a lost node: the task is tried three times, then the
    evaluation fails with a sentence that says both."""
    c, _ = cluster
    messages, rc, err = lane_call(c.address, "_crash", {})
    error = messages[-1]
    assert error["type"] == "error", messages
    assert "_crash on the Ray cluster at" in error["error"]["message"]
    assert "was lost 3 times (its worker process or its node died each time" in error["error"]["message"]


def test_commands_that_need_no_gpu_run_in_the_lane_itself(cluster):
    c, _ = cluster
    messages, rc, err = lane_call(c.address, "ping", {})
    assert messages[-1]["type"] == "result" and "ray" not in messages[-1]["result"]


def test_a_cancel_ends_the_task_and_frees_its_gpu(cluster):
    c, _ = cluster
    started = time.monotonic()
    messages, rc, err = lane_call(c.address, "_sleep", {"seconds": 120}, cancel_after_s=5)
    assert messages[-1]["type"] == "error" and messages[-1]["error"]["kind"] == "cancelled", messages
    assert time.monotonic() - started < 60
    # the GPU is free again: three evaluations at once still run on the three GPUs
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        outs = list(pool.map(lambda i: lane_call(c.address, "_where", {"label": i}, budget_s=120), range(3)))
    assert all(m[-1]["type"] == "result" for m, _, _ in outs), outs


def test_an_unreachable_head_is_an_error_naming_the_address():
    messages, rc, err = lane_call("127.0.0.1:1", "_where", {}, budget_s=120)
    error = messages[-1]
    assert error["type"] == "error", messages
    assert error["error"]["kind"] == "user_error"
    assert "cannot reach the Ray cluster at 127.0.0.1:1" in error["error"]["message"]


def test_a_gpu_kind_the_cluster_lacks_is_refused(cluster):
    c, _ = cluster
    messages, rc, err = lane_call(c.address, "_where", {}, extra=("--accelerator", "H200"))
    error = messages[-1]
    assert error["type"] == "error" and "has no H200 GPU" in error["error"]["message"], messages


def test_describe_counts_the_gpus_and_nodes(cluster):
    c, _ = cluster
    env = dict(os.environ, PYTHONPATH=PACKAGE_DIR)
    out = subprocess.run([sys.executable, "-m", "nova_worker.ray_lane", "--address", c.address, "--describe"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["gpus"] == 3 and len([n for n in d["nodes"] if n["alive"]]) == 3


def wait_for_marks(mark_dir, count, budget_s=120):
    until = time.monotonic() + budget_s
    while time.monotonic() < until:
        marks = os.listdir(mark_dir)
        if len(marks) >= count:
            return marks
        time.sleep(0.2)
    raise AssertionError(f"only {os.listdir(mark_dir)} started within {budget_s} s")


def test_a_node_killed_mid_run_loses_no_evaluation_and_none_comes_back_twice(tmp_path):
    """Six evaluations of 8 s on three nodes of one logical GPU each; a worker node is killed while it
    runs one. That evaluation runs again on a node alive, and every evaluation comes back exactly once."""
    c = Cluster(initialize_head=True, head_node_args=dict(NODE, num_gpus=1))
    victim = c.add_node(**NODE, num_gpus=1)
    c.add_node(**NODE, num_gpus=1)
    c.wait_for_nodes()
    try:
        labels = [f"v{i}" for i in range(6)]
        with concurrent.futures.ThreadPoolExecutor(len(labels)) as pool:
            futures = {label: pool.submit(lane_call, c.address, "_where",
                                          {"label": label, "seconds": 8, "mark_dir": str(tmp_path)}, 300)
                       for label in labels}
            marks = wait_for_marks(tmp_path, 3)  # the first three run, one on each node
            dead = victim.node_id
            on_victim = [m.split(".")[0] for m in marks if m.endswith("." + dead)]
            assert len(on_victim) == 1, marks
            c.remove_node(victim, allow_graceful=False)
            outcomes = {label: f.result(timeout=300) for label, f in futures.items()}
        results = {}
        for label, (messages, rc, err) in outcomes.items():
            finals = [m for m in messages if m["type"] in ("result", "error")]
            assert len(finals) == 1, (label, messages, err)
            assert finals[0]["type"] == "result", (label, finals[0], err)
            results[label] = finals[0]["result"]
        assert sorted(r["label"] for r in results.values()) == labels  # each exactly once
        assert all(r["ray"]["node_id"] != dead for r in results.values())
        # the one the dead node was running ran again: started twice, answered once
        assert len([m for m in os.listdir(tmp_path) if m.startswith(on_victim[0] + ".")]) == 2
    finally:
        c.shutdown()


def test_a_lost_head_ends_the_evaluation_with_an_error_that_says_so(tmp_path):
    c = Cluster(initialize_head=True, head_node_args=dict(NODE, num_gpus=1))
    c.wait_for_nodes()
    address = c.address
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(lane_call, address, "_where", {"label": "v0", "seconds": 120,
                                                               "mark_dir": str(tmp_path)}, 300)
        wait_for_marks(tmp_path, 1)
        c.shutdown()
        messages, rc, err = future.result(timeout=300)
    error = messages[-1]
    assert error["type"] == "error", messages
    assert f"lost the connection to the Ray cluster at {address} while _where ran" in error["error"]["message"]
