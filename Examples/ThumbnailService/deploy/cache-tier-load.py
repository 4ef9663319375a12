#!/usr/bin/env python3
"""A bounded Zipf load of signed GET thumbnails, on loopback only, for deploy/cache-tier.sh.

`--sources` sources (/p0.jpg ... at `--origin`) times the processings below make the URLs
(2,000 for 200 sources); each request picks one by a Zipf law (`--zipf`, s = 1.1: a few popular,
a long tail) and a browser's Accept string at random. `--concurrency` clients send until
`--requests` are sent or `--seconds` have passed. `--kill-at F --kill-command CMD` and
`--restart-at G --restart-command CMD` run the commands when a fraction F (G) of the time has
passed. `--record FILE` writes each request answered 200 as `path<TAB>accept`, for a replay of
what is now cached (cache-tier.sh's hits-only phase). Prints one JSON object: counts by status and by X-Cache, requests per second, p50 and
p99 in ms (all, and hits alone), 5xx, and errors."""
import argparse, base64, bisect, hashlib, hmac, http.client, json, random, subprocess, sys, threading, time
from urllib.parse import urlparse

PROCESSINGS = ["s:64", "s:128", "s:256", "s:512", "fill:200:200", "fit:320:240", "s:256,f:jpeg", "s:128,f:webp", "fill:96:96,f:png", "s:1024"]
ACCEPTS = [
    "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8",   # Chrome
    "image/avif,image/webp,*/*",                                          # Firefox
    "image/webp,image/avif,image/jxl,image/heic,image/heic-sequence,video/*;q=0.8,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5",  # Safari
    "image/webp,*/*",                                                     # an older browser
    "*/*",                                                                # curl, a crawler
]


def signed(path, key):
    mac = hmac.new(bytes.fromhex(key), path.encode(), hashlib.sha256).digest()
    return "/" + base64.urlsafe_b64encode(mac).decode().rstrip("=") + path


def percentile(values, fraction):
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000, 2)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--origin", required=True, help="http://127.0.0.2:PORT")
    parser.add_argument("--sources", type=int, default=200)
    parser.add_argument("--zipf", type=float, default=1.1)
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kill-at", type=float)
    parser.add_argument("--restart-at", type=float)
    parser.add_argument("--kill-command")
    parser.add_argument("--restart-command")
    parser.add_argument("--record")
    args = parser.parse_args()
    target = urlparse(args.url)
    if target.hostname not in ("127.0.0.1", "localhost"):
        sys.exit("cache-tier-load: loopback only")
    paths = []
    for source in range(args.sources):
        encoded = base64.urlsafe_b64encode(f"{args.origin}/p{source}.jpg".encode()).decode().rstrip("=")
        paths += [signed(f"/{processing}/{encoded}", args.key) for processing in PROCESSINGS]
    # Zipf's law over the URLs, the most popular first (a shuffled order, so that popularity is
    # not the source's number).
    weights = [1 / (rank ** args.zipf) for rank in range(1, len(paths) + 1)]
    total = sum(weights)
    cumulative, running = [], 0.0
    for weight in weights:
        running += weight / total
        cumulative.append(running)
    order = list(range(len(paths)))
    random.Random(args.seed).shuffle(order)

    lock = threading.Lock()
    recorded = []
    sent = 0
    results = []
    started = time.monotonic()
    deadline = started + args.seconds
    done_events = {"kill": False, "restart": False}

    def maybe_run_events():
        elapsed = (time.monotonic() - started) / args.seconds
        with lock:
            kill = args.kill_at is not None and not done_events["kill"] and elapsed >= args.kill_at
            restart = args.restart_at is not None and not done_events["restart"] and elapsed >= args.restart_at
            if kill:
                done_events["kill"] = True
            if restart:
                done_events["restart"] = True
        if kill:
            subprocess.run(args.kill_command, shell=True, check=False)
        if restart:
            subprocess.Popen(args.restart_command, shell=True)

    def client(number):
        nonlocal sent
        rng = random.Random(args.seed * 1000 + number)
        connection = None
        while True:
            with lock:
                if sent >= args.requests or time.monotonic() > deadline:
                    break
                sent += 1
            maybe_run_events()
            path = paths[order[bisect.bisect_left(cumulative, rng.random())]]
            begin = time.monotonic()
            try:
                if connection is None:
                    connection = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                accept = rng.choice(ACCEPTS)
                connection.request("GET", path, headers={"Accept": accept})
                response = connection.getresponse()
                response.read()
                outcome = (response.status, response.getheader("X-Cache", "none"))
                if args.record and response.status == 200:
                    with lock:
                        recorded.append(f"{path}\t{accept}")
                if response.getheader("Connection", "").lower() == "close":
                    connection.close()
                    connection = None
            except Exception as error:
                outcome = (0, type(error).__name__)
                if connection is not None:
                    connection.close()
                connection = None
            with lock:
                results.append((outcome, time.monotonic() - begin))
        if connection is not None:
            connection.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(args.concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    if args.record:
        with open(args.record, "w") as file:
            file.write("\n".join(recorded) + "\n")
    statuses, caches = {}, {}
    for (status, cache), _ in results:
        statuses[str(status)] = statuses.get(str(status), 0) + 1
        caches[cache] = caches.get(cache, 0) + 1
    latencies = [seconds for _, seconds in results]
    hits = [seconds for (status, cache), seconds in results if cache == "hit"]
    print(json.dumps({
        "requests": len(results), "seconds": round(elapsed, 2), "rps": round(len(results) / elapsed, 1),
        "statuses": statuses, "x_cache": caches,
        "p50_ms": percentile(latencies, 0.5), "p99_ms": percentile(latencies, 0.99),
        "hit_p50_ms": percentile(hits, 0.5), "hit_p99_ms": percentile(hits, 0.99),
        "server_errors": sum(count for status, count in statuses.items() if status.startswith("5")),
        "failed": statuses.get("0", 0), "urls": len(paths),
    }))


if __name__ == "__main__":
    main()
