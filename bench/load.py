"""The load generator of bench/write_path.py, run as its own process so that the server's figures are not those of
a client sharing its interpreter (issue 39).

Reads one JSON object on standard input: {"port": …, "clients": [{"token": …, "requests": [[path, body, before], …]}, …],
"seconds": …}. Each client is a thread with one kept HTTP/1.1 connection (as a browser or a tablet keeps it), posting
its requests in turn (each after its untimed `before` request, if any) until they run out or `seconds` pass. Writes one JSON object on standard output: the latencies
of the answers 201, the refusals (status and the start of the body), the wall time.

Standard library only: a load generator is not part of the product.
"""

import http.client
import json
import sys
import threading
import time


def client(port, token, requests, deadline, latencies, errors):
    headers = {"Content-Type": "application/json", "Authorization": f"Token {token}", "Host": "127.0.0.1"}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        for path, body, before in requests:
            if time.monotonic() > deadline:
                return
            if before is not None:
                # The act that must precede this one (« Rien ne va plus » before a spin, R9): sent, not timed.
                connection.request("POST", before[0], json.dumps(before[1]), headers)
                answer = connection.getresponse()
                content = answer.read()
                if answer.status not in (200, 201):
                    errors.append(f"before: {answer.status} {content[:200]!r}")
                    continue
            payload = json.dumps(body)
            started = time.perf_counter()
            try:
                connection.request("POST", path, payload, headers)
                response = connection.getresponse()
                content = response.read()
            except (http.client.HTTPException, OSError):
                # The server closed a kept connection (a worker recycled): reconnect once and post again.
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                started = time.perf_counter()
                connection.request("POST", path, payload, headers)
                response = connection.getresponse()
                content = response.read()
            elapsed = time.perf_counter() - started
            if response.status == 201:
                latencies.append(elapsed)
            else:
                errors.append(f"{response.status} {content[:200]!r}")
    finally:
        connection.close()


def main():
    spec = json.load(sys.stdin)
    latencies, errors = [], []
    deadline = time.monotonic() + spec["seconds"]
    threads = [
        threading.Thread(target=client, args=(spec["port"], c["token"], c["requests"], deadline, latencies, errors))
        for c in spec["clients"]
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    json.dump({"latencies": latencies, "errors": errors, "wall": time.perf_counter() - started}, sys.stdout)


if __name__ == "__main__":
    main()
