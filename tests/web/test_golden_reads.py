"""Every page and every API read of the demo day, as each persona reads it, word for word against its golden file.

The other tests check what they were written to check: a total, an order, a filter, a scope. A bug people really
make slips between them (a serializer field read from the wrong object, a page listing yesterday's rows, another
casino's alert on the floor, a link to the wrong carnet): whatever a reader would see differently, this test sees.
Each route is read by the seven roles, by a chef de partie whose membership ended and by the director of another
casino (whose own casino holds data too, so that a scope forgotten shows it), the dated pages on yesterday too;
the answers, as text (tests/helpers/readable.py), are compared with tests/web/__snapshots__/test_golden_reads/.
Each filter of each API list, given each value the demo day's records hold for it (as tests/web/test_api_filters.py
draws them), keeps the items its golden file names.

The demo day is built with the clock stopped at NOW and every table's ids restarted at their offsets, so that two
runs, on SQLite and on PostgreSQL, give the same answers; ids are written as their table and rank
(« cashbox_cashbox:1 »), the same on both databases. A change meant by its author updates the files:

    .venv/bin/pytest tests/web/test_golden_reads.py --snapshot-update

and the diff of the golden files is then reviewed with the change: it says, word for word, what every reader now
sees differently.
"""

import datetime
import re

import pytest
import time_machine
from django.db import connection, transaction
from django.test import override_settings
from django.urls import get_resolver
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from books.services import record_observation
from casino.models import Alert, Casino, Membership, Role
from seances.models import Spin
from seances.services import plan_seances
from tables.games.rules import Game
from tables.models import Apparatus, Table
from tables.services import register_tableau
from tests.accounts.test_authorization_matrix import ADMIN_NAMESPACE, REGULATOR, ROLES, _build, walk
from tests.conftest import PASSWORD, as_owner, make_employee
from tests.helpers import id_offsets
from tests.helpers.days import NOW
from tests.helpers.personas import inactive_member
from tests.helpers.readable import answer_text
from tests.helpers.spin_helpers import play
from tests.web.test_api_filters import FILTERS, LISTS, candidates, filters_of, items

# One worker builds the world once (about 7 s of CPU) and reads every route in it.
pytestmark = [pytest.mark.django_db, pytest.mark.xdist_group("golden_reads")]

FORMER_CHEF, OTHER_DIRECTOR = "former-chef", "other-director"
PERSONAS = (*ROLES, FORMER_CHEF, OTHER_DIRECTOR)
# Read by other tests: the schema and its documentation page (tests/web/test_api_schema.py), the health check, whose
# answer holds its checks' durations (tests/ops/test_health.py); and the way out.
NOT_READ = {"api-schema", "api-docs", "health", "logout", "metrics"}
# The pages that show another day when asked `?date=`: read on yesterday's too. (Every other page answers the same
# with it; tests/web/test_pages_after_midnight.py reads every page at two hours of the day.)
DATED = {"day", "floor", "journal", "opening-create", "roster-list", "roster-report"}


class GoldenText(SingleFileSnapshotExtension):
    """One text file per route, in UTF-8: a reviewer reads its diff."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


@pytest.fixture
def golden(snapshot):
    return snapshot.use_extension(GoldenText)


def _elsewhere(regulator):
    """Another casino with a day of its own, which the regulator also covers (the police des jeux of a district): its
    director, a croupier without his approval, a tableau, its séances planned, an open alert and an observation. A
    page or an answer that forgets the casino chosen, or the reader's, shows one of them."""
    other = Casino.objects.create(
        name="Casino d'Ailleurs",
        arrete_reference="Arrêté d'ailleurs",
        arrete_date=datetime.date(2021, 6, 1),
        min_stake_boule="3.00",
        min_stake_vingt_trois="2.00",
    )
    director = make_employee("directeur-ailleurs", Role.DIRECTOR, other).user
    make_employee("croupier-ailleurs", Role.CROUPIER, other, approved=False)
    Membership.objects.create(employee=regulator.employee, casino=other)
    apparatus = Apparatus.objects.create(casino=other, game=Game.BOULE, name="Boule d'ailleurs")
    register_tableau(Table.objects.create(apparatus=apparatus, name="Table d'ailleurs"), 2)
    plan_seances(director, other, NOW.date())
    Alert.objects.create(casino=other, rule="R20", kind="test", key="ailleurs", message="Alerte d'ailleurs")
    record_observation(regulator, other, NOW, "Visite d'ailleurs", "Afficher le règlement d'ailleurs", PASSWORD)
    return director


def _readings_apart(casino, regulator):
    """Records on which two readings a developer may confuse give two answers: a tableau numbered 3 registered after
    n° 5 (creation order is not number order, its id not its number), a visit of yesterday written up today (the
    visit is not the entry)."""
    apparatus = Apparatus.objects.create(casino=casino, game=Game.BOULE, name="Boule du fond")
    register_tableau(Table.objects.create(apparatus=apparatus, name="Table C"), 3)
    visited = NOW - datetime.timedelta(days=1)
    record_observation(regulator, casino, visited, "Visite de la veille", "", PASSWORD)


@pytest.fixture(scope="module")
def golden_world(django_db_setup, django_db_blocker, tmp_path_factory):
    """The matrix's demo day with a second spin and records whose readings differ, another casino's (which the
    regulator covers too), and a chef whose membership ended; built once, the clock stopped."""
    with django_db_blocker.unblock(), time_machine.travel(NOW, tick=False):
        outer = transaction.atomic()
        outer.__enter__()
        try:
            with as_owner(connection):
                id_offsets.restart()
            with override_settings(EXPORT_ROOT=tmp_path_factory.mktemp("exports")):
                built = _build()
                casino = built["objects"][Casino]
                # A second spin at the vingt-trois, by the launcher in turn: a list of spins in the wrong order, or
                # a panel showing the first spin for the last, reads differently.
                first = built["objects"][Spin]
                play(
                    built["users"]["chef"],
                    first.seance,
                    first.apparatus,
                    "croupier1",
                    pocket=7,
                    direction="antihoraire",
                )
                _readings_apart(casino, built["users"][REGULATOR])
                built["users"][FORMER_CHEF] = inactive_member(casino, "ancien-chef", Role.CHEF)
                built["users"][OTHER_DIRECTOR] = _elsewhere(built["users"][REGULATOR])
                connection.check_constraints()
                built["tables"] = id_offsets.tables()
                yield built
        finally:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


def _read_routes():
    """The routes read, by name: every route of the URL configuration but the admin's, the schema and the way out.
    Known without the world (the parameters' ids are filled in by the test)."""
    names = {name for _route, name in walk(get_resolver().url_patterns)}
    return sorted(name for name in names if name and not name.startswith(ADMIN_NAMESPACE) and name not in NOT_READ)


# Not a part of a decimal number (« 1 234,50 », « 12.5 »), nor of a word or a hexadecimal digest.
ID = re.compile(r"(?<![\w.])\d{6,9}(?!\w|[.,]\d{1,2}\b)")


def with_ids_named(text, tables):
    """Each id handed out after the restart written as its table and rank (« seances_seance:1 »)."""

    def name(match):
        value = int(match.group())
        table = id_offsets.table_of_id(value, tables)
        return f"{table}:{value % id_offsets.STRIDE}" if table else match.group()

    return ID.sub(name, text)


def answers(client, world, url, query):
    """{persona: what they read}, personas reading the same text grouped on one heading."""
    seen = {}
    for persona in PERSONAS:
        client.force_login(world["users"][persona])
        text = with_ids_named(answer_text(client.get(url, query)), world["tables"])
        seen.setdefault(text, []).append(persona)
    return "".join(f"=== {', '.join(personas)}\n{text}\n\n" for text, personas in seen.items())


@pytest.mark.parametrize("name", _read_routes(), ids=lambda name: name.replace(":", "-"))
def test_what_every_persona_reads(client, golden_world, golden, name):
    urls = [url for route, url in golden_world["routes"] if route == name]
    assert urls, f"{name}: no URL for this route in the demo day"
    day = golden_world["objects"]["date"].isoformat()
    parts = []
    for url in urls:
        shown = with_ids_named(url, golden_world["tables"])
        parts.append(f"##### GET {shown}\n")
        parts.append(answers(client, golden_world, url, {}))
        if name in DATED:
            parts.append(f"##### GET {shown}?date={day}\n")
            parts.append(answers(client, golden_world, url, {"date": day}))
    assert "".join(parts) == golden


@pytest.mark.parametrize("prefix, name", FILTERS, ids=[f"{prefix}-{name}" for prefix, name in FILTERS])
def test_what_every_filter_of_every_list_keeps(api, golden_world, golden, prefix, name):
    """The items (by table and rank) each value of the filter keeps, as the regulator lists them (the reader of every
    record); the unfiltered list first."""
    api.force_authenticate(golden_world["users"][REGULATOR])
    url = f"/api/v1/{prefix}/"
    flt = dict(filters_of(prefix))[name]
    values = candidates(prefix, name, flt, dict(LISTS)[prefix].queryset.model)
    lines = []
    for query in [{}] + [{name: value} for value in values]:
        kept = [item.get("id", item.get("cashbox")) for item in items(api, url, query)]
        shown = "&".join(f"{key}={value}" for key, value in query.items())
        lines.append(f"?{shown} → {' '.join(str(pk) for pk in kept) or '(rien)'}")
    assert with_ids_named("\n".join(lines) + "\n", golden_world["tables"]) == golden
