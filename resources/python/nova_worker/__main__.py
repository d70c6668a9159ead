"""Entry point: `python -m nova_worker`. Sends the hello line, then serves requests one at a time
from a dispatch table until `shutdown` or end of input."""

import json
import os
import signal
import sys
import time
import traceback

from . import PROTOCOL_VERSION, env_info
from .protocol import Channel, WorkerFailure


def _ping(args, progress):
    return {"pong": True, "pid": os.getpid()}


def _intake(args, progress):
    from .intake import run_intake  # imports torch: only when needed
    return run_intake(args, progress)


def _lazy(module, function):
    """A handler that imports its stage (and torch) only when first called."""
    def handler(args, progress):
        import importlib
        return getattr(importlib.import_module(f"nova_worker.{module}"), function)(args, progress)
    return handler


def _crash(args, progress):
    # Test-only: how core sees a worker that dies in native code.
    progress("crashing on purpose")
    os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(5)
    return {}


def _sleep(args, progress):
    # Test-only: a request that outlives its timeout.
    progress("sleeping")
    time.sleep(float(args.get("seconds", 60)))
    return {"slept": True}


def _echo_print(args, progress):
    # Test-only: user code printing to stdout must not reach the protocol stream.
    print(args.get("text", "hello from user code"))
    os.write(1, b"raw write to fd 1\n")
    return {"printed": True}


# name -> handler(args, progress) -> result dict. New stages (profile, validate, bench) add a row.
COMMANDS = {
    "ping": _ping,
    "intake": _intake,
    "validate": _lazy("validate", "validate"),
    "bench": _lazy("bench", "bench"),
    "evaluate": _lazy("evaluate", "evaluate"),
    "build_ext": _lazy("build_ext", "build_ext"),
    "profile": _lazy("profile", "profile"),
    "_crash": _crash,
    "_sleep": _sleep,
    "_print": _echo_print,
}


def serve(channel):
    while True:
        try:
            request = channel.read_request()
        except json.JSONDecodeError as exc:
            channel.send({"id": None, "type": "error",
                          "error": WorkerFailure("bad_request", f"request is not JSON: {exc}").to_json()})
            continue
        if request is None:
            return
        rid = request.get("id")
        cmd = request.get("cmd", "")
        if cmd == "shutdown":
            channel.send({"id": rid, "type": "result", "result": {"bye": True}})
            return
        handler = COMMANDS.get(cmd)
        try:
            if handler is None:
                raise WorkerFailure("bad_request", f"unknown command '{cmd}'")
            result = handler(request.get("args") or {},
                             lambda message, fraction=None: channel.progress(rid, message, fraction))
            channel.send({"id": rid, "type": "result", "result": result})
        except WorkerFailure as failure:
            channel.send({"id": rid, "type": "error", "error": failure.to_json()})
        except Exception as exc:  # a bug in the worker itself
            traceback.print_exc()
            failure = WorkerFailure("internal", f"{type(exc).__name__}: {exc}", traceback.format_exc())
            channel.send({"id": rid, "type": "error", "error": failure.to_json()})
        sys.stderr.flush()


def main():
    channel = Channel()
    hello = {"type": "hello", "protocol": PROTOCOL_VERSION, "pid": os.getpid(),
             "commands": sorted(c for c in COMMANDS if not c.startswith("_"))}
    hello.update(env_info.collect())
    channel.send(hello)
    serve(channel)


if __name__ == "__main__":
    main()
