"""Study 001's users for Locust (runner = "locust" in experiments/study-001.hcl).

Each user casts a ballot, reads the totals and the cities, then waits 1 to
3 s. The same flow for orchbench's generator is the Go workload
voting:study-001 (apps/voting/workload); the two must stay alike, request
for request, so that their figures compare.

The study's users shared one city counter and voted for seven parties with
totals up to 450; its app skipped what it did not know, ours refuses the
ballot (400). So the ballots here are ones the rules accept: a total from
1 to 400 split over the parties the experiment deploys (seven).
"""
import itertools
import random
import threading

from locust import FastHttpUser, between, task

PARTIES = 7
CITIES = 81
MAX_BOX_TOTAL = 400

_cities = itertools.count()
_cities_lock = threading.Lock()


def next_city():
    """The next city of the counter every user shares: 1..81, then 1 again."""
    with _cities_lock:
        return next(_cities) % CITIES + 1


def ballot():
    """A ballot for box 1 of an election of size 1, its total split at random."""
    left = random.randint(1, MAX_BOX_TOTAL)
    votes = {}
    for i in range(1, PARTIES + 1):
        n = left if i == PARTIES else random.randint(0, left)
        votes[f"party{i}"] = n
        left -= n
    return {"city_no": next_city(), "box_no": 1, "election_size": 1, "votes": votes}


class Voter(FastHttpUser):
    wait_time = between(1, 3)
    network_timeout = 10.0
    connection_timeout = 10.0

    @task
    def vote_then_read(self):
        self.client.post("/voting/vote/", json=ballot(), name="POST /voting/vote/")
        self.client.get("/voting/see-all/", name="GET /voting/see-all/")
        self.client.get("/voting/see-cities/", name="GET /voting/see-cities/")
