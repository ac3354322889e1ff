"""The study's vote rules, checked on the whole ballot box before anything is stored.

The study checked, per party: the box number within the range its
election_size allows, the city from 1 to 81, the ballot's total at most
400, and the party in the party table. Here the first three are checked
by `check` (no store needed), the party by each store against its own
party list; every violation is reported, each naming its field and value.
"""
from dataclasses import dataclass

CITY_MIN, CITY_MAX = 1, 81
COUNT_SUM_MAX = 400
# election_size -> the highest box number
BOX_MAX = {1: 1000, 2: 10000, 3: 100000}


class Invalid(Exception):
    """A ballot the rules refuse; errors are one message per violation."""

    def __init__(self, errors):
        super().__init__("; ".join(errors))
        self.errors = list(errors)


@dataclass(frozen=True)
class Ballot:
    """One ballot box's counts: votes maps party name to count."""

    city_no: int
    box_no: int
    election_size: int
    votes: dict

    def as_message(self):
        return {"city_no": self.city_no, "box_no": self.box_no, "election_size": self.election_size, "votes": self.votes}


def _whole(value):
    # JSON true/false are ints to Python; a ballot's numbers never are
    return isinstance(value, int) and not isinstance(value, bool)


def check(data):
    """The Ballot in data (a decoded JSON request body), or Invalid naming every violation."""
    if not isinstance(data, dict):
        raise Invalid([f"the request body must be a JSON object, got {type(data).__name__}"])
    errors = []
    fields = {}
    for name in ("city_no", "box_no", "election_size"):
        if name not in data:
            errors.append(f"{name} is missing")
        elif not _whole(data[name]):
            errors.append(f"{name} must be a whole number, got {data[name]!r}")
        else:
            fields[name] = data[name]
    size = fields.get("election_size")
    if size is not None and size not in BOX_MAX:
        errors.append(f"election_size must be 1, 2 or 3, got {size}")
        size = None
    box = fields.get("box_no")
    if box is not None and size is not None and not 1 <= box <= BOX_MAX[size]:
        errors.append(f"box_no must be from 1 to {BOX_MAX[size]} for election_size {size}, got {box}")
    city = fields.get("city_no")
    if city is not None and not CITY_MIN <= city <= CITY_MAX:
        errors.append(f"city_no must be from {CITY_MIN} to {CITY_MAX}, got {city}")
    votes = data.get("votes")
    if "votes" not in data:
        errors.append("votes is missing")
    elif not isinstance(votes, dict):
        errors.append(f"votes must be an object of party name to count, got {votes!r}")
    elif not votes:
        errors.append("votes names no party")
    else:
        good = True
        for party, count in votes.items():
            if not _whole(count) or count < 0:
                errors.append(f"votes.{party} must be a whole number >= 0, got {count!r}")
                good = False
        if good:
            total = sum(votes.values())
            if total > COUNT_SUM_MAX:
                errors.append(f"count_sum (the sum of votes) must be at most {COUNT_SUM_MAX}, got {total}")
    if errors:
        raise Invalid(errors)
    return Ballot(city_no=fields["city_no"], box_no=fields["box_no"], election_size=fields["election_size"], votes=dict(votes))


def require_parties(ballot, unknown, known):
    """Invalid naming each party of the ballot in unknown (those the store lacks), if any."""
    missing = [p for p in ballot.votes if p in unknown]
    if missing:
        listed = ", ".join(known)
        raise Invalid([f"votes.{p}: there is no party {p!r} (parties: {listed})" for p in missing])
