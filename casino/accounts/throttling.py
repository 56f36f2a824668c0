"""API rate limits (ASVS 11.1.4): what a floor tablet needs, and far less than a script harvesting records.

The rates live here, not in settings: settings.REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"] only names the class.
The counts are kept in Django's default cache, which settings make shared by every worker (the database cache, or
Redis when configured), never per-process memory: three gunicorn workers must not triple the budget. Anonymous
callers are counted by their real client address (casino.accounts.security.client_address), never by a raw
X-Forwarded-For that any client can rotate.
"""

from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

from casino.accounts.security import client_address

# The floor page polls every few seconds and a day's entries are a few hundred requests; a client sending more
# than 20 a second for a minute is not a person at a table.
RATE = "1200/minute"
# The token endpoint: a person types a password a few times; the lockout (5 failures) is the real guard.
TOKEN_RATE = "20/minute"


class ClientAddressMixin:
    def get_ident(self, request):
        return client_address(request)


class UserBurstThrottle(ClientAddressMixin, UserRateThrottle):
    scope = "user"
    rate = RATE


class TokenThrottle(ClientAddressMixin, AnonRateThrottle):
    """Per client address on the token endpoint, whoever the username."""

    scope = "token"
    rate = TOKEN_RATE
