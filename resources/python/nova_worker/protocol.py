"""The worker's side of the line-delimited JSON protocol.

Protocol lines go to a private duplicate of the original stdout; fd 1 and sys.stdout are pointed
at stderr so that prints of the user's model (Python or C level) land in the job log instead of
corrupting the protocol."""

import json
import os
import sys


class WorkerFailure(Exception):
    """An error the worker reports to core as {"type": "error"}: kind is "user_error" (the model's
    fault: its traceback is the user's own), "bad_request" or "internal"."""

    def __init__(self, kind, message, traceback="", file="", line=0):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.traceback = traceback
        self.file = file
        self.line = line

    def to_json(self):
        return {"kind": self.kind, "message": self.message, "traceback": self.traceback,
                "file": self.file, "line": self.line}


class Channel:
    """Owns the protocol stream. Created once at start-up, before any user code runs."""

    def __init__(self):
        proto_fd = os.dup(1)
        os.dup2(2, 1)  # C-level writes to stdout (printf in an extension) go to the log
        self._out = os.fdopen(proto_fd, "w", buffering=1, encoding="utf-8")
        sys.stdout = sys.stderr
        self._in = sys.stdin

    def send(self, message):
        self._out.write(json.dumps(message, allow_nan=False, default=str) + "\n")
        self._out.flush()

    def read_request(self):
        """The next request as a dict, or None at end of input."""
        while True:
            line = self._in.readline()
            if not line:
                return None
            if line.strip():
                return json.loads(line)

    def progress(self, request_id, message, fraction=None):
        self.send({"id": request_id, "type": "progress", "message": message, "fraction": fraction})
