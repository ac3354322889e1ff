"""v2: Django's ORM, every ballot in one transaction (transaction.atomic): the
party checks and the writes commit together or not at all."""
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Sum

from .. import validation
from ..models import Party, VoteCount
from . import base, sql


class ORMStore(base.Store):
    mode = "v2"

    def prepare(self):
        sql.prepare()

    def record(self, ballot):
        with transaction.atomic():
            unknown = {p for p in ballot.votes if not Party.objects.filter(partyname=p).exists()}
            # raised inside the block: the transaction rolls back
            validation.require_parties(ballot, unknown, settings.VOTING_PARTIES)
            for party, count in ballot.votes.items():
                VoteCount.objects.update_or_create(
                    city_number=ballot.city_no, ballotbox_no=ballot.box_no, partyname=party, defaults={"count": count}
                )
        return f"votes of city {ballot.city_no} box {ballot.box_no} counted"

    def clear(self):
        with transaction.atomic():
            VoteCount.objects.all().delete()
        return "every vote deleted"

    def all_votes(self):
        rows = VoteCount.objects.values_list("city_number", "ballotbox_no", "partyname", "count")
        return base.nest(rows)

    def cities(self):
        totals = VoteCount.objects.values("city_number").annotate(total=Sum("count"))
        return {str(t["city_number"]): t["total"] for t in totals}

    def health(self):
        with connection.cursor() as cur:
            return sql.parties(cur)
