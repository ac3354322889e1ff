"""Tests of the remote service and the function pool, on real sockets and processes.

Run: python3 -m unittest discover -s apps/frontier/service
"""
import concurrent.futures
import json
import os
import subprocess
import sys
import time
import unittest
import urllib.error
import urllib.request

from pool import Pool
from work import SettingError, Work, number_setting

HERE = os.path.dirname(os.path.abspath(__file__))


def spawn(script, **env):
    """Start script on a free 127.0.0.1 port; (process, base URL)."""
    full = dict(os.environ, HOST="127.0.0.1", PORT="0", PYTHONDONTWRITEBYTECODE="1", **env)
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, script)], env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if " listening on " not in line:
        proc.kill()
        raise AssertionError("%s did not start: %r %s" % (script, line, proc.stderr.read()))
    port = int(line.split(" listening on ")[1].split(":")[0])
    return proc, "http://127.0.0.1:%d" % port


def stop(proc):
    proc.terminate()
    proc.wait(5)
    proc.stdout.close()
    proc.stderr.close()


def get(url, method="GET"):
    """(status, parsed or raw body, seconds since the call began to the answer's end)."""
    began = time.monotonic()
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, body = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, body = e.code, e.read()
    took = time.monotonic() - began
    try:
        return status, json.loads(body), took
    except ValueError:
        return status, body.decode(), took


class SettingsTest(unittest.TestCase):
    def test_bad_values_name_the_variable(self):
        for raw in ["abc", "-1", "nan", "700"]:
            with self.assertRaisesRegex(SettingError, "^REMOTE_SECONDS must be a number from 0 to 600, got '%s'$" % raw):
                number_setting("REMOTE_SECONDS", 0.75, 0, 600, env={"REMOTE_SECONDS": raw})
        with self.assertRaisesRegex(SettingError, "POOL_CONCURRENCY must be a whole number"):
            number_setting("POOL_CONCURRENCY", 1000, 1, 100000, whole=True, env={"POOL_CONCURRENCY": "2.5"})
        self.assertEqual(number_setting("X", 0.75, 0, 600, env={"X": ""}), 0.75)
        self.assertEqual(number_setting("X", 0.75, 0, 600, env={"X": "0.2"}), 0.2)

    def test_a_bad_setting_stops_the_service_with_its_name(self):
        for script, var in [("remote.py", "REMOTE_BACKLOG"), ("pool.py", "POOL_COLD_START")]:
            out = subprocess.run([sys.executable, os.path.join(HERE, script)], env=dict(os.environ, PORT="0", **{var: "lots"}),
                                 capture_output=True, text=True, timeout=10)
            self.assertNotEqual(out.returncode, 0)
            self.assertIn(var + " must be", out.stderr)

    def test_work_waits_its_seconds(self):
        began = time.monotonic()
        answer = Work("remote", 0.2).run(7)
        took = time.monotonic() - began
        self.assertGreaterEqual(took, 0.2)
        self.assertEqual(list(answer), ["from", "request", "work_ms"])
        self.assertEqual((answer["from"], answer["request"]), ("remote", 7))
        self.assertTrue(200 <= answer["work_ms"] < 300, answer)


class RemoteTest(unittest.TestCase):
    def test_serves_one_request_at_a_time(self):
        proc, base = spawn("remote.py", REMOTE_SECONDS="0.4")
        try:
            with concurrent.futures.ThreadPoolExecutor(3) as ex:
                began = time.monotonic()
                calls = [ex.submit(get, base + "/") for _ in range(3)]
                results = sorted((c.result() for c in calls), key=lambda r: r[2])
                wall = time.monotonic() - began
            self.assertEqual([r[0] for r in results], [200, 200, 200])
            # served in turn: answers 0.4 s apart, numbered in order, each 0.4 s of work
            self.assertEqual(sorted(r[1]["request"] for r in results), [1, 2, 3])
            for first, second in zip(results, results[1:]):
                gap = second[2] - first[2]
                self.assertTrue(0.3 <= gap <= 0.7, "answers %.3f s apart, want about 0.4 s" % gap)
            self.assertGreaterEqual(wall, 1.2)
            self.assertTrue(all(400 <= r[1]["work_ms"] < 500 for r in results), results)
            status, body, _ = get(base + "/elsewhere")
            self.assertEqual(status, 404)
            self.assertIn("GET / does the work", body)
        finally:
            stop(proc)


class PoolTest(unittest.TestCase):
    def test_limit_cold_start_and_warm_reuse(self):
        pool = Pool(seconds=0.3, limit=2, cold_start=0.2, idle_reap=0)
        with concurrent.futures.ThreadPoolExecutor(3) as ex:
            first = [ex.submit(pool.invoke) for _ in range(2)]
            time.sleep(0.05)
            g = pool.gauge()
            self.assertEqual((g["in_flight"], g["instances"], g["initializing"]), (2, 2, 2))
            # a third invocation beyond the limit is throttled at once, not queued
            began = time.monotonic()
            self.assertIsNone(pool.invoke())
            self.assertLess(time.monotonic() - began, 0.05)
            answers = [f.result() for f in first]
        self.assertEqual(sorted(a["instance"] for a in answers), [1, 2])
        self.assertTrue(all(a["cold"] for a in answers))
        began = time.monotonic()
        warm = pool.invoke()
        took = time.monotonic() - began
        self.assertFalse(warm["cold"])
        self.assertLess(took, 0.45, "a warm invocation takes the work's 0.3 s only")
        g = pool.gauge()
        self.assertEqual((g["peak_in_flight"], g["peak_instances"], g["instances"], g["in_flight"]), (2, 2, 2, 0))
        self.assertEqual((g["invocations"], g["cold_starts"], g["throttles"]), (3, 2, 1))
        pool.reset()
        g = pool.gauge()
        self.assertEqual((g["peak_in_flight"], g["invocations"], g["throttles"], g["instances"]), (0, 0, 0, 2))

    def test_idle_instances_are_reaped(self):
        now = [100.0]
        pool = Pool(seconds=0, limit=5, cold_start=0, idle_reap=60, clock=lambda: now[0])
        self.assertTrue(pool.invoke()["cold"])
        now[0] += 59
        self.assertEqual(pool.reap(), 0)
        self.assertFalse(pool.invoke()["cold"])  # used again at 159
        now[0] += 60
        self.assertEqual(pool.reap(), 1)
        g = pool.gauge()
        self.assertEqual((g["instances"], g["reaped"], g["idle"]), (0, 1, 0))
        answer = pool.invoke()
        self.assertTrue(answer["cold"])
        self.assertEqual(answer["instance"], 2)

    def test_over_http(self):
        proc, base = spawn("pool.py", POOL_SECONDS="0.3", POOL_CONCURRENCY="2", POOL_COLD_START="0.2", POOL_IDLE_REAP="0.4")
        try:
            with concurrent.futures.ThreadPoolExecutor(3) as ex:
                calls = [ex.submit(get, base + "/invoke", "POST") for _ in range(2)]
                time.sleep(0.1)
                third = get(base + "/invoke", "POST")
                done = [c.result() for c in calls]
            self.assertEqual(third[0], 429)
            self.assertEqual(third[1], {"error": "throttled", "concurrency_limit": 2})
            for status, body, took in done:
                self.assertEqual((status, body["from"], body["cold"]), (200, "pool", True))
                self.assertGreaterEqual(took, 0.5)  # cold start and work
            status, gauge, _ = get(base + "/gauge")
            self.assertEqual((status, gauge["peak_in_flight"], gauge["peak_instances"], gauge["throttles"]), (200, 2, 2, 1))
            time.sleep(0.9)  # past the reap time, and a reaper's round
            status, gauge, _ = get(base + "/gauge")
            self.assertEqual((gauge["instances"], gauge["reaped"]), (0, 2))
            self.assertEqual(get(base + "/invoke")[0], 405)
            self.assertEqual(get(base + "/healthz")[:2], (200, "ok\n"))
        finally:
            stop(proc)


if __name__ == "__main__":
    unittest.main()
