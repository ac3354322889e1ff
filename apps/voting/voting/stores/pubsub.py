"""v0: the view checks the ballot and publishes it on a Redis channel; the
worker (manage.py vote_worker) subscribes, checks it again against the
party table (the study's validate function) and writes PostgreSQL. Reads
query PostgreSQL with a new connection each, as the study's read functions
(Cloud Functions) did.

What a vote's answer means: 200 says the ballot passed the rules and was
handed to a subscribed worker, not that it is stored yet; it becomes
visible to the reads a moment later. Redis pub/sub keeps nothing for
absent subscribers, so when PUBLISH reaches no worker the ballot is lost,
and the answer is a 503 saying so instead of the study's unconditional
success. clear-db is queued the same way."""
import json

from django.conf import settings

from .. import validation
from . import base, sql
from .pgdirect import DirectSQLStore
from .redisclient import client


def publish(message):
    """Publish message (a dict) on the channel; raises Unavailable when no worker got it."""
    receivers = client().publish(settings.VOTING_CHANNEL, json.dumps(message))
    if receivers == 0:
        raise base.Unavailable(
            f"no vote worker is subscribed to Redis channel {settings.VOTING_CHANNEL!r}; nothing was queued"
        )
    return receivers


class PubSubStore(base.Store):
    mode = "v0"

    def __init__(self):
        self._reads = DirectSQLStore()

    def prepare(self):
        client().ping()
        sql.prepare()

    def record(self, ballot):
        # the configured list is what prepare() put in the table the worker checks
        validation.require_parties(ballot, set(ballot.votes) - set(settings.VOTING_PARTIES), settings.VOTING_PARTIES)
        publish({"kind": "vote", **ballot.as_message()})
        return f"votes of city {ballot.city_no} box {ballot.box_no} queued for the worker"

    def clear(self):
        publish({"kind": "clear"})
        return "deletion of every vote queued for the worker"

    def all_votes(self):
        return self._reads.all_votes()

    def cities(self):
        return self._reads.cities()

    def health(self):
        subscribed = dict(client().pubsub_numsub(settings.VOTING_CHANNEL)).get(settings.VOTING_CHANNEL.encode(), 0)
        if subscribed == 0:
            raise base.Unavailable(f"no vote worker is subscribed to Redis channel {settings.VOTING_CHANNEL!r}")
        return self._reads.health()
