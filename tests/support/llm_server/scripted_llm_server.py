#!/usr/bin/env python3
"""A scripted LLM server for the tests: OpenAI Chat Completions and Anthropic Messages on loopback.

    python3 scripted_llm_server.py SCRIPT.json [--log REQUESTS.jsonl]

Listens on 127.0.0.1 on a free port and prints "PORT <n>" on stdout once it accepts connections.
Every POST takes the next entry of the script's "responses" list (a request after the last one gets
a 500 that says the script is exhausted) and appends the request (path, headers, JSON body) to the
log as one JSON line. An entry is one of:

  {"type": "openai",    "text": ..., "reasoning": ..., "usage": {...} | null, ...}  a streamed chat completion
  {"type": "anthropic", "text": ..., "thinking": ..., "input_tokens": n, "output_tokens": n, ...}
  {"type": "status", "status": 429, "headers": {"Retry-After": "1"}, "body": "..."}   an error answer
  {"type": "garbage", "body": "..."}                                                 200, not an event stream
  {"type": "stall", "seconds": s}                                                    200 headers, then silence

Streamed entries take "text_file" (read beside the script) instead of "text", "chunk" (characters a
delta, default 16), "delay_s" (between events), "cut_after" (events sent before the connection
closes without the end marker), "unknown_events" (true: events of a type no protocol defines) and,
Anthropic, "ping" (true: ping events between deltas) and "error" (an error event in the stream).
Only the standard library: the tests start it with any python3.
"""
import json
import os
import socketserver
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer


class Script:
    def __init__(self, path, log):
        with open(path) as f:
            self.responses = json.load(f)["responses"]
        self.folder = os.path.dirname(os.path.abspath(path))
        self.next = 0
        self.log = log

    def take(self):
        if self.next >= len(self.responses):
            return {"type": "status", "status": 500,
                    "body": json.dumps({"error": {"message": "script exhausted after %d responses" % self.next}})}
        entry = self.responses[self.next]
        self.next += 1
        return entry

    def text(self, entry, key="text"):
        if key + "_file" in entry:
            with open(os.path.join(self.folder, entry[key + "_file"])) as f:
                return f.read()
        return entry.get(key, "")


def pieces(text, size):
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def openai_events(entry, text):
    model = entry.get("model", "scripted")
    base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": model}
    events = []
    if entry.get("reasoning"):
        events.append(("", dict(base, choices=[{"index": 0, "delta": {"reasoning_content": entry["reasoning"]}}])))
    events.append(("", dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}}])))
    for p in pieces(text, entry.get("chunk", 16)):
        events.append(("", dict(base, choices=[{"index": 0, "delta": {"content": p}, "finish_reason": None}])))
        if entry.get("unknown_events"):
            events.append(("scripted.unknown", {"note": "an event type no client knows"}))
    events.append(("", dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}])))
    if entry.get("usage", None) is not None:
        events.append(("", dict(base, choices=[], usage=entry["usage"])))
    events.append(("", "[DONE]"))
    return events


def anthropic_events(entry, text):
    events = [("message_start", {"type": "message_start", "message": {
        "id": "msg_scripted", "type": "message", "role": "assistant", "model": entry.get("model", "scripted"),
        "content": [], "usage": {"input_tokens": entry.get("input_tokens", 0), "output_tokens": 1}}})]
    index = 0
    if entry.get("thinking"):
        events.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                               "content_block": {"type": "thinking", "thinking": ""}}))
        events.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                               "delta": {"type": "thinking_delta", "thinking": entry["thinking"]}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
        index = 1
    events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                           "content_block": {"type": "text", "text": ""}}))
    for p in pieces(text, entry.get("chunk", 16)):
        events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": "text_delta", "text": p}}))
        if entry.get("ping"):
            events.append(("ping", {"type": "ping"}))
        if entry.get("unknown_events"):
            events.append(("scripted_unknown", {"type": "scripted_unknown"}))
    if entry.get("error"):
        events.append(("error", {"type": "error", "error": entry["error"]}))
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    # Cumulative usage: the final count, not an increment.
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                     "usage": {"output_tokens": entry.get("output_tokens", 0)}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


class Handler(BaseHTTPRequestHandler):
    script = None

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        if self.script.log:
            with open(self.script.log, "a") as f:
                f.write(json.dumps({"path": self.path, "headers": dict(self.headers), "body": body}) + "\n")
        entry = self.script.take()
        kind = entry["type"]
        if kind == "status":
            payload = entry.get("body", "").encode()
            self.send_response(entry["status"])
            for k, v in entry.get("headers", {}).items():
                self.send_header(k, v)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        if kind == "garbage":
            payload = entry.get("body", "<html>not json</html>").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.flush()
        if kind == "stall":
            time.sleep(entry.get("seconds", 5))
            return
        text = self.script.text(entry)
        events = openai_events(entry, text) if kind == "openai" else anthropic_events(entry, text)
        cut = entry.get("cut_after")
        try:
            self.wfile.write(b": keep-alive comment\n\n")
            for n, (name, data) in enumerate(events):
                if cut is not None and n >= cut:
                    break
                payload = data if isinstance(data, str) else json.dumps(data)
                frame = ("event: %s\n" % name if name else "") + "data: %s\n\n" % payload
                self.wfile.write(frame.encode())
                self.wfile.flush()
                if entry.get("delay_s"):
                    time.sleep(entry["delay_s"])
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (a cancel): nothing to do


class Server(socketserver.ThreadingMixIn, HTTPServer):
    daemon_threads = True


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    log = argv[argv.index("--log") + 1] if "--log" in argv else None
    Handler.script = Script(argv[1], log)
    server = Server(("127.0.0.1", 0), Handler)
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
