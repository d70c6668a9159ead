"""Commands for the tests of the protocol (C++ and pytest): a worker that crashes in native code,
one that sleeps (honouring cancel at its safe points, or not), one whose user code prints to
stdout, one that fails with a chosen error kind, and one that says where it ran. Not announced in
the hello."""

import os
import sys
import signal
import time

from .protocol import WorkerFailure


def crash(args, progress):
    """How core sees a worker that dies in native code."""
    progress("crashing on purpose")
    os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(5)
    return {}


def sleep(args, progress):
    """A request that outlives its timeout. args: {"seconds": 60, "honour_cancel": true}: with
    honour_cancel false it never reaches a safe point, so core has to end the process."""
    progress("sleeping")
    end = time.monotonic() + float(args.get("seconds", 60))
    honour = bool(args.get("honour_cancel", True))
    while time.monotonic() < end:
        if honour:
            progress.check()
        time.sleep(0.02)
    return {"slept": True}


def echo_print(args, progress):
    """User code printing to stdout must not reach the protocol stream."""
    print(args.get("text", "hello from user code"))
    os.write(1, b"raw write to fd 1\n")
    return {"printed": True}


def fail(args, progress):
    """Fails as the arguments say: {"kind", "message", "file", "line"}."""
    raise WorkerFailure(args.get("kind", "internal"), args.get("message", "failing on purpose"),
                        args.get("traceback", ""), args.get("file", ""), int(args.get("line", 0)))


def where(args, progress):
    """Where a command ran, for the Ray lane's tests: host, pid and the GPUs Ray gave it, after `seconds`.
    With `mark_dir` (in a Ray task), it first leaves an empty file LABEL.NODE_ID there (tests see which
    node runs what). With `modules` (names), which of them the process has imported (a standby's
    preload)."""
    if args.get("mark_dir"):
        import ray
        node = ray.get_runtime_context().get_node_id()
        open(os.path.join(args["mark_dir"], f"{args.get('label')}.{node}"), "w").close()
    time.sleep(float(args.get("seconds", 0)))
    return {"host": os.uname().nodename, "pid": os.getpid(), "label": args.get("label"),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "environment": {"host": os.uname().nodename},
            "imported": {m: m in sys.modules for m in args.get("modules", [])}}
