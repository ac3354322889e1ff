"""The work behind /remote and /alternate: one request takes `seconds`.

Both the remote service (remote.py) and every instance of the function pool
(pool.py) run this same code, as the study's Lambda ran the remote service's.

The 0.75 s is a wait, not CPU work. Study 003's ceilings for /remote and
/alternate come from time, not from processor speed: one worker serving
requests one after another (1 / 0.75 s = 1.33 requests per second, whatever
the CPU), and a Lambda whose every instance has its own CPU, so invocations
do not slow each other down. CPU work would stretch by 1 / resource_scale
under the pack's miniature CPU caps (0.75 s would become 3 s at 0.25), and
in a pool sharing one cap, concurrent invocations would divide it, turning
Lambda's concurrency limit into a CPU limit. A wait keeps both shapes at
every scale.
"""
import os
import time

# The study's service time per request.
DEFAULT_SECONDS = 0.75


class SettingError(ValueError):
    """A bad environment setting; the message names the variable."""


def number_setting(name, default, low, high, whole=False, env=None):
    """The environment variable `name` as a number in [low, high], or `default` when unset or empty."""
    raw = (os.environ if env is None else env).get(name, "")
    if raw.strip() == "":
        return default
    try:
        value = int(raw) if whole else float(raw)
    except ValueError:
        value = None
    if value is None or value != value or not low <= value <= high:
        kind = "a whole number" if whole else "a number"
        raise SettingError("%s must be %s from %s to %s, got %r" % (name, kind, low, high, raw))
    return value


class Work:
    """One request's work: wait `seconds`, then describe what was done."""

    def __init__(self, source, seconds=DEFAULT_SECONDS):
        self.source = source
        self.seconds = seconds

    def run(self, request):
        """Do request number `request` and return its answer as an ordered dict."""
        began = time.monotonic()
        time.sleep(self.seconds)
        took = time.monotonic() - began
        return {"from": self.source, "request": request, "work_ms": round(took * 1000)}
