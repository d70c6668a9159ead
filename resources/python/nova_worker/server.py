"""The worker's request loop: the hello, then requests served one at a time from the command table.

Two modes, one protocol (docs/WORKER_PROTOCOL.md):
  * persistent (`python -m nova_worker`): serves requests until a shutdown or the end of input;
  * once (`python -m nova_worker --once`): serves one request and exits without the interpreter's
    teardown of torch and CUDA (about 2 s per submission on the H200 box). With `--preload` it is
    the standby: torch and torch.compile's stack are imported before the hello, while nothing waits
    for it, and CUDA is not touched before the request comes. `--preload=intake` imports only what
    intake uses (torch and torch.export, not inductor): a session's first standby, which its intake
    waits for.
"""

import importlib
import os
import sys
import time
import traceback

from . import env_info, schemas
from .protocol import (BAD_REQUEST, CANCELLED, INTERNAL, PROTOCOL_VERSION, Cancelled, Channel, Progress,
                       WorkerFailure, parse_request)


def _lazy(module, function):
    """A handler that imports its stage (and torch) only when first called."""
    def handler(args, progress):
        return getattr(importlib.import_module(f"nova_worker.{module}"), function)(args, progress)
    return handler


def _ping(args, progress):
    return {"pong": True, "pid": os.getpid()}


# name -> handler(args, progress) -> result dict (schemas.py). Names starting with "_" are for tests
# (selftest.py) and are not announced in the hello.
COMMANDS = {
    "ping": _ping,
    "intake": _lazy("intake", "run_intake"),
    "validate": _lazy("validate", "validate"),
    "bench": _lazy("bench", "bench"),
    "evaluate": _lazy("evaluate", "evaluate"),
    "build_ext": _lazy("build_ext", "build_ext"),
    "profile": _lazy("profile", "run"),
    "model_check": _lazy("model_check", "model_check"),
    "render_report": _lazy("report", "render_report"),
    "_crash": _lazy("selftest", "crash"),
    "_sleep": _lazy("selftest", "sleep"),
    "_print": _lazy("selftest", "echo_print"),
    "_fail": _lazy("selftest", "fail"),
    "_where": _lazy("selftest", "where"),
}


PRELOADS = ("compile", "intake")  # `--preload` is "compile"


def preload(profile="compile"):
    """The slow part of a worker's start, done ahead by a standby. "compile": torch, and what
    torch.compile imports on first use (the compile baseline of validation and benchmarks).
    "intake": torch and what torch.export imports (torch._dynamo), not inductor, which intake never
    uses (about a third of the full preload: 1.8 of 6.1 s on the 2-core CI machine). CUDA is left
    alone."""
    import torch  # noqa: F401
    import torch._dynamo  # noqa: F401
    if profile == "intake":
        # What torch.export brings in on first use (on this CPU machine, 391 of the 407 modules an intake
        # imported after the above; session 24's later intakes took 1.3-2.7 s on the box without them).
        import torch._export  # noqa: F401
        import torch._functorch.aot_autograd  # noqa: F401
        import torch._functorch.partitioners  # noqa: F401
        import torch.export._trace  # noqa: F401
        from . import intake  # noqa: F401
        return
    import torch._inductor.compile_fx  # noqa: F401
    from . import candidates  # noqa: F401


def _preload_profile(argv):
    """None without --preload; "compile" for `--preload`; the profile of `--preload=P`."""
    profile = None
    for a in argv:
        if a == "--preload":
            profile = "compile"
        elif a.startswith("--preload="):
            profile = a.split("=", 1)[1]
    return profile


def hello(mode, with_devices=True, commands=COMMANDS) -> schemas.Hello:
    """A persistent worker reports torch and the devices; a one-shot worker only what it has
    imported (a standby: torch), leaving CUDA untouched."""
    message = {"type": "hello", "protocol": PROTOCOL_VERSION, "pid": os.getpid(), "mode": mode,
               "commands": sorted(c for c in commands if not c.startswith("_"))}
    message.update(env_info.collect(cuda=with_devices, with_torch=with_devices))
    return message


def _narrow_devices(args):
    """A request for one GPU lane (args["cuda_visible_devices"], sent to a standby started before the
    lane was known) sets CUDA_VISIBLE_DEVICES, which CUDA reads when it initialises: refused once CUDA
    is up with other devices."""
    wanted = args.pop("cuda_visible_devices", None) if isinstance(args, dict) else None
    if wanted is None or os.environ.get("CUDA_VISIBLE_DEVICES") == str(wanted):
        return
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        raise WorkerFailure(BAD_REQUEST, f"asked for device {wanted} after CUDA started with "
                                         f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r}")
    os.environ["CUDA_VISIBLE_DEVICES"] = str(wanted)


def handle(channel, message, commands=COMMANDS):
    """Runs one request; returns (request id, the result or error message to send)."""
    rid = message.get("id") if isinstance(message, dict) else None
    try:
        if isinstance(message, WorkerFailure):
            raise message
        rid, cmd, args = parse_request(message)
        handler = commands.get(cmd)
        if handler is None:
            raise WorkerFailure(BAD_REQUEST, f"unknown command '{cmd}' (this worker knows "
                                             f"{', '.join(sorted(c for c in commands if not c.startswith('_')))})")
        _narrow_devices(args)
        progress = Progress(channel, rid)
        progress.check()  # cancelled while it waited in the queue
        return rid, {"type": "result", "id": rid, "result": handler(args, progress)}
    except WorkerFailure as failure:
        return rid, {"type": "error", "id": rid, "error": failure.to_json()}
    except Cancelled:
        return rid, {"type": "error", "id": rid,
                     "error": WorkerFailure(CANCELLED, "cancelled at core's request").to_json()}
    except Exception as exc:  # a bug in the worker, or an environment it cannot work in
        traceback.print_exc()
        failure = WorkerFailure(INTERNAL, f"{type(exc).__name__}: {exc}", traceback.format_exc())
        return rid, {"type": "error", "id": rid, "error": failure.to_json()}
    finally:
        sys.stderr.flush()


def serve(channel, once=False, commands=COMMANDS, timings=None):
    """Serves requests until the end of input or a shutdown (once: after the first request).
    `timings` (once mode): {"began", "ready"} as time.monotonic(); a dict result then gets
    "process_s" (schemas.ProcessTimings)."""
    while True:
        message = channel.next_request()
        if message is None:
            return
        received, received_at = time.monotonic(), time.time()
        entered = time.monotonic()
        rid, reply = handle(channel, message, commands)
        if timings and reply["type"] == "result" and isinstance(reply["result"], dict):
            reply["result"]["process_s"] = {
                "import": timings["ready"] - timings["began"], "idle": received - timings["ready"],
                "ready_at": received_at - (received - timings["ready"]), "received_at": received_at,
                "start": entered - received, "run": time.monotonic() - entered, "finished_at": time.time()}
        channel.send(reply)
        channel.forget(rid)
        if once:
            return


def main(argv=None, began=None, commands=COMMANDS, preload_imports=preload):
    """`python -m nova_worker [--once [--preload[=compile|intake]]]`; `commands` and `preload_imports`
    (called with the profile): a table and imports of another worker (tests' workers)."""
    argv = sys.argv[1:] if argv is None else argv
    unknown = [a for a in argv if a not in ("--once", "--preload") + tuple(f"--preload={p}" for p in PRELOADS)]
    if unknown:
        print(f"usage: python -m nova_worker [--once [--preload[={'|'.join(PRELOADS)}]]] "
              f"(unknown: {' '.join(unknown)})", file=sys.stderr)
        return 2
    once, profile = "--once" in argv, _preload_profile(argv)
    began = time.monotonic() if began is None else began
    channel = Channel()
    if profile:
        preload_imports(profile)
    # A one-shot worker does not touch CUDA before its request (a standby waits beside benchmarks).
    channel.send(hello("once" if once else "persistent", with_devices=not once, commands=commands))
    ready = time.monotonic()
    channel.start()
    serve(channel, once=once, commands=commands, timings={"began": began, "ready": ready} if once else None)
    if once:
        # The answer is out and the GPU work behind it synchronized: leave without the teardown.
        sys.stderr.flush()
        os._exit(0)
    return 0
