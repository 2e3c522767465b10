"""The zoo's WSGI app (gunicorn, waitress): burns an exponential time of mean
BURN_MS of CPU per request, by an iteration count, never by sleeping or by
reading a clock in the loop. Each process calibrates its loop once at import
as the fastest of 20 samples on its thread's own CPU clock (time.thread_time),
which another process's turn on the CPU does not advance."""
import os
import random
import time

BURN_S = float(os.environ.get("BURN_MS", "5")) / 1000.0
CHUNK = 20000


def spin(n):
    x = 0
    for i in range(n):
        x += i % 7
    return x


def calibrate():
    best = 0.0
    for _ in range(20):
        t0 = time.thread_time()
        spin(CHUNK)
        t = time.thread_time() - t0
        if t > 0 and CHUNK / t > best:
            best = CHUNK / t
    return best


RATE = calibrate()
BODY = b"ok\n"


def app(environ, start_response):
    spin(int(random.expovariate(1.0) * BURN_S * RATE))
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(BODY)))])
    return [BODY]
