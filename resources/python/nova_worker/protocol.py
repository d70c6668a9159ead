"""The worker's side of the worker protocol (version PROTOCOL_VERSION; docs/WORKER_PROTOCOL.md).

Line-delimited JSON. The worker says hello first; core then sends requests
{"type": "request", "id", "protocol", "cmd", "args"} and may send {"type": "cancel", "id"} or
{"type": "shutdown"}; the worker answers each request with progress messages and then exactly one
result or error, all carrying the request's id. Protocol lines go to a private duplicate of the
original stdout; fd 1 and sys.stdout are pointed at stderr so that prints of the user's model
(Python or C level) land in the job log instead of corrupting the protocol."""

import json
import math
import os
import queue
import sys
import threading

PROTOCOL_VERSION = 2

# The error kinds a worker reports (schemas.ErrorInfo["kind"]); core adds crash and timeout.
USER_ERROR, BAD_REQUEST, INTERNAL, CANCELLED = "user_error", "bad_request", "internal", "cancelled"
ERROR_KINDS = (USER_ERROR, BAD_REQUEST, INTERNAL, CANCELLED)


class WorkerFailure(Exception):
    """An error the worker reports to core as {"type": "error"}: kind is one of ERROR_KINDS
    ("user_error": the model's fault, with the user's own traceback and the file and line)."""

    def __init__(self, kind, message, traceback="", file="", line=0):
        if kind not in ERROR_KINDS:
            raise ValueError(f"unknown worker error kind {kind!r} ({', '.join(ERROR_KINDS)})")
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.traceback = traceback
        self.file = file
        self.line = line

    def to_json(self):
        """The error as schemas.ErrorInfo."""
        return {"kind": self.kind, "message": self.message, "traceback": self.traceback,
                "file": self.file, "line": self.line}


class Cancelled(BaseException):
    """Raised at a safe point (a progress call, or Progress.check()) once core cancelled the request.
    A BaseException, so that the stages' own `except Exception` clauses (a failed torch.compile
    baseline, a user error wrapper) never swallow it."""


def json_safe(value):
    """NaN and infinities as strings: JSON has no such numbers and core's parser refuses them."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def parse_request(message):
    """(id, cmd, args) of a request message; WorkerFailure("bad_request") naming what is wrong,
    including a request from a core that speaks another protocol version."""
    if not isinstance(message, dict):
        raise WorkerFailure(BAD_REQUEST, f"a request must be a JSON object, got {type(message).__name__}")
    if message.get("type") != "request":
        raise WorkerFailure(BAD_REQUEST, f"expected a message of type 'request', got {message.get('type')!r}")
    version = message.get("protocol")
    if version != PROTOCOL_VERSION:
        raise WorkerFailure(BAD_REQUEST, f"the request speaks worker protocol {version}, this worker speaks "
                                         f"protocol {PROTOCOL_VERSION}: core and nova_worker come from "
                                         "different Nova versions")
    cmd, args = message.get("cmd"), message.get("args", {})
    if not isinstance(cmd, str) or not cmd:
        raise WorkerFailure(BAD_REQUEST, "the request has no command ('cmd')")
    if not isinstance(args, dict):
        raise WorkerFailure(BAD_REQUEST, f"the arguments of '{cmd}' must be a JSON object")
    return message.get("id"), cmd, args


def require(args, key, kind=None):
    """args[key], or a bad_request naming the missing argument (of type `kind`, if given)."""
    if key not in args or args[key] is None:
        raise WorkerFailure(BAD_REQUEST, f"the request lacks the argument '{key}'")
    if kind is not None and not isinstance(args[key], kind):
        raise WorkerFailure(BAD_REQUEST, f"the argument '{key}' must be {kind.__name__}, "
                                         f"got {type(args[key]).__name__}")
    return args[key]


class Channel:
    """Owns the protocol streams. Created once at start-up, before any user code runs. A reader
    thread takes core's messages off the input as they come, so a cancel reaches the request that
    is running: requests queue up for next_request(), cancels mark their id. A shutdown or the end of
    input ends the worker once the requests before it are served."""

    def __init__(self, out=None, inp=None):
        if out is None:
            proto_fd = os.dup(1)
            os.dup2(2, 1)  # C-level writes to stdout (printf in an extension) go to the log
            out = os.fdopen(proto_fd, "w", buffering=1, encoding="utf-8")
            sys.stdout = sys.stderr
        self._out = out
        self._in = inp if inp is not None else sys.stdin
        self._lock = threading.Lock()
        self._queue = queue.Queue()
        self._cancelled = set()
        self._reader = None

    def send(self, message):
        line = json.dumps(json_safe(message), allow_nan=False, default=str)
        with self._lock:
            self._out.write(line + "\n")
            self._out.flush()

    def start(self):
        """Starts reading core's messages (after the hello)."""
        self._reader = threading.Thread(target=self._read, name="nova-protocol-reader", daemon=True)
        self._reader.start()

    def _read(self):
        for line in self._in:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except json.JSONDecodeError as exc:
                self._queue.put(WorkerFailure(BAD_REQUEST, f"a message from core is not JSON: {exc}"))
                continue
            kind = message.get("type") if isinstance(message, dict) else None
            if kind == "cancel":
                with self._lock:
                    self._cancelled.add(message.get("id"))
            elif kind == "shutdown":
                break
            else:
                self._queue.put(message)
        self._queue.put(None)

    def next_request(self):
        """The next message core sent (a dict, or a WorkerFailure for a line that was not JSON);
        None after a shutdown or at the end of input."""
        return self._queue.get()

    def is_cancelled(self, request_id):
        with self._lock:
            return request_id in self._cancelled

    def forget(self, request_id):
        with self._lock:
            self._cancelled.discard(request_id)


class Progress:
    """What a command gets as `progress`: call it with (message, fraction) to report progress; each
    call is also a safe point where a cancelled request stops (raises Cancelled). Long loops without
    progress messages call check()."""

    def __init__(self, channel, request_id):
        self._channel = channel
        self._id = request_id

    @property
    def cancelled(self):
        return self._channel.is_cancelled(self._id)

    def check(self):
        if self.cancelled:
            raise Cancelled()

    def __call__(self, message, fraction=None):
        self.check()
        self._channel.send({"type": "progress", "id": self._id, "message": message, "fraction": fraction})
