"""What every storage mode provides to the views."""


class Unavailable(Exception):
    """The store cannot take the request now (503), e.g. no v0 worker is listening."""


class Store:
    """One storage mode. record and clear answer the message the client gets."""

    mode = ""

    def prepare(self):
        """Make the schema and the party list (idempotent; every replica runs it at start)."""
        raise NotImplementedError

    def record(self, ballot):
        """Store the ballot's counts, replacing earlier counts of its box and parties.

        Raises validation.Invalid naming unknown parties (nothing stored)."""
        raise NotImplementedError

    def clear(self):
        """Delete every vote; the parties stay."""
        raise NotImplementedError

    def all_votes(self):
        """{"votes": {city: {box: {party: count}}}, "total_votes": {party: count}}, keys as strings."""
        raise NotImplementedError

    def cities(self):
        """{city: total of its votes}, keys as strings."""
        raise NotImplementedError

    def health(self):
        """The parties the store holds; raises when the store does not answer."""
        raise NotImplementedError


def nest(rows):
    """The see-all shape from (city, box, party, count) rows."""
    votes, totals = {}, {}
    for city, box, party, count in rows:
        boxes = votes.setdefault(str(city), {})
        boxes.setdefault(str(box), {})[party] = count
        totals[party] = totals.get(party, 0) + count
    # a box's parties in name order, so its JSON is one string whatever the
    # store's order (the pack's probe matches it)
    for boxes in votes.values():
        for key, counts in boxes.items():
            boxes[key] = dict(sorted(counts.items()))
    return {"votes": votes, "total_votes": totals}
