#!/usr/bin/env python3
"""A host with a rate limit, for scripts/bench-hosts: serves /limited<N>.jpg (the file
photos-c/p<N>.jpg under ROOT) on 127.0.0.1:PORT only.

  FORM retry-after-seconds | retry-after-date | ratelimit | x-ratelimit:
      one photo a second (a fixed window: the Unix second); any other request inside the
      second gets 429, saying when to come back in the form's headers
  FORM hour: every request gets 503 with Retry-After: 3600
  FORM ok: every request gets its photo (Cache-Control: max-age=0, so a next run asks again)

Prints one JSON line when stopped (SIGTERM): photos served, requests refused.
usage: limited_host.py ROOT PORT FORM
"""
import email.utils, json, os, signal, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

root, port, form = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lock = threading.Lock()
state = {"last": -1, "served": 0, "refused": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, headers, body=b""):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        name = self.path.rsplit("/", 1)[-1]
        if not (name.startswith("limited") and name.endswith(".jpg")):
            return self.reply(404, [])
        number = int(name[len("limited"):-len(".jpg")])
        with open(os.path.join(root, "photos-c", f"p{number:06d}.jpg"), "rb") as f:
            photo = f.read()
        photo_headers = [("Content-Type", "image/jpeg"), ("Cache-Control", "max-age=0")]
        if form == "ok":
            return self.reply(200, photo_headers, photo)
        if form == "hour":
            with lock:
                state["refused"] += 1
            return self.reply(503, [("Retry-After", "3600")])
        with lock:
            now = time.time()
            second = int(now)
            if second != state["last"]:
                state["last"] = second
                state["served"] += 1
                refuse = False
            else:
                state["refused"] += 1
                refuse = True
        reset = second + 1
        spent = {"ratelimit": [("RateLimit-Policy", '"default";q=1;w=1'), ("RateLimit", '"default";r=0;t=1')],
                 "x-ratelimit": [("X-RateLimit-Limit", "1"), ("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", str(reset))]}.get(form, [])
        if not refuse:
            return self.reply(200, photo_headers + spent, photo)
        if form == "retry-after-seconds":
            return self.reply(429, [("Retry-After", "1")])
        if form == "retry-after-date":
            return self.reply(429, [("Retry-After", email.utils.formatdate(reset, usegmt=True))])
        return self.reply(429, spent)


server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
server.daemon_threads = True


def stop(*_):
    print(json.dumps({"served": state["served"], "refused": state["refused"]}), flush=True)
    os._exit(0)


signal.signal(signal.SIGTERM, stop)
server.serve_forever()
