"""The load generator of bench/write_path.py, run as its own process so that the server's figures are not those of
a client sharing its interpreter (issue 39).

Reads one JSON object on standard input: {"port": …, "clients": [{"token": …, "keys": …, "requests": [[path, body,
before, signed], …]}, …], "seconds": …}. Each client is a thread with one kept HTTP/1.1 connection (as a browser or a
tablet keeps it), posting its requests in turn (each after its untimed `before` request, if any) until they run out or
`seconds` pass. A `signed` request is signed with the client's keys in
the API's two steps, both timed: `<path>sign/options/` gives the act's challenge (a final count's: one per person
who signs it, R20), the authenticators sign them, the request carries the assertions (`keys`: bench/passkey_signer.py's
arguments by signer). Writes one JSON object on standard output: the latencies of the answers 201, the
refusals (status and the start of the body), the wall time.

Standard library only, and `cryptography` for the key's signature: a load generator is not part of the product.
"""

import http.client
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from passkey_signer import KeySigner, assertions  # noqa: E402 (the bench's folder, put on the path above)


def exchange(connection, path, body, headers):
    connection.request("POST", path, json.dumps(body), headers)
    response = connection.getresponse()
    return response.status, response.read()


def client(port, token, keys, requests, deadline, latencies, errors):
    headers = {"Content-Type": "application/json", "Authorization": f"Token {token}", "Host": "127.0.0.1"}
    signers = {username: KeySigner(**key) for username, key in (keys or {}).items()}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        for path, body, before, signed in requests:
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
            started = time.perf_counter()
            if signed:
                # The two steps of a signature with a key (R28): the act's challenge, then the signed request.
                status, content = exchange(connection, f"{path}sign/options/", body, headers)
                if status != 200:
                    errors.append(f"options: {status} {content[:200]!r}")
                    continue
                body = {**body, **assertions(signers, json.loads(content), body["signer"])}
            payload = json.dumps(body)
            try:
                connection.request("POST", path, payload, headers)
                response = connection.getresponse()
                content = response.read()
            except (http.client.HTTPException, OSError):
                # The server closed a kept connection (a worker recycled): reconnect once and post again.
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
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
        threading.Thread(
            target=client,
            args=(spec["port"], c["token"], c.get("keys"), c["requests"], deadline, latencies, errors),
        )
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
