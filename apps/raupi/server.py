"""Raupi: seed study 000's CPU-bound loop on Flask 2.0.3 served by Waitress 2.1.1.

GET /?n=N runs N iterations of result += random() * random() and answers
text/plain with the first 44 characters of "The result of this run is :  "
followed by the sum, like Taewa and Riwai. A missing or empty n means the
study's Raupi default of 200; anything but a whole number from 0 to MAX_N is
a 400 naming the parameter and the value. The port comes from PORT.
"""
import os
import random
import re
import signal
import sys

from flask import Flask, Response, request

PREFIX = "The result of this run is :  "
ANSWER_LENGTH = 44
DEFAULT_N = 200
# A bound on n keeps one request from holding a worker thread for minutes;
# the study's heaviest difficulty is 80000.
MAX_N = 10_000_000
_WHOLE = re.compile(r"[0-9]+")


def work(n):
    result = 0
    for _ in range(n):
        result += random.random() * random.random()
    return (PREFIX + str(result))[:ANSWER_LENGTH]


def iterations(values):
    """n from the query's values for it, or ValueError with the client's message."""
    if not values or values == [""]:
        return DEFAULT_N
    if len(values) != 1 or not _WHOLE.fullmatch(values[0]) or int(values[0]) > MAX_N:
        raise ValueError(
            "raupi: query parameter n must be a whole number from 0 to %d, got %s" % (MAX_N, ", ".join(repr(v) for v in values))
        )
    return int(values[0])


def create_app():
    app = Flask("raupi")

    @app.get("/")
    def answer():
        try:
            n = iterations(request.args.getlist("n"))
        except ValueError as e:
            return Response(str(e) + "\n", status=400, mimetype="text/plain")
        return Response(work(n), mimetype="text/plain")

    return app


def main():
    import waitress

    port = int(os.environ.get("PORT", "8080"))
    # Nomad and Docker stop a task with SIGTERM; exit at once and cleanly
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("raupi listening on %d" % port, flush=True)
    # Waitress's defaults (4 threads) as in the study, which called serve(app)
    waitress.serve(create_app(), host=os.environ.get("HOST", "0.0.0.0"), port=port, ident="raupi")


if __name__ == "__main__":
    main()
