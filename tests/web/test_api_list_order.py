"""The order of each API list, written here as the people who read it expect it (not read from the viewsets): the
days and the rotation orders newest first, the cash operations of a day in the order they happened, the journal
newest first. A list whose order is lost shows a casino's newest séance at the bottom of its last page."""

import pytest

from tests.accounts.test_authorization_matrix import REGULATOR, world  # noqa: F401 (the matrix's world fixture)
from tests.web.test_api_filters import items

pytestmark = pytest.mark.django_db

NEWEST_FIRST, OLDEST_FIRST = "newest first", "oldest first"
ORDERS = {
    "seances": ("gaming_day", NEWEST_FIRST),
    "openings": ("gaming_day", NEWEST_FIRST),
    "rosters": ("gaming_day", NEWEST_FIRST),
    "announcements": ("announced_at", NEWEST_FIRST),
    "advances": ("recorded_at", OLDEST_FIRST),
    "counts": ("recorded_at", OLDEST_FIRST),
    "corrections": ("recorded_at", OLDEST_FIRST),
    "journal": ("recorded_at", NEWEST_FIRST),
}


@pytest.mark.parametrize("prefix", sorted(ORDERS))
def test_each_list_comes_in_the_order_its_readers_expect(api, world, prefix):  # noqa: F811
    api.force_authenticate(world["users"][REGULATOR])
    key, order = ORDERS[prefix]
    values = [str(item[key]) for item in items(api, f"/api/v1/{prefix}/")]
    assert len(set(values)) > 1, f"the demo day gives {prefix} a single {key}: its order is not seen"
    assert values == sorted(values, reverse=order == NEWEST_FIRST), f"{prefix} not {order} by {key}: {values}"
