"""Study 003's function pool, the stand-in for the Lambda behind /alternate.

Each POST /invoke is one invocation, run by one instance (an execution
environment) that does nothing else meanwhile; every instance runs the
remote service's own code (work.py), so an invocation takes POOL_SECONDS
(0.75 s by default) like a /remote request, but invocations run side by
side, one instance each.

As Lambda does with synchronous invocations:
- an invocation takes an idle warm instance (the one used last) or, when
  none is idle, starts a new one, which first spends POOL_COLD_START
  seconds initialising (its cold start) and counts toward the concurrency
  limit while it does;
- beyond POOL_CONCURRENCY invocations in flight, an invocation is throttled
  at once with a 429; nothing is queued (Lambda queues only asynchronous
  invocations);
- an instance idle for POOL_IDLE_REAP seconds is reaped, so the next burst
  starts cold again (0 keeps instances forever).

GET /gauge answers the concurrency gauge as JSON: invocations in flight now
and at their peak, instances now (busy, initialising and idle) and at their
peak, and the counts of invocations, cold starts, throttles and reaped
instances since start or since POST /gauge/reset, which sets the peaks to
the present and the counts to zero. GET /healthz answers "ok".

Settings (environment): HOST (default 0.0.0.0), PORT (8080), POOL_SECONDS,
POOL_CONCURRENCY (1000, Lambda's default regional limit), POOL_COLD_START
(0.25 s), POOL_IDLE_REAP (600 s), POOL_BACKLOG (2048).
"""
import http.server
import json
import os
import signal
import sys
import threading
import time

from work import DEFAULT_SECONDS, SettingError, Work, number_setting

# An idle keep-alive connection is closed after this long: longer than the
# web tier's agent keeps an idle socket (60 s), so the client closes first.
IDLE_CONNECTION_SECONDS = 120


class Instance:
    def __init__(self, number, work):
        self.number = number
        self.work = work
        self.invocations = 0
        self.last_used = 0.0


class Pool:
    """The instances and the gauge; invoke is called from many threads."""

    def __init__(self, seconds=DEFAULT_SECONDS, limit=1000, cold_start=0.25, idle_reap=600.0, clock=time.monotonic):
        self.seconds, self.limit, self.cold_start, self.idle_reap, self.clock = seconds, limit, cold_start, idle_reap, clock
        self.lock = threading.Lock()
        self.idle = []  # warm instances, the most recently used last
        self.in_flight = self.initializing = self.instances = 0
        self.peak_in_flight = self.peak_instances = 0
        self.invocations = self.cold_starts = self.throttles = self.reaped = 0
        self.started = 0  # instances ever started, which numbers them

    def invoke(self):
        """Run one invocation; its answer, or None when it was throttled."""
        with self.lock:
            if self.in_flight >= self.limit:
                self.throttles += 1
                return None
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            self.invocations += 1
            request = self.invocations
            instance = self.idle.pop() if self.idle else None
            if instance is None:
                self.started += 1
                number = self.started
                self.instances += 1
                self.initializing += 1
                self.cold_starts += 1
                self.peak_instances = max(self.peak_instances, self.instances)
        cold = instance is None
        try:
            if cold:
                # the init phase: the new environment is not ready before it ends
                time.sleep(self.cold_start)
                instance = Instance(number, Work("pool", self.seconds))
                with self.lock:
                    self.initializing -= 1
            answer = instance.work.run(request)
        finally:
            with self.lock:
                self.in_flight -= 1
                if instance is not None:
                    instance.invocations += 1
                    instance.last_used = self.clock()
                    self.idle.append(instance)
                else:  # its cold start failed: it never became an instance
                    self.instances -= 1
                    self.initializing -= 1
        answer.update(instance=instance.number, cold=cold)
        return answer

    def reap(self):
        """Remove the instances idle for idle_reap seconds or more; how many went."""
        if self.idle_reap <= 0:
            return 0
        with self.lock:
            now = self.clock()
            keep = [i for i in self.idle if now - i.last_used < self.idle_reap]
            gone = len(self.idle) - len(keep)
            self.idle = keep
            self.instances -= gone
            self.reaped += gone
            return gone

    def gauge(self):
        with self.lock:
            return {
                "in_flight": self.in_flight,
                "peak_in_flight": self.peak_in_flight,
                "instances": self.instances,
                "peak_instances": self.peak_instances,
                "initializing": self.initializing,
                "idle": len(self.idle),
                "invocations": self.invocations,
                "cold_starts": self.cold_starts,
                "throttles": self.throttles,
                "reaped": self.reaped,
                "concurrency_limit": self.limit,
                "cold_start_s": self.cold_start,
                "idle_reap_s": self.idle_reap,
                "work_s": self.seconds,
            }

    def reset(self):
        with self.lock:
            self.peak_in_flight, self.peak_instances = self.in_flight, self.instances
            self.invocations = self.cold_starts = self.throttles = self.reaped = 0

    def reap_forever(self):
        interval = min(1.0, self.idle_reap / 4)
        while True:
            time.sleep(interval)
            self.reap()


class Server(http.server.ThreadingHTTPServer):
    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, address, pool, backlog):
        self.request_queue_size = backlog
        self.pool = pool
        super().__init__(address, Handler)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = IDLE_CONNECTION_SECONDS
    server_version = "frontier-pool"
    sys_version = ""

    def do_POST(self):
        # the request body, if any, is read and ignored: every invocation is alike
        length = self.headers.get("Content-Length")
        if length and length.isdigit():
            self.rfile.read(int(length))
        pool = self.server.pool
        if self.path == "/invoke":
            answer = pool.invoke()
            if answer is None:
                self.json(429, {"error": "throttled", "concurrency_limit": pool.limit})
            else:
                self.json(200, answer)
        elif self.path == "/gauge/reset":
            pool.reset()
            self.json(200, pool.gauge())
        else:
            self.text(404, "pool: no such path; POST /invoke, GET /gauge, POST /gauge/reset, GET /healthz\n")

    def do_GET(self):
        if self.path == "/gauge":
            self.json(200, self.server.pool.gauge())
        elif self.path == "/healthz":
            self.text(200, "ok\n")
        elif self.path == "/invoke":
            self.text(405, "pool: an invocation is POST /invoke\n", allow="POST")
        else:
            self.text(404, "pool: no such path; POST /invoke, GET /gauge, POST /gauge/reset, GET /healthz\n")

    def json(self, status, value):
        self.send(status, json.dumps(value, separators=(",", ":")).encode(), "application/json")

    def text(self, status, message, allow=None):
        self.send(status, message.encode(), "text/plain", allow)

    def send(self, status, body, content_type, allow=None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if allow:
            self.send_header("Allow", allow)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass

    def log_error(self, format, *args):
        sys.stderr.write("pool: %s\n" % (format % args))


def main():
    try:
        port = number_setting("PORT", 8080, 0, 65535, whole=True)
        pool = Pool(
            seconds=number_setting("POOL_SECONDS", DEFAULT_SECONDS, 0, 600),
            limit=number_setting("POOL_CONCURRENCY", 1000, 1, 100000, whole=True),
            cold_start=number_setting("POOL_COLD_START", 0.25, 0, 600),
            idle_reap=number_setting("POOL_IDLE_REAP", 600, 0, 86400),
        )
        backlog = number_setting("POOL_BACKLOG", 2048, 1, 65535, whole=True)
    except SettingError as e:
        sys.exit("pool: %s" % e)
    # a thread per connection: a small stack lets a thousand of them fit the task's memory
    threading.stack_size(512 * 1024)
    server = Server((os.environ.get("HOST", "0.0.0.0"), port), pool, backlog)
    if pool.idle_reap > 0:
        threading.Thread(target=pool.reap_forever, name="reaper", daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(
        "pool listening on %d: concurrency %d, %.3f s per invocation, cold start %.3f s, idle instances reaped after %g s"
        % (server.server_address[1], pool.limit, pool.seconds, pool.cold_start, pool.idle_reap),
        flush=True,
    )
    server.serve_forever()


if __name__ == "__main__":
    main()
