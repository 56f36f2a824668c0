"""API rate limits (ASVS 11.1.4): what a floor tablet needs, and far less than a script harvesting records.

The rates live here, not in settings: settings.REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"] only names the class.
The counts are kept in Django's default cache, which settings make shared by every worker (the database cache, or
Redis when configured), never per-process memory: three gunicorn workers must not triple the budget. Anonymous
callers are counted by their real client address (casino.accounts.security.client_address), never by a raw
X-Forwarded-For that any client can rotate.

When the cache cannot be reached (Redis down) the throttles let the request through and log a warning: see
FailOpenMixin.
"""

import logging

from redis.exceptions import RedisError
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

from casino.accounts.security import client_address

# The floor page polls every few seconds and a day's entries are a few hundred requests; a client sending more
# than 20 a second for a minute is not a person at a table.
RATE = "1200/minute"
# The token endpoint: a person types a password a few times; the lockout (5 failures) is the real guard.
TOKEN_RATE = "20/minute"


logger = logging.getLogger(__name__)


class ClientAddressMixin:
    def get_ident(self, request):
        return client_address(request)


class FailOpenMixin:
    """A throttle whose cache is unreachable lets the request through, with a warning in the log.

    Failing open is the lesser evil on a casino floor: with Redis down, failing closed would stop every tablet from
    recording spins, advances and counts in the middle of a séance, records the regulations require as they happen,
    to protect against a flood that the rates only slow down. The secrets keep their guard: the lockout (5 failures
    per username and address, casino.accounts.security) is kept by django-axes in the database, not in this cache,
    so it still refuses, and a database outage fails every request anyway. Only Redis' errors (refused connection,
    timeout, authentication) are caught; the database cache runs inside the request's transaction, whose failure
    must not be hidden.
    """

    def allow_request(self, request, view):
        try:
            return super().allow_request(request, view)
        except RedisError as error:
            logger.warning(
                "throttle cache unreachable, request let through",
                extra={"scope": self.scope, "error": type(error).__name__},
            )
            return True


class UserBurstThrottle(FailOpenMixin, ClientAddressMixin, UserRateThrottle):
    scope = "user"
    rate = RATE


class TokenThrottle(FailOpenMixin, ClientAddressMixin, AnonRateThrottle):
    """Per client address on the token endpoint, whoever the username."""

    scope = "token"
    rate = TOKEN_RATE
