"""A worker lane on a Ray cluster: `python -m nova_worker.ray_lane --address ADDRESS [--once]`.

It speaks the worker protocol to core exactly as `python -m nova_worker` does (server.py: the hello,
requests, progress, cancel, errors), so core's ChildProcessWorkerRunner needs nothing else. A GPU
command that carries contents only (validate, bench, evaluate) becomes a Ray task that asks for one GPU:
it runs on whichever node has one free, in a fresh worker process (max_calls=1: Ray would reuse one), with
the same worker code (this package, sent to the cluster as content in the task's runtime_env) and a
private work folder of its own on that node. Every other command runs here, as the local worker runs
it. Requests carry contents (model source, candidate, cubin), never paths of this machine.

Faults: a node that dies mid-task (or a worker process that dies) makes Ray run the task again on
another node, up to RETRIES more times, and only one answer comes back, so core stores one result;
when every try is lost, the request ends with an error that says so, as it does at once when the
connection to the head is lost. A request cancelled by core (or
over its budget) cancels its task (the process is ended). A Ray head that cannot be reached is an
error naming the address, at once. Results say where they ran: "ray": {"address", "host", "node_id",
"gpu_ids", "accelerator"}, also in each environment record of the result (validation, benchmark,
model check), beside what the worker recorded there (the host, the GPU).

Consistency: results are compared only between GPUs of one kind. When the cluster has GPUs of several
kinds (Ray's accelerator_type resources), the lane refuses to run until one is chosen
(--accelerator KIND), and then asks Ray for that kind only.

`python -m nova_worker.ray_lane --address ADDRESS --describe` prints the cluster's nodes, GPUs and
kinds as JSON (`nova optimize --ray` sizes its lanes with it).
"""

import json
import os
import shutil
import sys
import tempfile
import time
import traceback

from . import server
from .protocol import BAD_REQUEST, INTERNAL, USER_ERROR, Cancelled, WorkerFailure, json_safe

# Commands that run on a GPU of the cluster: those that carry contents only (sources, the candidate, its
# cubin). Profiling stays here (its CUPTI tracer is a library of this machine's build), as does the
# whole-model check (it loads a package installed into this machine's project). The "_" commands are the
# protocol tests' (selftest.py): with them a test drives the lane on logical GPUs.
GPU_COMMANDS = {"validate", "bench", "evaluate", "_sleep", "_fail", "_crash", "_where"}
RETRIES = 2  # further tries of a task whose node or process was lost
POLL_S = 0.2
NAMESPACE = "nova"


class _NodeProgress:
    """`progress` for a command running in a Ray task: messages stay on the node (core sees the lane's
    own); a cancel ends the task's process (ray.cancel with force), so there is nothing to check."""

    cancelled = False

    def check(self):
        pass

    def __call__(self, message, fraction=None):
        pass


def run_on_node(cmd, args):
    """The body of a Ray task: runs one worker command here, in a private work folder, and returns
    {"result": ...} or {"error": ErrorInfo}, with "placement"."""
    import ray

    context = ray.get_runtime_context()
    placement = {"host": os.uname().nodename, "node_id": context.get_node_id(),
                 "gpu_ids": [str(g) for g in ray.get_gpu_ids()], "pid": os.getpid()}
    work = tempfile.mkdtemp(prefix="nova-ray-")
    args = dict(args)
    args["work_dir"] = work
    if "build_dir" in args:  # a full-path extension is built where the GPU is
        args["build_dir"] = os.path.join(work, "extensions")
    try:
        handler = server.COMMANDS.get(cmd)
        if handler is None:
            raise WorkerFailure(BAD_REQUEST, f"unknown command '{cmd}' on the Ray node {placement['host']}")
        return {"result": json_safe(handler(args, _NodeProgress())), "placement": placement}
    except WorkerFailure as failure:
        return {"error": failure.to_json(), "placement": placement}
    except Exception as exc:  # as server.handle says it: the message, and the traceback apart
        return {"error": WorkerFailure(INTERNAL, f"{type(exc).__name__}: {exc}", traceback.format_exc()).to_json(),
                "placement": placement}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _reachable(address):
    """A head that is not there is refused here at once (ray.init would wait for it for minutes)."""
    import socket
    host, _, port = address.rpartition(":")
    if address == "auto" or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=10).close()
    except OSError as exc:
        raise WorkerFailure(USER_ERROR, f"cannot reach the Ray cluster at {address}: {exc}") from None


def _ray():
    try:
        import ray
    except ImportError as exc:
        raise WorkerFailure(USER_ERROR, f"--ray needs the ray package in the workers' Python ({exc}); "
                                        "install it with packaging/setup-deps.sh") from None
    return ray


def _init(address, **extra):
    ray = _ray()
    _reachable(address)
    try:
        ray.init(address=address, namespace=NAMESPACE, log_to_driver=False, logging_level="ERROR",
                 configure_logging=False, **extra)
    except Exception as exc:  # ConnectionError, or Ray's own on a bad address
        raise WorkerFailure(USER_ERROR, f"cannot reach the Ray cluster at {address}: "
                                        f"{type(exc).__name__}: {exc}") from None


def _check_kind(address, kinds, accelerator):
    """Results are compared only on one kind of GPU: several kinds need a choice, and a choice must exist."""
    if accelerator is None and len(kinds) > 1:
        raise WorkerFailure(USER_ERROR, f"the Ray cluster at {address} has GPUs of several kinds "
                                        f"({', '.join(kinds)}); results are compared only on one kind: "
                                        "choose one (--ray-gpu-kind)")
    if accelerator is not None and accelerator not in kinds:
        raise WorkerFailure(USER_ERROR, f"the Ray cluster at {address} has no {accelerator} GPU "
                                        f"(it has {', '.join(kinds) or 'no GPU of a known kind'})")


def _package_dir():
    return os.path.dirname(os.path.abspath(__file__))


class RayLane:
    """One connection to a Ray cluster; `handler(cmd)` is a command of the worker's table that runs the
    command as a Ray task with one GPU."""

    def __init__(self, address, accelerator=None, retries=RETRIES):
        self.address = address
        self.accelerator = accelerator
        self.retries = retries
        self._remote = None

    def connect(self):
        if self._remote is not None:
            return
        ray = _ray()
        _init(self.address, runtime_env={"py_modules": [_package_dir()]})
        kinds = accelerator_kinds(ray.cluster_resources())
        _check_kind(self.address, kinds, self.accelerator)
        # max_calls 1: a process per task, as the local worker has one per evaluation (CUDA state, a crash,
        # a leak never reach the next evaluation, and CUDA_VISIBLE_DEVICES is the one Ray gave).
        options = {"num_gpus": 1, "num_cpus": 1, "max_retries": self.retries, "retry_exceptions": False}
        if self.accelerator is not None:
            options["accelerator_type"] = self.accelerator
        self._remote = ray.remote(max_calls=1)(run_on_node).options(**options)
        self._kind = self.accelerator or (kinds[0] if kinds else None)

    def run(self, cmd, args, progress):
        import ray
        from ray import exceptions as rx

        self.connect()
        ref = self._remote.remote(cmd, {k: v for k, v in args.items() if k != "cuda_visible_devices"})
        progress(f"queued on the Ray cluster at {self.address} (one GPU)", None)
        try:
            while True:
                ready, _ = ray.wait([ref], timeout=POLL_S)
                if ready:
                    break
                if progress.cancelled:
                    ray.cancel(ref, force=True)
                    raise Cancelled()
            out = ray.get(ref)
        except rx.TaskCancelledError as exc:
            raise Cancelled() from exc
        except (rx.WorkerCrashedError, rx.NodeDiedError, rx.ObjectLostError, rx.OwnerDiedError) as exc:
            raise WorkerFailure(INTERNAL, f"{cmd} on the Ray cluster at {self.address} was lost {self.retries + 1} "
                                          f"times (its worker process or its node died each time: a candidate that crashes the "
                                          f"process, or nodes lost): "
                                          f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") \
                from None
        except rx.RayTaskError as exc:  # the task's own code failed outside the worker's handling
            raise WorkerFailure(INTERNAL, f"{cmd} failed on the Ray cluster at {self.address}: {exc}") from None
        except rx.RayError as exc:  # the head or this machine's raylet went away: the task's fate is unknown
            raise WorkerFailure(INTERNAL, f"lost the connection to the Ray cluster at {self.address} while {cmd} ran "
                                          f"({type(exc).__name__}): it did not finish; run it again when the "
                                          "cluster is back") from None
        placement = dict(out.get("placement", {}), address=self.address, accelerator=self._kind)
        if "error" in out:
            e = out["error"]
            raise WorkerFailure(e.get("kind", INTERNAL),
                                f"{e.get('message', '')} (on the Ray node {placement.get('host', '?')})",
                                e.get("traceback", ""), e.get("file", ""), int(e.get("line", 0) or 0))
        result = out.get("result")
        if isinstance(result, dict):
            result["ray"] = placement
            # Each stored result keeps where it ran, in its environment beside the worker's record.
            for part in (result, result.get("validation"), result.get("benchmark")):
                if isinstance(part, dict) and isinstance(part.get("environment"), dict):
                    part["environment"]["ray"] = placement
        return result

    def handler(self, cmd):
        return lambda args, progress: self.run(cmd, args, progress)


def accelerator_kinds(resources):
    """The GPU kinds among a cluster's resources ({"accelerator_type:H100": 1.0, ...}), sorted."""
    prefix = "accelerator_type:"
    return sorted(k[len(prefix):] for k in resources if k.startswith(prefix))


def commands_for(lane, local=None):
    """The worker's command table with the GPU commands sent to `lane`; the others run here."""
    local = server.COMMANDS if local is None else local
    return {name: (lane.handler(name) if name in GPU_COMMANDS else handler) for name, handler in local.items()}


def probe(args, progress):
    """What a task with one GPU sees: the device's name, architecture and multiprocessors, or why none."""
    try:
        import torch
    except ImportError as exc:
        return {"note": f"no torch on the node ({exc})"}
    if not torch.cuda.is_available():
        return {"note": f"no CUDA device (CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r})"}
    p = torch.cuda.get_device_properties(0)
    return {"name": p.name, "arch": f"sm_{p.major}{p.minor}", "sm_count": p.multi_processor_count}


def describe(address, accelerator=None, probe_budget_s=240):
    """The cluster as core sizes its lanes: {"address", "gpus", "kinds", "nodes": [{host, alive, gpus}],
    "probe": {"name", "arch", "sm_count"} or {"note"}} (the probe runs on one GPU of the kind used)."""
    ray = _ray()
    _init(address, runtime_env={"py_modules": [_package_dir()]})
    resources = ray.cluster_resources()
    kinds = accelerator_kinds(resources)
    _check_kind(address, kinds, accelerator)
    raw = ray.nodes()
    nodes = [{"host": n.get("NodeManagerHostname", "?"), "alive": bool(n.get("Alive")),
              "gpus": n.get("Resources", {}).get("GPU", 0)} for n in raw]
    out = {"address": address, "gpus": int(resources.get("GPU", 0)), "kinds": kinds, "nodes": nodes}
    if accelerator is not None:  # only the GPUs of that kind
        out["gpus"] = int(sum(n.get("Resources", {}).get("GPU", 0) for n in raw
                              if n.get("Alive") and f"accelerator_type:{accelerator}" in n.get("Resources", {})))
    if out["gpus"] < 1:
        out["probe"] = {"note": "the cluster has no GPU"}
        return out
    options = {"num_gpus": 1, "num_cpus": 1}
    if accelerator is not None:
        options["accelerator_type"] = accelerator
    ref = ray.remote(max_calls=1)(lambda: probe({}, None)).options(**options).remote()
    ready, _ = ray.wait([ref], timeout=probe_budget_s)
    if not ready:
        ray.cancel(ref, force=True)
        out["probe"] = {"note": f"no GPU of the cluster took the probe within {probe_budget_s} s"}
    else:
        out["probe"] = ray.get(ref)
    return out


def _usage():
    return "usage: python -m nova_worker.ray_lane --address ADDRESS [--accelerator KIND] [--once [--preload]] | " \
           "--address ADDRESS --describe"


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    began = time.monotonic()
    address = accelerator = None
    rest = []
    while argv:
        a = argv.pop(0)
        if a in ("--address", "--accelerator") and argv:
            value = argv.pop(0)
            if a == "--address":
                address = value
            else:
                accelerator = value
        else:
            rest.append(a)
    if not address:
        print(_usage(), file=sys.stderr)
        return 2
    if "--describe" in rest:
        try:
            print(json.dumps(describe(address, accelerator)))
        except WorkerFailure as failure:
            print(failure.message, file=sys.stderr)
            return 1
        return 0
    lane = RayLane(address, accelerator)
    # --preload: connect before the hello, as the local standby imports torch ahead (a failure to
    # connect is reported to the request that comes).
    if any(a == "--preload" or a.startswith("--preload=") for a in rest):
        try:
            lane.connect()
        except WorkerFailure:
            pass
    return server.main([a for a in rest if a == "--once" or a.startswith("--preload")], began=began,
                       commands=commands_for(lane), preload_imports=lambda profile: None)


if __name__ == "__main__":
    sys.exit(main())
