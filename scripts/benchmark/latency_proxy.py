#!/usr/bin/env python3
"""A TCP proxy on loopback that adds latency, for scripts/bench-network.

Listens on 127.0.0.1:LISTEN (repeat --listen for several ports, each a "host" of its
own) and forwards every connection to 127.0.0.1:TARGET, byte for byte (TLS passes
through untouched). Every chunk, in both directions, is forwarded RTT/2 after it
arrived: a request and its answer take one round trip more, a TLS handshake its round
trips. The TCP handshake's round trip is added too: a client's first bytes go no earlier
than one RTT after its connection was accepted (on a real network they could not leave
before the SYN-ACK came back). Chunks are not serialised behind each other's delays: each
is due at its arrival time + RTT/2, in order, so the bandwidth is loopback's (the bytes
held in flight in one direction are capped at --max-buffer; the reader pauses over it).

Only 127.0.0.1, for listening and for the target. Exits on SIGTERM or SIGINT. Prints one
line when ready: "latency_proxy: pid PID ready on 127.0.0.1:PORT[,PORT...] -> 127.0.0.1:TARGET, rtt N ms".
At exit, prints the connections and bytes forwarded.

With --timeline FILE, writes at exit one line per 50 ms from the first connection: the
milliseconds, the connections accepted and the bytes forwarded down (server to client) in
that slice, to see when a run's answers flowed.

usage: latency_proxy.py --listen PORT [--listen PORT ...] --target PORT --rtt-ms N
                        [--max-buffer BYTES] [--no-handshake-rtt] [--timeline FILE]
"""
import argparse
import asyncio
import collections
import os
import signal
import sys

HOST = "127.0.0.1"
CHUNK = 65536


class Stats:
    connections = 0
    bytes_up = 0
    bytes_down = 0
    errors = 0
    start = None
    slices = collections.defaultdict(lambda: [0, 0])   # 50 ms slice -> [accepted, bytes down]

    @classmethod
    def slice(cls, loop):
        now = loop.time()
        if cls.start is None:
            cls.start = now
        return int((now - cls.start) / 0.05)


async def pipe(reader, writer, delay, not_before, max_buffer, up):
    """Reads chunks from `reader`; each is written to `writer` at max(arrival + delay,
    not_before); EOF passes on as a half-close at its own due time."""
    loop = asyncio.get_running_loop()
    queue = collections.deque()
    ready = asyncio.Event()     # something queued
    room = asyncio.Event()      # the queue under max_buffer
    room.set()
    held = 0

    async def read_side():
        nonlocal held
        try:
            while True:
                await room.wait()
                data = await reader.read(CHUNK)
                due = max(loop.time() + delay, not_before)
                queue.append((due, data))
                ready.set()
                if not data:
                    return
                held += len(data)
                if held >= max_buffer:
                    room.clear()
        except (ConnectionError, OSError):
            queue.append((loop.time(), None))   # reset: close at once
            ready.set()

    async def write_side():
        nonlocal held
        while True:
            while not queue:
                ready.clear()
                await ready.wait()
            due, data = queue.popleft()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if data is None:            # the other side reset
                raise ConnectionResetError
            if not data:                # EOF: half-close, keep the other direction
                if writer.can_write_eof():
                    writer.write_eof()
                    await writer.drain()
                return
            writer.write(data)
            held -= len(data)
            if up:
                Stats.bytes_up += len(data)
            else:
                Stats.bytes_down += len(data)
                Stats.slices[Stats.slice(loop)][1] += len(data)
            if held < max_buffer:
                room.set()
            await writer.drain()

    reading = asyncio.ensure_future(read_side())
    try:
        await write_side()
    finally:
        reading.cancel()


async def handle(client_reader, client_writer, target, delay, handshake, max_buffer):
    loop = asyncio.get_running_loop()
    accepted = loop.time()
    Stats.connections += 1
    Stats.slices[Stats.slice(loop)][0] += 1
    try:
        server_reader, server_writer = await asyncio.open_connection(HOST, target)
    except OSError:
        Stats.errors += 1
        client_writer.close()
        return
    # The client's first bytes leave after the TCP handshake's round trip, arrive RTT/2 later.
    up = asyncio.ensure_future(pipe(client_reader, server_writer, delay, accepted + handshake + delay, max_buffer, True))
    down = asyncio.ensure_future(pipe(server_reader, client_writer, delay, 0, max_buffer, False))
    try:
        done, pending = await asyncio.wait({up, down}, return_when=asyncio.FIRST_EXCEPTION)
        failed = any(t.exception() is not None for t in done)
        if failed:
            Stats.errors += 1
            for t in pending:
                t.cancel()
            for w in (client_writer, server_writer):
                w.transport.abort()
        else:
            for w in (client_writer, server_writer):
                w.close()
    except asyncio.CancelledError:
        for w in (client_writer, server_writer):
            w.transport.abort()
        raise


async def main():
    parser = argparse.ArgumentParser(description="A latency-adding TCP proxy on 127.0.0.1.")
    parser.add_argument("--listen", type=int, action="append", required=True, help="port on 127.0.0.1 (repeatable)")
    parser.add_argument("--target", type=int, required=True, help="port on 127.0.0.1 to forward to")
    parser.add_argument("--rtt-ms", type=float, required=True, help="round trip added, ms (half each way)")
    parser.add_argument("--max-buffer", type=int, default=16 << 20, help="bytes held per direction of a connection")
    parser.add_argument("--no-handshake-rtt", action="store_true", help="do not add the TCP handshake's round trip")
    parser.add_argument("--timeline", help="file for the connections and bytes down per 50 ms, written at exit")
    args = parser.parse_args()
    if args.rtt_ms < 0 or args.rtt_ms > 10000:
        parser.error("--rtt-ms must be between 0 and 10000")
    rtt = args.rtt_ms / 1000
    handshake = 0 if args.no_handshake_rtt else rtt

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    servers = []
    for port in args.listen:
        servers.append(await asyncio.start_server(
            lambda r, w: handle(r, w, args.target, rtt / 2, handshake, args.max_buffer),
            HOST, port, reuse_address=True, backlog=1024))
    ports = ",".join(str(s.sockets[0].getsockname()[1]) for s in servers)
    print(f"latency_proxy: pid {os.getpid()} ready on {HOST}:{ports} -> {HOST}:{args.target}, rtt {args.rtt_ms:g} ms", flush=True)
    await stop.wait()
    for s in servers:
        s.close()
    if args.timeline:
        with open(args.timeline, "w") as out:
            out.write("ms\taccepted\tbytes_down\n")
            for k in range(max(Stats.slices, default=-1) + 1):
                accepted, down = Stats.slices.get(k, (0, 0))
                out.write(f"{k * 50}\t{accepted}\t{down}\n")
    print(f"latency_proxy: stopped: {Stats.connections} connections, {Stats.bytes_up} bytes up, {Stats.bytes_down} down, "
          f"{Stats.errors} ended by an error", flush=True)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    sys.exit(0)
