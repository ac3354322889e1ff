"""End-to-end tests of every storage mode against a real PostgreSQL 15 and a real
Redis (realstores.py), each mode's app started as it is deployed
(manage.py serve, under runserver and under gunicorn) and asked over HTTP.

    PYTHONPATH=$(cluster/vendor.sh dir voting)/site python3 -m unittest discover -s apps/voting
"""
import json
import os
import signal
import subprocess
import sys
import time
import unittest
import urllib.error
import urllib.request

import realstores

HERE = os.path.dirname(os.path.abspath(__file__))
PG = REDIS = None
# v4's cache in these tests: long enough to read a stale answer, short enough to wait out
CACHE_SECONDS = 3.0


def setUpModule():
    global PG, REDIS
    PG = realstores.Postgres()
    try:
        REDIS = realstores.Redis()
    except Exception:
        PG.stop()
        raise


def tearDownModule():
    for store in (REDIS, PG):
        if store is not None:
            store.stop()


def eventually(fn, seconds=10.0):
    """fn() once it stops raising AssertionError, within seconds (v0 writes and v4 reads lag)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return fn()
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


class App:
    """The app of one storage mode, started with manage.py serve (and, for v0, its worker)."""

    def __init__(self, mode, server="runserver", worker=None, env=None, ready_status=200):
        self.port = realstores.free_port()
        self.env = dict(
            os.environ, STORAGE_MODE=mode, POSTGRES_ADDR=PG.addr, REDIS_ADDR=REDIS.addr, HOST="127.0.0.1",
            PORT=str(self.port), VOTING_SERVER=server, VOTING_CACHE_SECONDS=str(CACHE_SECONDS),
            VOTING_WAIT_SECONDS="30", GUNICORN_WORKERS="1", GUNICORN_THREADS="4", PYTHONDONTWRITEBYTECODE="1",
            **(env or {}),
        )
        self.procs = []
        self.worker = None
        if worker if worker is not None else mode == "v0":
            self.worker = self._start("vote_worker")
        self.server = self._start("serve")
        deadline = time.monotonic() + 60
        while True:
            try:
                status, _ = self.get("/voting/")
                if status == ready_status:
                    break
            except OSError:
                pass
            for p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"{' '.join(p.args)} exited with {p.returncode}: {p.stderr.read()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {mode} app on port {self.port} was not healthy within 60 s")
            time.sleep(0.2)

    def _start(self, command):
        p = subprocess.Popen([sys.executable, "manage.py", command], cwd=HERE, env=self.env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.procs.append(p)
        return p

    def request(self, method, path, body=None, raw=None):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as res:
                return res.status, json.loads(res.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def get(self, path):
        return self.request("GET", path)

    def vote(self, city, box, votes, size=1):
        return self.request("POST", "/voting/vote/", {"city_no": city, "box_no": box, "votes": votes, "election_size": size})

    def stop_process(self, p):
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        p.stderr.close()

    def stop(self):
        for p in self.procs:
            self.stop_process(p)


EMPTY = {"votes": {}, "total_votes": {}}


class ModeTests:
    """What every storage mode must do; subclasses name the mode and the server."""

    mode = ""
    server = "runserver"

    @classmethod
    def setUpClass(cls):
        cls.app = App(cls.mode, cls.server)

    @classmethod
    def tearDownClass(cls):
        cls.app.stop()

    def setUp(self):
        status, body = self.app.request("POST", "/voting/clear-db/")
        self.assertEqual(status, 200, body)
        self.assertEqual(body["status"], "success")
        self.assertEqual(self.stored(), {})
        # v4 may hold an earlier answer: wait until the reads are fresh
        eventually(lambda: self.assertEqual(self.app.get("/voting/see-all/"), (200, EMPTY)))

    def stored(self):
        """{(city, box, party): count} read from the store itself, not through the app."""
        if self.mode in ("v0", "v1", "v2"):
            out = {}
            for line in filter(None, PG.psql("SELECT city_number, ballotbox_no, partyname, count FROM vote_counts").splitlines()):
                city, box, party, count = line.split("|")
                out[(int(city), int(box), party)] = int(count)
            return out
        import redis

        r = redis.Redis(host="127.0.0.1", port=REDIS.port)
        out = {}
        for key in r.keys("votes:*"):
            _, city, box = key.decode().split(":")
            for party, count in r.hgetall(key).items():
                out[(int(city), int(box), party.decode())] = int(count)
        return out

    def test_a_vote_is_counted_and_seen_by_both_reads(self):
        status, body = self.app.vote(5, 12, {"party1": 10, "party2": 20})
        self.assertEqual(status, 200, body)
        self.assertEqual(body["status"], "success")
        eventually(lambda: self.assertEqual(self.stored(), {(5, 12, "party1"): 10, (5, 12, "party2"): 20}))
        want = {"votes": {"5": {"12": {"party1": 10, "party2": 20}}}, "total_votes": {"party1": 10, "party2": 20}}
        eventually(lambda: self.assertEqual(self.app.get("/voting/see-all/"), (200, want)))
        eventually(lambda: self.assertEqual(self.app.get("/voting/see-cities/"), (200, {"5": 30})))
        # a box voted again replaces its counts, in the box and in the sums
        self.assertEqual(self.app.vote(5, 12, {"party1": 4, "party3": 1})[0], 200)
        self.assertEqual(self.app.vote(81, 100000, {"party6": 400}, size=3)[0], 200)
        want = {
            "votes": {"5": {"12": {"party1": 4, "party2": 20, "party3": 1}}, "81": {"100000": {"party6": 400}}},
            "total_votes": {"party1": 4, "party2": 20, "party3": 1, "party6": 400},
        }

        def seen():
            status, body = self.app.get("/voting/see-all/")
            self.assertEqual(status, 200)
            # the sums' order is the store's; equal as dicts is what matters
            self.assertEqual(body["votes"], want["votes"])
            self.assertEqual(body["total_votes"], want["total_votes"])

        eventually(seen)
        eventually(lambda: self.assertEqual(self.app.get("/voting/see-cities/"), (200, {"5": 25, "81": 400})))

    def test_clear_db_empties_the_store(self):
        self.assertEqual(self.app.vote(3, 1, {"party1": 1})[0], 200)
        eventually(lambda: self.assertEqual(self.stored(), {(3, 1, "party1"): 1}))
        status, body = self.app.request("POST", "/voting/clear-db/")
        self.assertEqual((status, body["status"]), (200, "success"), body)
        eventually(lambda: self.assertEqual(self.stored(), {}))
        eventually(lambda: self.assertEqual(self.app.get("/voting/see-all/"), (200, EMPTY)))
        eventually(lambda: self.assertEqual(self.app.get("/voting/see-cities/"), (200, {})))
        # the parties survive: a vote still counts
        self.assertEqual(self.app.vote(3, 1, {"party2": 2})[0], 200)
        eventually(lambda: self.assertEqual(self.stored(), {(3, 1, "party2"): 2}))

    def test_each_rule_is_a_400_naming_the_field_and_value(self):
        ok = {"city_no": 1, "box_no": 1, "election_size": 1, "votes": {"party1": 1}}
        cases = [
            ({"city_no": 0}, "city_no must be from 1 to 81, got 0"),
            ({"city_no": 82}, "city_no must be from 1 to 81, got 82"),
            ({"city_no": "5"}, "city_no must be a whole number, got '5'"),
            ({"box_no": 1001}, "box_no must be from 1 to 1000 for election_size 1, got 1001"),
            ({"box_no": 0}, "box_no must be from 1 to 1000 for election_size 1, got 0"),
            ({"box_no": 10001, "election_size": 2}, "box_no must be from 1 to 10000 for election_size 2, got 10001"),
            ({"box_no": 100001, "election_size": 3}, "box_no must be from 1 to 100000 for election_size 3, got 100001"),
            ({"election_size": 4}, "election_size must be 1, 2 or 3, got 4"),
            ({"votes": {"party1": 200, "party2": 201}}, "count_sum (the sum of votes) must be at most 400, got 401"),
            ({"votes": {"party1": -1}}, "votes.party1 must be a whole number >= 0, got -1"),
            ({"votes": {"party1": 1, "party7": 0}}, "votes.party7: there is no party 'party7' (parties: party1, party2, party3, party4, party5, party6)"),
            ({"votes": {}}, "votes names no party"),
            ({"votes": None}, "votes must be an object of party name to count, got None"),
        ]
        for change, message in cases:
            with self.subTest(change=change):
                status, body = self.app.request("POST", "/voting/vote/", {**ok, **change})
                self.assertEqual(status, 400, body)
                self.assertEqual(body["status"], "error")
                self.assertIn(message, body["message"])
        status, body = self.app.request("POST", "/voting/vote/", {"box_no": 1, "votes": {"party1": 1}})
        self.assertEqual(status, 400)
        self.assertIn("city_no is missing", body["message"])
        self.assertIn("election_size is missing", body["message"])
        status, body = self.app.request("POST", "/voting/vote/", raw=b"{not json")
        self.assertEqual(status, 400)
        self.assertIn("the request body is not JSON", body["message"])
        status, body = self.app.request("POST", "/voting/vote/", [1, 2])
        self.assertEqual(status, 400)
        self.assertIn("the request body must be a JSON object, got list", body["message"])
        # the edges of every range are valid, and nothing refused was stored
        self.assertEqual(self.app.vote(81, 1000, {"party1": 400})[0], 200)
        time.sleep(0.5)  # a refused ballot v0 had queued would be written by now
        eventually(lambda: self.assertEqual(self.stored(), {(81, 1000, "party1"): 400}))

    def test_methods_and_health(self):
        status, body = self.app.get("/voting/vote/")
        self.assertEqual(status, 405)
        self.assertIn("answers POST only, not GET", body["message"])
        self.assertEqual(self.app.request("POST", "/voting/see-all/")[0], 405)
        self.assertEqual(self.app.request("GET", "/voting/clear-db/")[0], 405)
        status, body = self.app.get("/voting/")
        self.assertEqual(status, 200)
        self.assertEqual(body, {"status": "healthy", "storage_mode": self.mode,
                                "parties": ["party1", "party2", "party3", "party4", "party5", "party6"]})


class V0PubSub(ModeTests, unittest.TestCase):
    mode = "v0"

    def test_without_a_worker_votes_are_refused_with_503(self):
        # a channel no worker listens on: the app says so instead of losing the ballot
        app = App("v0", worker=False, env={"VOTING_CHANNEL": "nobody-listens"}, ready_status=503)
        try:
            status, body = app.get("/voting/")
            self.assertEqual(status, 503, body)
            self.assertIn("no vote worker is subscribed to Redis channel 'nobody-listens'", body["message"])
            status, body = app.vote(1, 1, {"party1": 1})
            self.assertEqual(status, 503, body)
            self.assertIn("nothing was queued", body["message"])
            # the rules still come first
            self.assertEqual(app.vote(0, 1, {"party1": 1})[0], 400)
        finally:
            app.stop()


    def test_the_worker_checks_what_it_receives(self):
        # straight onto the channel, past the view: the worker's own check refuses these
        import redis

        r = redis.Redis(host="127.0.0.1", port=REDIS.port)
        for bad in ({"kind": "vote", "city_no": 2, "box_no": 2, "election_size": 1, "votes": {"party9": 1}},
                    {"kind": "vote", "city_no": 99, "box_no": 2, "election_size": 1, "votes": {"party1": 1}},
                    {"kind": "nonsense"}):
            self.assertEqual(r.publish("votes", json.dumps(bad)), 1)
        self.assertEqual(r.publish("votes", "not json"), 1)
        good = {"kind": "vote", "city_no": 2, "box_no": 3, "election_size": 1, "votes": {"party1": 5}}
        self.assertEqual(r.publish("votes", json.dumps(good)), 1)
        # one subscriber handles messages in order: once the last is stored, the others were refused
        eventually(lambda: self.assertEqual(self.stored(), {(2, 3, "party1"): 5}))


class V1DirectSQL(ModeTests, unittest.TestCase):
    mode = "v1"


class V2ORM(ModeTests, unittest.TestCase):
    mode = "v2"


class V2ORMUnderGunicorn(ModeTests, unittest.TestCase):
    mode = "v2"
    server = "gunicorn"


class V3RedisHashes(ModeTests, unittest.TestCase):
    mode = "v3"


class V4CachedRedisHashes(ModeTests, unittest.TestCase):
    mode = "v4"

    def test_reads_are_stale_within_the_ttl_and_fresh_after(self):
        self.assertEqual(self.app.vote(9, 9, {"party1": 1})[0], 200)
        first = {"votes": {"9": {"9": {"party1": 1}}}, "total_votes": {"party1": 1}}
        eventually(lambda: self.assertEqual(self.app.get("/voting/see-all/"), (200, first)))
        eventually(lambda: self.assertEqual(self.app.get("/voting/see-cities/"), (200, {"9": 1})))
        cached_at = time.monotonic()
        self.assertEqual(self.app.vote(9, 9, {"party1": 7})[0], 200)
        self.assertEqual(self.stored(), {(9, 9, "party1"): 7})
        stale_all, stale_cities = self.app.get("/voting/see-all/"), self.app.get("/voting/see-cities/")
        if time.monotonic() - cached_at < CACHE_SECONDS:
            self.assertEqual(stale_all, (200, first))
            self.assertEqual(stale_cities, (200, {"9": 1}))
        time.sleep(max(0.0, cached_at + CACHE_SECONDS + 0.2 - time.monotonic()))
        self.assertEqual(self.app.get("/voting/see-all/"), (200, {"votes": {"9": {"9": {"party1": 7}}}, "total_votes": {"party1": 7}}))
        self.assertEqual(self.app.get("/voting/see-cities/"), (200, {"9": 7}))


class V4UnderGunicorn(V4CachedRedisHashes):
    server = "gunicorn"


class StartUp(unittest.TestCase):
    def test_an_unknown_storage_mode_stops_the_app_naming_the_variable(self):
        env = dict(os.environ, STORAGE_MODE="v9", PYTHONDONTWRITEBYTECODE="1")
        res = subprocess.run([sys.executable, "manage.py", "serve"], cwd=HERE, env=env, capture_output=True, text=True, timeout=60)
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("STORAGE_MODE='v9' is not a storage mode; valid modes are: v0, v1, v2, v3, v4", res.stderr)

    def test_an_unknown_server_is_refused(self):
        env = dict(os.environ, STORAGE_MODE="v3", VOTING_SERVER="uwsgi", REDIS_ADDR=REDIS.addr, PYTHONDONTWRITEBYTECODE="1")
        res = subprocess.run([sys.executable, "manage.py", "serve"], cwd=HERE, env=env, capture_output=True, text=True, timeout=60)
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("VOTING_SERVER='uwsgi' is not a server; valid servers are: runserver, gunicorn", res.stderr)


if __name__ == "__main__":
    unittest.main()
