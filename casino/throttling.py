"""API rate limit per user (ASVS 11.1.4): what a floor tablet needs, and far less than a script harvesting records.

The rate lives here, not in settings: settings.REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"] only names this class.
Anonymous callers are counted by address (UserRateThrottle's rule); the token endpoint keeps its own throttle.
"""

from rest_framework.throttling import UserRateThrottle

# The floor page polls every few seconds and a day's entries are a few hundred requests; a client sending more
# than 20 a second for a minute is not a person at a table.
RATE = "1200/minute"


class UserBurstThrottle(UserRateThrottle):
    scope = "user"
    rate = RATE
