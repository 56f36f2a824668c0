"""The web container's health check (Dockerfile HEALTHCHECK, docker-compose.yml): GET /sante/ on gunicorn.

Exit 0 when /sante/ answers 200, 1 otherwise, printing the failed checks. Standard library only, and no Django:
it runs every few seconds. The Host header must be one of ALLOWED_HOSTS; X-Forwarded-Proto stands for the TLS
proxy, which SECURE_SSL_REDIRECT otherwise answers with a redirect.
"""

import os
import sys
import urllib.error
import urllib.request

host = (os.environ.get("ALLOWED_HOSTS") or "localhost").split(",")[0].strip().lstrip(".")
request = urllib.request.Request(
    "http://127.0.0.1:8000/sante/",
    headers={"Host": host, "X-Forwarded-Proto": "https", "Accept": "text/plain"},
)
try:
    with urllib.request.urlopen(request, timeout=10) as response:
        sys.exit(0 if response.status == 200 else 1)
except urllib.error.HTTPError as error:
    print(error.read().decode(errors="replace"))
    sys.exit(1)
except OSError as error:
    print(f"/sante/ injoignable : {error}")
    sys.exit(1)
