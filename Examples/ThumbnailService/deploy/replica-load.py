#!/usr/bin/env python3
"""A bounded load through a load balancer, on loopback only: `--requests` signed GET thumbnails
from `--concurrency` clients, stopping at `--seconds` at the latest; prints every status and
error, and the time of each, as JSON.

`--kill-at F --restart-at G --kill-command CMD --restart-command CMD`: once a fraction F of the
requests is sent, CMD kills a replica; at G, the other CMD restarts it.

Each client connects from a loopback address of its own (127.0.1.1, 127.0.1.2, ...): distinct
users, as a load balancer's X-Forwarded-For names them to the replicas."""
import argparse, base64, hashlib, hmac, http.client, json, subprocess, sys, threading, time
from urllib.parse import urlparse


def signed(path, key):
    mac = hmac.new(bytes.fromhex(key), path.encode(), hashlib.sha256).digest()
    return "/" + base64.urlsafe_b64encode(mac).decode().rstrip("=") + path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--source", default="local:///photo.jpg")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--concurrency", type=int, default=6)
    parser.add_argument("--kill-at", type=float)
    parser.add_argument("--restart-at", type=float)
    parser.add_argument("--kill-command")
    parser.add_argument("--restart-command")
    args = parser.parse_args()
    target = urlparse(args.url)
    if target.hostname not in ("127.0.0.1", "localhost"):
        sys.exit("replica-load: loopback only")
    encoded = base64.urlsafe_b64encode(args.source.encode()).decode().rstrip("=")
    # A few sizes and formats, as pages ask for; each URL signed as the page's server would.
    paths = [signed(f"/{p}/{encoded}", args.key) for p in ("s:256,f:webp", "fill:200:200,f:jpeg", "s:128,f:webp", "fit:320:240,f:jpeg")]
    lock = threading.Lock()
    sent = 0
    results = []
    events = []
    started = time.monotonic()
    deadline = started + args.seconds

    def take():
        nonlocal sent
        with lock:
            if sent >= args.requests or time.monotonic() > deadline:
                return None
            sent += 1
            index = sent
        if args.kill_at and index == int(args.requests * args.kill_at):
            events.append({"event": "kill", "at": round(time.monotonic() - started, 3), "request": index})
            subprocess.run(args.kill_command, shell=True, check=False)
        if args.restart_at and index == int(args.requests * args.restart_at):
            events.append({"event": "restart", "at": round(time.monotonic() - started, 3), "request": index})
            subprocess.Popen(args.restart_command, shell=True)
        return index

    def client(number):
        source = (f"127.0.1.{number + 1}", 0)
        connection = None
        while True:
            index = take()
            if index is None:
                return
            path = paths[index % len(paths)]
            begin = time.monotonic()
            try:
                if connection is None:
                    connection = http.client.HTTPConnection(target.hostname, target.port, timeout=30, source_address=source)
                connection.request("GET", path, headers={"Accept": "image/webp,*/*"})
                response = connection.getresponse()
                body = response.read()
                outcome = {"status": response.status, "bytes": len(body)}
                if response.getheader("Connection", "").lower() == "close":
                    connection.close()
                    connection = None
            except Exception as error:  # connection refused, reset, timeout: a lost request
                outcome = {"error": type(error).__name__ + ": " + str(error)}
                if connection is not None:
                    connection.close()
                connection = None
            outcome["at"] = round(begin - started, 3)
            outcome["ms"] = round((time.monotonic() - begin) * 1000, 1)
            with lock:
                results.append(outcome)

    if args.concurrency > 250:
        sys.exit("replica-load: at most 250 clients (one loopback address each)")
    threads = [threading.Thread(target=client, args=(number,)) for number in range(args.concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    statuses = {}
    for result in results:
        key = str(result.get("status", "error"))
        statuses[key] = statuses.get(key, 0) + 1
    failed = [r for r in results if r.get("status") != 200]
    print(json.dumps({
        "sent": len(results), "ok": statuses.get("200", 0), "failed": len(failed), "statuses": statuses,
        "seconds": round(elapsed, 2), "per_second": round(len(results) / elapsed, 1),
        "events": events, "failures": failed[:20],
    }, indent=1))


if __name__ == "__main__":
    main()
