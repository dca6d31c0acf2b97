#!/usr/bin/env python3
"""One host that serves a platform's photos and refuses some of them, for
scripts/bench-refusals: on 127.0.0.1:PORT only, over HTTP/1.1 (keep-alive), every photo
the file photos-c/p<N>.jpg under ROOT (N zero-padded to six digits). What a path gets:

  /p<N>.jpg        the photo
  /forever<N>.jpg  STATUS + Retry-After: 1, every time
  /once<N>.jpg     STATUS + Retry-After: 1 the first time, then the photo
  /fifty<N>.jpg    503 + Retry-After: 1 fifty times, then the photo
  /later<N>.jpg    503 + Retry-After: 2 the first time, then the photo
  /slow<N>.jpg     the photo after 2 s
  /limited<N>.jpg  one photo a second over all /limited paths (the Unix second); any
                   other request inside the second gets 429 + Retry-After: 1

STATUS is 429 or 503. Prints one JSON line when stopped (SIGTERM): requests per kind of
path, and refusals.
usage: one_host.py ROOT PORT STATUS
"""
import json, os, re, signal, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

root, port, status = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lock = threading.Lock()
state = {"asked": {}, "refused": 0, "last_limited": -1, "seen": {}}
pattern = re.compile(r"^/(p|forever|once|fifty|later|slow|limited)(\d+)\.jpg$")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, headers, body=b""):
        self.send_response(code)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def refuse(self, code, wait):
        with lock:
            state["refused"] += 1
        return self.reply(code, [("Retry-After", str(wait))])

    def do_GET(self):
        match = pattern.match(self.path)
        if not match:
            return self.reply(404, [])
        kind, number = match.group(1), int(match.group(2))
        with lock:
            state["asked"][kind] = state["asked"].get(kind, 0) + 1
            seen = state["seen"][self.path] = state["seen"].get(self.path, 0) + 1
        if kind == "fifty" and seen <= 50:
            return self.refuse(503, 1)
        if kind == "forever" or (kind == "once" and seen == 1):
            return self.refuse(status, 1)
        if kind == "later" and seen == 1:
            return self.refuse(503, 2)
        if kind == "limited":
            with lock:
                second = int(time.time())
                allowed = second != state["last_limited"]
                if allowed:
                    state["last_limited"] = second
            if not allowed:
                return self.refuse(429, 1)
        if kind == "slow":
            time.sleep(2)
        path = os.path.join(root, "photos-c", f"p{number:06d}.jpg")
        if not os.path.exists(path):
            return self.reply(404, [])
        with open(path, "rb") as f:
            photo = f.read()
        return self.reply(200, [("Content-Type", "image/jpeg")], photo)


server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
server.daemon_threads = True
server.request_queue_size = 256


def stop(*_):
    print(json.dumps({"asked": state["asked"], "refused": state["refused"]}), flush=True)
    os._exit(0)


signal.signal(signal.SIGTERM, stop)
server.serve_forever()
