"""v0's worker: the subscriber of the vote channel, run by `manage.py vote_worker`.

It keeps one PostgreSQL connection, as the study's subscriber did, checks
every ballot again (the view's rules, then the party table) and writes a
valid one in a single transaction. A store that fails ends the process
with the error, so the orchestrator restarts it visibly."""
import json
import sys

import redis
from django.conf import settings

from . import validation
from .stores import sql


class Worker:
    def __init__(self, out=sys.stdout):
        self.out = out
        self.rejected = 0
        self.conn = sql.connect()

    def log(self, text):
        print(f"vote_worker: {text}", file=self.out, flush=True)

    def reject(self, why):
        self.rejected += 1
        self.log(f"rejected ({self.rejected} so far): {why}")

    def handle(self, raw):
        """Act on one message from the channel."""
        try:
            message = json.loads(raw)
        except ValueError:
            self.reject(f"a message that is not JSON: {raw[:200]!r}")
            return
        kind = message.get("kind") if isinstance(message, dict) else None
        if kind == "clear":
            with self.conn, self.conn.cursor() as cur:
                cur.execute("DELETE FROM vote_counts")
            self.log("deleted every vote")
            return
        if kind != "vote":
            self.reject(f"a message of unknown kind {kind!r}")
            return
        try:
            ballot = validation.check({k: v for k, v in message.items() if k != "kind"})
            with self.conn, self.conn.cursor() as cur:
                cur.execute("SELECT partyname FROM party WHERE partyname = ANY(%s)", (list(ballot.votes),))
                known = {name for (name,) in cur.fetchall()}
                validation.require_parties(ballot, set(ballot.votes) - known, settings.VOTING_PARTIES)
                sql.upsert(cur, ballot)
        except validation.Invalid as e:
            self.reject(f"a ballot: {e}")

    def run(self):
        """Subscribe and handle messages until the connection ends."""
        # no socket timeout: a quiet channel is no failure
        pubsub = redis.Redis(socket_connect_timeout=10, **settings.REDIS).pubsub(ignore_subscribe_messages=True)
        pubsub.subscribe(settings.VOTING_CHANNEL)
        self.log(f"subscribed to Redis channel {settings.VOTING_CHANNEL!r}")
        for message in pubsub.listen():
            if message["type"] == "message":
                self.handle(message["data"].decode())
