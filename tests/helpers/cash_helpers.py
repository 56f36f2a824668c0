"""A day at the tables, driven through the API: shared by the cash tests."""

from decimal import Decimal

import pytest

from seances.models import GamingDay, Seance
from seances.services import change_seance_state, open_tableau, plan_seances
from tests.conftest import PASSWORD
from tests.helpers.days import reach_opening


def chips_for(amount, denomination="100.00"):
    """A count of `amount` euros in chips of one denomination."""
    quantity = Decimal(amount) / Decimal(denomination)
    assert quantity == int(quantity)
    return {denomination: int(quantity)}


def publish_rosters(director, seance, chef=None, launchers=None):
    """R4: publish the rotation order of every apparatus in play still without one, so that the séance may open.

    By default the casino's first chef de partie and its first two croupiers, spread over the tableaux.
    """
    from seances.models import Roster
    from seances.rosters import services as roster_services
    from seances.services import apparatus_without_roster

    casino, day = seance.gaming_day.casino, seance.gaming_day.date
    chef = chef or roster_services.eligible_chefs(casino, day)[0]
    launchers = launchers or roster_services.eligible_launchers(casino, day)[:2]
    rosters = []
    for apparatus in apparatus_without_roster(seance):
        roster = Roster.objects.filter(seance=seance, apparatus=apparatus).first()
        if roster is None:
            roster = roster_services.create_roster(
                director, seance, apparatus, chef.username, [u.username for u in launchers]
            )
        rosters.append(roster_services.publish_roster(director, roster, director.username, PASSWORD))
    return rosters


def open_seance(director, seance):
    """Publish the missing rotation orders (R4), then open the séance, at its planned start if the clock is earlier
    (R30)."""
    publish_rosters(director, seance)
    reach_opening(seance)
    return change_seance_state(director, seance, Seance.State.OPEN)


def open_afternoon(director, casino, *openings):
    """Today's afternoon séance open after the rotation orders (R4), each (tableau, minimum, plein maximum, chance
    maximum) of `openings` opened with those limits."""
    day = GamingDay.date_at(casino)
    afternoon, _evening = plan_seances(director, casino, day)
    open_seance(director, afternoon)
    for tableau, *limits in openings:
        open_tableau(director, tableau, day, *limits)
    afternoon.refresh_from_db()
    return afternoon


@pytest.fixture
def open_day(director, casino, boule_tableau, vingt_trois_tableau, chef, croupier, croupier2):
    """Today's afternoon séance open, both tableaux opened with their limits, after the rotation orders (R4)."""
    return open_afternoon(
        director,
        casino,
        (boule_tableau, "2.00", "200.00", "1000.00"),
        (vingt_trois_tableau, "1.00", "50.00", "250.00"),
    )


@pytest.fixture
def elsewhere(other_casino, outsider):
    """Another casino's boule tableau, with its cash boxes, and that casino's séances of today (planned)."""
    from tables.games.rules import Game
    from tables.models import Apparatus, Table
    from tables.services import register_tableau

    machine = Apparatus.objects.create(casino=other_casino, game=Game.BOULE, name="Boule d'ailleurs")
    tableau = register_tableau(Table.objects.create(apparatus=machine, name="Table d'ailleurs"), 1)
    plan_seances(outsider, other_casino, GamingDay.date_at(other_casino))
    return tableau


def main_box(tableau):
    from cashbox.state import main_cashbox

    return main_cashbox(tableau)


def post_advance(api, user, tableau, seance, kind="initial", chips=None, signer="directeur", headers=None, **extra):
    api.force_authenticate(user)
    amount = tableau.casino.advance_amount(tableau.game)
    body = {
        "cashbox": main_box(tableau).pk,
        "seance": seance.pk,
        "kind": kind,
        "chips": chips if chips is not None else chips_for(amount),
        "counted_by": "croupier1",
        "brought_by": "caissier",
        "signer": signer,
        "password": PASSWORD,
        **extra,
    }
    return api.post("/api/v1/advances/", body, format="json", **(headers or {}))


def post_final_count(api, user, tableau, seance, amount, signer="directeur", **extra):
    api.force_authenticate(user)
    body = {
        "cashbox": main_box(tableau).pk,
        "seance": seance.pk,
        "chips": chips_for(amount) if Decimal(amount) else {},
        "counted_by": "croupier1",
        "witnesses": ["croupier2"],
        "caissier": "caissier",
        "signer": signer,
        "password": PASSWORD,
        **extra,
    }
    return api.post("/api/v1/counts/", body, format="json")


def post_short_interruption(api, user, tableau, seance, key_holder="chef", **conditions):
    api.force_authenticate(user)
    body = {
        "tableau": tableau.pk,
        "seance": seance.pk,
        "kind": "short",
        "key_holder": key_holder,
        "password": PASSWORD,
        "short": True,
        "boxes_at_table": True,
        "staff_at_post": True,
        **conditions,
    }
    return api.post("/api/v1/interruptions/", body, format="json")


def staffed_tableaux(director, seance, numbers, name="Boule du fond", kinds=None):
    """R31: a tableau opens during a séance only if the séance's published roster staffs it, and a published roster
    never changes. Tableaux the tests add to an open séance therefore come on an apparatus of their own, registered with
    its table now, each served by a croupier of its own in the roster published for the séance (chef: the casino's
    first chef de partie); `kinds`: their cash boxes, as register_tableau takes them."""
    from casino.models import Role
    from seances.rosters import services as roster_services
    from tables.games.rules import Game
    from tables.models import Apparatus, Table
    from tables.services import register_tableau
    from tests.conftest import make_employee

    casino, day = seance.gaming_day.casino, seance.gaming_day.date
    apparatus = Apparatus.objects.create(casino=casino, game=Game.BOULE, name=name)
    table = Table.objects.create(apparatus=apparatus, name=f"Table de {name.lower()}")
    tableaux = [register_tableau(table, number, *([kinds] if kinds else [])) for number in numbers]
    places = {}
    for number in [*numbers, *([numbers[0]] if len(numbers) < 2 else [])]:
        username = f"croupier_{name.lower().replace(' ', '_')}_{number}_{len(places)}"
        places[make_employee(username, Role.CROUPIER, casino).user.username] = number
    chef = roster_services.eligible_chefs(casino, day)[0]
    roster = roster_services.create_roster(director, seance, apparatus, chef.username, list(places), places)
    roster_services.publish_roster(director, roster, director.username, PASSWORD)
    return tableaux


def close_a_counted_day(api, chef, director, tableau, seance):
    """An advance and a final count of 9 000 € at the tableau in `seance`, then every séance of its day opened if
    still planned and closed: a day whose control register may be drawn up (R22)."""
    post_advance(api, chef, tableau, seance)
    post_final_count(api, chef, tableau, seance, "9000")
    for each in seance.gaming_day.seances.order_by("planned_start"):
        if each.state == Seance.State.PLANNED:
            open_seance(director, each)
        change_seance_state(director, each, Seance.State.CLOSED)
