"""SQL shared by the PostgreSQL modes: v0's reads and worker, v1, and the start-up of v0, v1 and v2."""
import psycopg2
from django.conf import settings
from django.core.management import call_command

UPSERT = (
    "INSERT INTO vote_counts (city_number, ballotbox_no, partyname, count) VALUES (%s, %s, %s, %s) "
    "ON CONFLICT (city_number, ballotbox_no, partyname) DO UPDATE SET count = EXCLUDED.count"
)
PARTY_EXISTS = "SELECT 1 FROM party WHERE partyname = %s"
ALL_ROWS = "SELECT city_number, ballotbox_no, partyname, count FROM vote_counts"
CITY_TOTALS = "SELECT city_number, SUM(count) FROM vote_counts GROUP BY city_number"
PARTIES = "SELECT partyname FROM party ORDER BY partyname"
# Any fixed number: the key of the advisory lock that serialises start-ups.
MIGRATE_LOCK = 4801


def connect():
    """A new connection, as the study's psycopg2 code opened for every call."""
    return psycopg2.connect(**settings.POSTGRES)


def upsert(cur, ballot):
    for party, count in ballot.votes.items():
        cur.execute(UPSERT, (ballot.city_no, ballot.box_no, party, count))


def city_totals(cur):
    cur.execute(CITY_TOTALS)
    return {str(city): int(total) for city, total in cur.fetchall()}


def parties(cur):
    cur.execute(PARTIES)
    return [name for (name,) in cur.fetchall()]


def prepare():
    """Migrate and make the party table hold exactly settings.VOTING_PARTIES.

    Replicas start together: a session advisory lock lets one migrate at a
    time, and the others then find nothing left to do."""
    conn = connect()
    try:
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("SELECT pg_advisory_lock(%s)", (MIGRATE_LOCK,))
            try:
                call_command("migrate", interactive=False, verbosity=0)
                cur.execute("INSERT INTO party (partyname) SELECT unnest(%s::text[]) ON CONFLICT (partyname) DO NOTHING", (settings.VOTING_PARTIES,))
                cur.execute("DELETE FROM party WHERE NOT (partyname = ANY(%s::text[]))", (settings.VOTING_PARTIES,))
            finally:
                cur.execute("SELECT pg_advisory_unlock(%s)", (MIGRATE_LOCK,))
    finally:
        conn.close()
