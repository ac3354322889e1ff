"""Study 003's remote service: one worker, one request at a time.

GET / does the work (work.py: a wait of REMOTE_SECONDS, 0.75 s by default)
and answers {"from":"remote","request":N,"work_ms":M}, N counting the
requests served since start. There is one process and one thread, and
every answer closes its connection (HTTP/1.0), so a request arriving while
another is served waits in the listen backlog (REMOTE_BACKLOG connections)
and is accepted only when the worker is free: requests never overlap.

Settings (environment): HOST (default 0.0.0.0), PORT (8080), REMOTE_SECONDS,
REMOTE_BACKLOG (2048, the backlog of a gunicorn sync worker; the kernel caps
it at net.core.somaxconn).
"""
import http.server
import json
import os
import signal
import sys

from work import DEFAULT_SECONDS, SettingError, Work, number_setting

# A client that connects and sends nothing must not hold the only worker.
READ_TIMEOUT_SECONDS = 10


class SingleWorker(http.server.HTTPServer):
    """HTTPServer (not the threading one) serves each connection to its end before accepting the next."""

    allow_reuse_address = True

    def __init__(self, address, work, backlog):
        # listen() in server_activate reads it
        self.request_queue_size = backlog
        self.work = work
        self.served = 0
        super().__init__(address, Handler)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    timeout = READ_TIMEOUT_SECONDS
    server_version = "frontier-remote"
    sys_version = ""

    def do_GET(self):
        if self.path.split("?", 1)[0] != "/":
            self.answer(404, b"remote: no such path; GET / does the work\n", "text/plain")
            return
        self.server.served += 1
        body = json.dumps(self.server.work.run(self.server.served), separators=(",", ":")).encode()
        self.answer(200, body, "application/json")

    def answer(self, status, body, content_type):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        # a line per request would cost the only worker; errors still print
        pass

    def log_error(self, format, *args):
        sys.stderr.write("remote: %s\n" % (format % args))


def main():
    try:
        port = number_setting("PORT", 8080, 0, 65535, whole=True)
        seconds = number_setting("REMOTE_SECONDS", DEFAULT_SECONDS, 0, 600)
        backlog = number_setting("REMOTE_BACKLOG", 2048, 1, 65535, whole=True)
    except SettingError as e:
        sys.exit("remote: %s" % e)
    server = SingleWorker((os.environ.get("HOST", "0.0.0.0"), port), Work("remote", seconds), backlog)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("remote listening on %d: one request at a time, %.3f s each, backlog %d" % (server.server_address[1], seconds, backlog), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
