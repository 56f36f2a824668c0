"""Spins as the table plays them: « Rien ne va plus » announced (by the chef), then the spin recorded (R9)."""

from casino.models import Role
from seances.models import Seance, Spin
from seances.services import change_seance_state
from seances.spins import services as spins
from tests.helpers.cash_helpers import open_seance


def play(user, seance, apparatus, launcher, announcer=None, **outcome):
    """Announce « Rien ne va plus » (by `announcer`, by default `user` or a chef of theirs), then record the spin."""
    spins.announce(announcer or chef_of(user), seance, apparatus)
    return spins.record_spin(user, seance, apparatus, launcher, **outcome)


def post_announcement(api, user, apparatus, **body):
    api.force_authenticate(user)
    return api.post(f"/api/v1/apparatus/{apparatus.pk}/rien-ne-va-plus/", body, format="json")


def post_spin(api, user, seance, apparatus, launcher="croupier1", announcer=None, **values):
    """« Rien ne va plus » through the API (by `announcer`, by default `user`), then the spin through the API."""
    announced = post_announcement(api, announcer or chef_of(user), apparatus, seance=seance.pk)
    assert announced.status_code in (200, 201), announced.json()
    api.force_authenticate(user)
    body = {"apparatus": apparatus.pk, "seance": seance.pk, "launcher": launcher, **values}
    return api.post("/api/v1/spins/", body, format="json")


def chef_of(user):
    """Who announces for `user`: themselves when they may (a chef de partie), else a chef de partie of their casino."""
    if user.employee.role in (Role.CHEF, Role.CROUPIER):
        return user
    casino = user.employee.memberships.first().casino
    return (
        type(user).objects.filter(employee__role=Role.CHEF, employee__memberships__casino=casino).order_by("pk").first()
    )


def evening_after(director, afternoon):
    """Close the afternoon, open the evening."""
    change_seance_state(director, afternoon, Seance.State.CLOSED)
    seance = afternoon.gaming_day.seances.get(kind=Seance.Kind.EVENING)
    open_seance(director, seance)
    seance.refresh_from_db()
    return seance


def spin_on_record(seance, apparatus, sequence, at, number, launcher, pocket=None, direction="", **extra):
    """A spin written straight into the register as it holds them (« Rien ne va plus » at its launch, recorded by its
    launcher unless `recorded_by` says otherwise), past the service's checks: for the tests of what reads spins."""
    return Spin.objects.create(
        seance=seance,
        apparatus=apparatus,
        sequence=sequence,
        launched_at=at,
        rien_ne_va_plus_at=at,
        launcher=launcher,
        number=number,
        pocket=pocket,
        direction=direction,
        recorded_by=extra.pop("recorded_by", launcher),
        **extra,
    )
