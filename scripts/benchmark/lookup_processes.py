#!/usr/bin/env python3
"""A lookup process a notification: N `avatar-cache lookup --user ID --cache CACHE`
processes in a row, one at a time, each for a user drawn at random (seeded) from IDS.
Prints, as one Markdown table row: the processes run, the index's write-ahead log
(`index.sqlite-wal`) before and after, and the time a process took (spawn to exit, as a
shell hook sees it) for the first and the last thousand: p50 and p99 in ms. Exits 1
when a lookup fails.

usage: lookup_processes.py AVATAR_CACHE CACHE IDS N [LABEL]
"""
import os, random, subprocess, sys, time

binary, cache, ids_path, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
label = sys.argv[5] if len(sys.argv) > 5 else "lookup processes"
with open(ids_path) as f:
    ids = [line.strip() for line in f if line.strip()]
wal = os.path.join(cache, "index.sqlite-wal")


def wal_size():
    try:
        return os.path.getsize(wal)
    except FileNotFoundError:
        return 0


def mb(size):
    return f"{size / 1e6:.2f} MB"


def percentiles(times):
    ordered = sorted(times)
    return ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, len(ordered) * 99 // 100)]


rng = random.Random(68)
before = wal_size()
times = []
for _ in range(count):
    user = rng.choice(ids)
    start = time.perf_counter()
    done = subprocess.run([binary, "lookup", "--cache", cache, "--user", user], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    times.append((time.perf_counter() - start) * 1000)
    if done.returncode != 0:
        sys.exit(f"lookup_processes: {user}: exit {done.returncode}: {done.stderr.decode().strip()}")
after = wal_size()
window = min(1000, count)
first50, first99 = percentiles(times[:window])
last50, last99 = percentiles(times[-window:])
print(f"| {label} | {count} | {mb(before)} -> {mb(after)} | first {window}: p50 {first50:.1f} ms, p99 {first99:.1f} ms; "
      f"last {window}: p50 {last50:.1f} ms, p99 {last99:.1f} ms |")
