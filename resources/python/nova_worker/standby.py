"""A worker started ahead of its job: `python -m nova_worker.standby` imports torch (and
torch.compile's stack) while nothing waits for it, says {"type": "ready"} on stdout, then reads
one line from stdin, {"cmd": "evaluate", "args": "ARGS.json"}, and runs that one command exactly
as `python -m nova_worker.<cmd> ARGS.json` would, then exits. One process per command as before
(a crashing candidate still takes only its own worker with it); only the start is paid early.
CUDA is not touched before the command arrives, so a standby waiting beside a benchmark does not
disturb the GPU. An empty line or end of input: exit without running anything."""

import importlib
import json
import os
import sys
import time

COMMANDS = ("validate", "bench", "evaluate", "build_ext")


def main():
    began = time.monotonic()
    import torch  # noqa: F401  the slow part of a worker's start
    import torch._dynamo  # noqa: F401  what torch.compile imports on first use (the compile baseline)
    import torch._inductor.compile_fx  # noqa: F401
    from . import candidates

    ready = time.monotonic()
    print(json.dumps({"type": "ready", "pid": os.getpid()}), flush=True)
    line = sys.stdin.readline()
    received, received_at = time.monotonic(), time.time()
    if not line.strip():
        return 0
    request = json.loads(line)
    cmd = request.get("cmd")
    if cmd not in COMMANDS:
        print(json.dumps({"type": "error", "error": {"kind": "bad_request",
                                                     "message": f"standby worker: unknown command {cmd!r}"}}),
              flush=True)
        return 2
    module = importlib.import_module(f"nova_worker.{cmd}")
    # Timings only: imports before ready, waiting for the command, and the moments it came.
    process = {"import": ready - began, "idle": received - ready, "received": received,
               "received_at": received_at, "ready_at": received_at - (received - ready)}
    return candidates.run_standalone(getattr(module, cmd), [f"nova_worker.{cmd}", request["args"]], process)


if __name__ == "__main__":
    sys.exit(main())
