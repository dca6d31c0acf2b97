#!/usr/bin/env python3
"""Runs a command and prints one JSON line: wall seconds, CPU seconds (user + system of
the whole process tree, from the kernel's accounting of waited-for children, also split
into user and sys), the peak resident memory of the whole tree (sum of RSS of every
descendant, sampled every 100 ms from /proc: the tables use the kernel's figure, and a
sample costs the measured run CPU) and the kernel's peak RSS of the largest
process (maxRSS).

usage: measure.py -- COMMAND...
"""
import json, os, resource, select, subprocess, sys, time

command = sys.argv[sys.argv.index("--") + 1:]


def tree_rss(root):
    # The tree through each thread's `children` list: a few files a sample, where reading
    # every process's stat took 6 % of a core, which the measured run lost.
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[1]) * PAGE
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    stack.extend(int(child) for child in f.read().split())
            except OSError:
                pass   # the thread ended since the listing
    return total


PAGE = os.sysconf("SC_PAGE_SIZE")
before = resource.getrusage(resource.RUSAGE_CHILDREN)
start = time.monotonic()
process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
peak = tree_rss(process.pid)
# Woken when the process ends (a pidfd), not at the next sample: the wall time is exact.
ended = select.poll()
ended.register(os.pidfd_open(process.pid), select.POLLIN)
while not ended.poll(100):
    peak = max(peak, tree_rss(process.pid))
process.wait()
wall = time.monotonic() - start
after = resource.getrusage(resource.RUSAGE_CHILDREN)
user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
cpu = user + system
stderr = process.stderr.read().decode(errors="replace")
# The kernel's peak of the largest process (ru_maxrss, KB): the sampled tree misses
# peaks shorter than 100 ms.
print(json.dumps({"wall": wall, "cpu": cpu, "user": user, "sys": system, "peakRSS": peak, "maxRSS": after.ru_maxrss * 1024, "status": process.returncode, "stderr": stderr[-2000:]}))
