"""v1: psycopg2 without the ORM, a new connection for every call, as the study's
code did: one per party to check it exists, one per party to write it, one per read."""
from django.conf import settings

from .. import validation
from . import base, sql


class DirectSQLStore(base.Store):
    mode = "v1"

    def prepare(self):
        sql.prepare()

    def _party_exists(self, party):
        conn = sql.connect()
        try:
            with conn.cursor() as cur:
                cur.execute(sql.PARTY_EXISTS, (party,))
                return cur.fetchone() is not None
        finally:
            conn.close()

    def _write(self, ballot, party, count):
        conn = sql.connect()
        try:
            with conn.cursor() as cur:
                cur.execute(sql.UPSERT, (ballot.city_no, ballot.box_no, party, count))
            conn.commit()
        finally:
            conn.close()

    def record(self, ballot):
        unknown = {p for p in ballot.votes if not self._party_exists(p)}
        validation.require_parties(ballot, unknown, settings.VOTING_PARTIES)
        for party, count in ballot.votes.items():
            self._write(ballot, party, count)
        return f"votes of city {ballot.city_no} box {ballot.box_no} counted"

    def clear(self):
        conn = sql.connect()
        try:
            with conn.cursor() as cur:
                cur.execute("DELETE FROM vote_counts")
            conn.commit()
        finally:
            conn.close()
        return "every vote deleted"

    def _read(self, fn):
        conn = sql.connect()
        try:
            with conn.cursor() as cur:
                return fn(cur)
        finally:
            conn.close()

    def all_votes(self):
        def rows(cur):
            cur.execute(sql.ALL_ROWS)
            return base.nest(cur.fetchall())

        return self._read(rows)

    def cities(self):
        return self._read(sql.city_totals)

    def health(self):
        return self._read(sql.parties)
