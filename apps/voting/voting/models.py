"""The study's two tables. v0 and v1 write them with SQL, v2 through these
models; the table names are the SQL ones, so every PostgreSQL mode shares
one schema and one migration."""
from django.db import models


class Party(models.Model):
    party_id = models.AutoField(primary_key=True)
    partyname = models.CharField(max_length=100, unique=True)

    class Meta:
        db_table = "party"


class VoteCount(models.Model):
    city_number = models.IntegerField()
    ballotbox_no = models.IntegerField()
    partyname = models.CharField(max_length=100)
    count = models.IntegerField()

    class Meta:
        db_table = "vote_counts"
        constraints = [
            # the conflict target of the SQL upsert (ON CONFLICT ...)
            models.UniqueConstraint(fields=["city_number", "ballotbox_no", "partyname"], name="vote_counts_box_party"),
        ]
