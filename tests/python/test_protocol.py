"""The worker's side of the protocol: requests and their ids, the version check, typed errors (a
user error with its file and line), cancel at a safe point, and the real entry point's hello."""

import io
import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from nova_worker import PROTOCOL_VERSION, loader, schemas, server
from nova_worker.protocol import Channel, Progress, WorkerFailure, json_safe, parse_request

PACKAGE_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "resources", "python")


def request(rid, cmd, args=None, protocol=PROTOCOL_VERSION):
    return {"type": "request", "id": rid, "protocol": protocol, "cmd": cmd, "args": args or {}}


def serve_lines(messages, commands):
    """Runs the request loop on `messages` (core's lines) and returns what the worker sent."""
    out = io.StringIO()
    channel = Channel(out=out, inp=io.StringIO("".join(json.dumps(m) + "\n" for m in messages)))
    channel.start()
    server.serve(channel, commands=commands)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_results_and_progress_carry_the_request_id():
    def twice(args, progress):
        progress("halfway", 0.5)
        return {"twice": 2 * args["x"]}

    sent = serve_lines([request(7, "twice", {"x": 21}), request(8, "twice", {"x": 1})], {"twice": twice})
    assert sent == [{"type": "progress", "id": 7, "message": "halfway", "fraction": 0.5},
                    {"type": "result", "id": 7, "result": {"twice": 42}},
                    {"type": "progress", "id": 8, "message": "halfway", "fraction": 0.5},
                    {"type": "result", "id": 8, "result": {"twice": 2}}]


def test_a_request_of_another_protocol_version_is_refused_naming_both():
    with pytest.raises(WorkerFailure) as err:
        parse_request(request(1, "ping", protocol=1))
    assert err.value.kind == "bad_request"
    assert f"speaks worker protocol 1, this worker speaks protocol {PROTOCOL_VERSION}" in err.value.message
    sent = serve_lines([request(3, "ping", protocol=PROTOCOL_VERSION + 1)], server.COMMANDS)
    assert sent[0]["id"] == 3 and sent[0]["type"] == "error"
    assert sent[0]["error"]["kind"] == "bad_request"
    assert f"protocol {PROTOCOL_VERSION + 1}" in sent[0]["error"]["message"]


@pytest.mark.parametrize("message, expected", [
    ({"type": "request", "id": 1, "protocol": PROTOCOL_VERSION}, "no command"),
    ({"type": "request", "id": 1, "protocol": PROTOCOL_VERSION, "cmd": "ping", "args": [1]}, "must be a JSON object"),
    ({"type": "hello", "id": 1}, "expected a message of type 'request'"),
])
def test_malformed_requests_are_bad_requests(message, expected):
    with pytest.raises(WorkerFailure) as err:
        parse_request(message)
    assert err.value.kind == "bad_request" and expected in err.value.message


def test_unknown_command_and_internal_error_are_typed():
    def broken(args, progress):
        raise ZeroDivisionError("division by zero")

    sent = serve_lines([request(1, "nope"), request(2, "broken")], {"broken": broken})
    assert sent[0]["error"]["kind"] == "bad_request" and "unknown command 'nope'" in sent[0]["error"]["message"]
    assert sent[1]["error"]["kind"] == "internal"
    assert sent[1]["error"]["message"] == "ZeroDivisionError: division by zero"
    assert set(sent[1]["error"]) == schemas.fields(schemas.ErrorInfo)


def test_a_line_that_is_not_json_is_answered_and_the_worker_goes_on():
    out = io.StringIO()
    channel = Channel(out=out, inp=io.StringIO("{oops\n" + json.dumps(request(2, "ping")) + "\n"))
    channel.start()
    server.serve(channel)
    sent = [json.loads(line) for line in out.getvalue().splitlines()]
    assert sent[0]["id"] is None and sent[0]["error"]["kind"] == "bad_request"
    assert sent[1]["id"] == 2 and sent[1]["result"]["pong"] is True


def test_an_error_in_the_users_model_is_a_user_error_with_file_and_line(tmp_path):
    model = tmp_path / "broken_model.py"
    model.write_text(textwrap.dedent("""\
        import math


        def helper():
            return 1 / 0


        VALUE = helper()
        """))

    def load(args, progress):
        loader.import_model_module(args["model"])
        return {}

    sent = serve_lines([request(5, "load", {"model": str(model)})], {"load": load})
    error = sent[0]["error"]
    assert sent[0]["id"] == 5 and error["kind"] == "user_error"
    assert error["file"] == str(model) and error["line"] == 5
    assert "ZeroDivisionError" in error["message"] and "broken_model.py:5" in error["message"]
    assert "nova_worker" not in error["traceback"]  # the user's frames only


def test_a_syntax_error_names_the_file_and_line_it_is_shown_by(tmp_path):
    written = tmp_path / "copy.py"
    written.write_text("def f(:\n    pass\n")
    with pytest.raises(WorkerFailure) as err:
        loader.import_user_module(str(written), shown="/home/user/model.py")
    assert err.value.kind == "user_error"
    assert (err.value.file, err.value.line) == ("/home/user/model.py", 1)
    assert "syntax error in model.py line 1" in err.value.message


def test_cancel_stops_the_request_at_its_next_safe_point():
    read_fd, write_fd = os.pipe()
    core = os.fdopen(write_fd, "w", buffering=1)
    out = io.StringIO()
    channel = Channel(out=out, inp=os.fdopen(read_fd, "r"))
    channel.start()
    started = threading.Event()

    def spin(args, progress):
        started.set()
        while True:
            progress.check()
            time.sleep(0.01)

    worker = threading.Thread(target=server.serve, args=(channel,),
                              kwargs={"commands": {"spin": spin}, "once": True})
    worker.start()
    core.write(json.dumps(request(9, "spin")) + "\n")
    assert started.wait(10)
    t0 = time.monotonic()
    core.write(json.dumps({"type": "cancel", "id": 9}) + "\n")
    worker.join(10)
    core.close()
    assert not worker.is_alive() and time.monotonic() - t0 < 5
    sent = json.loads(out.getvalue().splitlines()[-1])
    assert sent["id"] == 9 and sent["error"]["kind"] == "cancelled"


def test_a_progress_call_is_a_safe_point_and_a_cancel_for_another_id_is_not_ours():
    out = io.StringIO()
    channel = Channel(out=out, inp=io.StringIO(json.dumps({"type": "cancel", "id": 4}) + "\n"))
    channel.start()
    channel._reader.join(5)
    Progress(channel, 3)("still going")  # another request's cancel
    with pytest.raises(BaseException) as err:
        Progress(channel, 4)("never sent")
    assert type(err.value).__name__ == "Cancelled"
    assert [json.loads(line)["message"] for line in out.getvalue().splitlines()] == ["still going"]


def test_json_safe_spells_non_finite_numbers():
    assert json_safe({"a": [float("nan"), float("inf"), -float("inf"), 1.5]}) == {"a": ["nan", "inf", "-inf", 1.5]}


def test_worker_failure_refuses_an_unknown_kind():
    with pytest.raises(ValueError):
        WorkerFailure("oops", "message")


def test_the_one_shot_entry_point_says_hello_answers_once_and_exits():
    env = dict(os.environ, PYTHONPATH=PACKAGE_DIR, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([sys.executable, "-m", "nova_worker", "--once"], env=env, timeout=120,
                          input=json.dumps(request(1, "ping")) + "\n", capture_output=True, text=True)
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0, proc.stderr
    hello, answer = lines
    assert hello["type"] == "hello" and hello["protocol"] == PROTOCOL_VERSION and hello["mode"] == "once"
    assert set(hello) == schemas.fields(schemas.Hello)
    assert answer["id"] == 1 and answer["result"]["pong"] is True
    assert set(answer["result"]["process_s"]) == schemas.fields(schemas.ProcessTimings)


def test_the_entry_point_refuses_unknown_options():
    env = dict(os.environ, PYTHONPATH=PACKAGE_DIR)
    proc = subprocess.run([sys.executable, "-m", "nova_worker", "--bogus"], env=env, timeout=60,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "unknown: --bogus" in proc.stderr


@pytest.mark.parametrize("option, inductor", [("--preload=intake", False), ("--preload", True)])
def test_a_standby_for_intake_imports_torch_export_but_not_inductor(option, inductor):
    # A session's first standby serves its intake, which waits for it: it skips torch.compile's stack.
    env = dict(os.environ, PYTHONPATH=PACKAGE_DIR, PYTHONDONTWRITEBYTECODE="1")
    modules = ["torch", "torch._dynamo", "nova_worker.intake", "torch._inductor.compile_fx", "nova_worker.candidates"]
    proc = subprocess.run([sys.executable, "-m", "nova_worker", "--once", option], env=env, timeout=300,
                          input=json.dumps(request(1, "_where", {"modules": modules})) + "\n",
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    hello, answer = [json.loads(line) for line in proc.stdout.splitlines()]
    assert hello["mode"] == "once"
    imported = answer["result"]["imported"]
    assert imported["torch"] and imported["torch._dynamo"]
    assert imported["nova_worker.intake"] is not inductor
    assert imported["torch._inductor.compile_fx"] is inductor and imported["nova_worker.candidates"] is inductor


def test_the_entry_point_refuses_an_unknown_preload():
    env = dict(os.environ, PYTHONPATH=PACKAGE_DIR)
    proc = subprocess.run([sys.executable, "-m", "nova_worker", "--once", "--preload=everything"], env=env,
                          timeout=60, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "--preload[=compile|intake]" in proc.stderr
    assert "unknown: --preload=everything" in proc.stderr


def test_a_request_for_one_gpu_lane_narrows_the_devices_before_cuda_starts(monkeypatch):
    # A standby started before its lane was known is told its device with the request.
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    seen = {}

    def where(args, progress):
        seen["visible"] = os.environ.get("CUDA_VISIBLE_DEVICES")
        seen["args"] = dict(args)
        return {}

    sent = serve_lines([request(1, "where", {"cuda_visible_devices": "1", "x": 2})], {"where": where})
    assert sent[-1]["type"] == "result"
    assert seen == {"visible": "1", "args": {"x": 2}}  # the lane is not the command's argument


def test_a_device_asked_for_after_cuda_started_elsewhere_is_refused(monkeypatch):
    class FakeCuda:
        @staticmethod
        def is_initialized():
            return True

    class FakeTorch:
        cuda = FakeCuda

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    monkeypatch.setitem(sys.modules, "torch", FakeTorch)
    sent = serve_lines([request(2, "where", {"cuda_visible_devices": "1"})], {"where": lambda a, p: {}})
    assert sent[-1]["type"] == "error"
    assert sent[-1]["error"]["kind"] == "bad_request"
    assert "device 1" in sent[-1]["error"]["message"]
