"""Going past the guards as an intruder with DDL rights would: drop a table's triggers inside the test."""

import datetime

import pytest
from django.apps import apps
from django.db import connection, models
from django.utils import timezone

from cashbox import services as cash
from cashbox import signatures
from cashbox.models import Advance, ControlRegisterLine, Correction, Interruption, Signature, season_of
from casino.audit import append_only
from casino.models import Alert, CasinoKey, Employee, Export, JournalEntry, Membership, Role, Seal
from casino.services import acknowledge_alert, raise_alert
from seances.models import Opening, Roster, RosterChange, RosterMember, Seance, Spin
from seances.rosters import services as roster_services
from seances.services import change_seance_state
from seances.spins import services as spins
from tables.games.rules import Game
from tables.models import Apparatus, Cashbox, Table, Tableau
from tests.conftest import PASSWORD, make_employee
from tests.helpers.cash_helpers import chips_for, main_box, open_seance


def drop_guard(table):
    """Drop the guard triggers of one table (rolled back with the test's transaction), with the owner's rights."""
    from tests.conftest import as_owner  # conftest imports this module: imported when called

    with as_owner(connection):
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                # Django's foreign keys are deferred: PostgreSQL refuses DDL on a table with pending trigger events.
                # Checked now, then deferred again: a record written later in the test is journaled after its row.
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        append_only.drop(connection, {table})


# A day that went through every workflow: one row of each regulated table ----------------------------------------


@pytest.fixture
def world(
    casino,
    director,
    codir,
    chef,
    croupier,
    croupier2,
    caissier,
    regulator,
    administrator,
    boule,
    boule_tableau,
    open_day,
):
    """Today's afternoon séance played at boule: advance, interruption counted and resumed, final count corrected;
    a roster published and changed; both séances closed; the register drawn up and signed twice; an alert
    acknowledged; an export done."""
    seance = open_day
    third = make_employee("croupier3", Role.CROUPIER, casino).user
    # The rotation order open_day published before the séance opened (R4), changed during play.
    roster = Roster.objects.get(seance=seance, apparatus=boule)
    roster_services.record_change(chef, roster, RosterChange.Kind.ABSENCE, croupier2.username, "Malaise")
    spins.announce(chef, seance, boule)
    spins.push_back_stake(chef, seance, boule, boule_tableau, "10.00")
    spins.record_spin(chef, seance, boule, croupier.username, number=5)
    box = main_box(boule_tableau)
    advance = casino.advance_amount(Game.BOULE)
    cash.record_advance(chef, box, seance, "initial", chips_for(advance), "croupier1", "directeur", PASSWORD)
    interruption = cash.interrupt_with_count(
        chef, boule_tableau, seance, chips_for(advance), "croupier1", ["croupier2"]
    )
    cash.resume(chef, interruption, lids_off=True)
    count = cash.record_final_count(
        chef, box, seance, chips_for("9000"), "croupier1", ["croupier2"], "caissier", "directeur", PASSWORD
    )
    cash.correct(chef, count, chips_for("9100"), "Erreur de report", "neuf mille cent euros", "directeur", PASSWORD)
    change_seance_state(director, seance, Seance.State.CLOSED)
    for other in seance.gaming_day.seances.exclude(pk=seance.pk):
        open_seance(director, other)
        change_seance_state(director, other, Seance.State.CLOSED)
    register, _ = cash.draw_up_register(director, seance.gaming_day)
    signatures.designate_deputy(director, seance.gaming_day, "codir", "Congé", "directeur", PASSWORD)
    cash.sign_register(register, "directeur", PASSWORD)
    cash.sign_register(register, "codir", PASSWORD)
    # A mistake found after the register is signed: a rectificatif, signed by two again (R24).
    late = cash.correct(
        chef, count, chips_for("9200"), "Plaque oubliée", "neuf mille deux cents euros", "directeur", PASSWORD
    )
    cash.sign_amendment(late.amendment, "directeur", PASSWORD)
    # The books beyond the day (R25–R27).
    from books import services as books

    observation = books.record_observation(
        regulator, casino, timezone.now(), "Visite", "Afficher les limites", PASSWORD
    )
    books.record_action(director, observation, "Limites affichées", "directeur", PASSWORD)
    books.enter_levy_schedule(
        director,
        casino,
        season_of(seance.gaming_day.date),
        "Prélèvement progressif",
        [{"lower": "0", "upper": "1000", "rate": "10"}, {"lower": "1000", "upper": "", "rate": "20"}],
        "directeur",
        PASSWORD,
    )
    last_month = seance.gaming_day.date.replace(day=1) - datetime.timedelta(days=1)
    books.sign_statement(director, casino, last_month.year, last_month.month, "directeur", PASSWORD)
    alert = raise_alert(casino, "test", "cle", "Une alerte")
    acknowledge_alert(director, alert)
    Export.objects.create(
        casino=casino,
        requested_by=regulator,
        date_from=seance.gaming_day.date,
        date_to=seance.gaming_day.date,
        state=Export.State.DONE,
        progress=100,
        file_path="export.zip",
        sha256="a" * 64,
        finished_at=timezone.now(),
    )
    # A role proposed by the administrator and refused by the director's signature (R29).
    from casino.accounts.services import decide, propose, state_of

    change = propose(administrator, third.employee, {**state_of(third.employee), "role": Role.CHEF})
    decide(director, change, False, PASSWORD, reason="Pas de chef de partie supplémentaire")

    # A signing key enrolled, confirmed by another member of the direction, that has signed three times (R28, R29).
    from tests.helpers.passkey_helpers import enrolled_key

    _authenticator, passkey = enrolled_key(croupier, casino, confirmed_by=codir)
    passkey.sign_count = 3
    passkey.save()

    from casino.audit.seals import seal

    seal(casino, Seal.Reason.DAY_END, gaming_day=seance.gaming_day.date)
    return {"casino": casino, "seance": seance, "register": register, "count": count, "roster": roster}


def first_pk(model):
    return model._default_manager.order_by("pk").values_list("pk", flat=True).first()


# One sample row per guarded model: the walk test below fails when a guarded model has none.
SAMPLES = {
    "casino.Casino": lambda w: w["casino"].pk,
    "casino.Employee": lambda w: first_pk(Employee),
    "casino.Membership": lambda w: first_pk(Membership),
    "casino.Alert": lambda w: first_pk(Alert),
    "casino.JournalEntry": lambda w: first_pk(JournalEntry),
    "casino.CasinoKey": lambda w: first_pk(CasinoKey),
    "casino.Seal": lambda w: first_pk(Seal),
    "casino.JournalVerification": lambda w: (
        apps.get_model("casino", "JournalVerification")
        .objects.create(casino=w["casino"], seal=Seal.objects.first(), problems=1)
        .pk
    ),
    "casino.Export": lambda w: first_pk(Export),
    "casino.DaySettings": lambda w: first_pk(apps.get_model("casino", "DaySettings")),
    "casino.AccountChange": lambda w: first_pk(apps.get_model("casino", "AccountChange")),
    "casino.Passkey": lambda w: first_pk(apps.get_model("casino", "Passkey")),
    "casino.AccountDecision": lambda w: first_pk(apps.get_model("casino", "AccountDecision")),
    "tables.Apparatus": lambda w: first_pk(Apparatus),
    "tables.Table": lambda w: first_pk(Table),
    "tables.Tableau": lambda w: first_pk(Tableau),
    "tables.Cashbox": lambda w: first_pk(Cashbox),
    "seances.GamingDay": lambda w: w["seance"].gaming_day_id,
    "seances.Seance": lambda w: w["seance"].pk,
    "seances.Opening": lambda w: first_pk(Opening),
    "seances.Roster": lambda w: w["roster"].pk,
    "seances.RosterMember": lambda w: first_pk(RosterMember),
    "seances.RosterChange": lambda w: first_pk(RosterChange),
    "seances.Spin": lambda w: first_pk(Spin),
    "seances.Announcement": lambda w: first_pk(apps.get_model("seances", "Announcement")),
    "seances.PushedBackStake": lambda w: first_pk(apps.get_model("seances", "PushedBackStake")),
    "cashbox.Deputy": lambda w: first_pk(apps.get_model("cashbox", "Deputy")),
    "cashbox.RegisterAmendment": lambda w: first_pk(apps.get_model("cashbox", "RegisterAmendment")),
    "cashbox.RegisterAmendmentLine": lambda w: first_pk(apps.get_model("cashbox", "RegisterAmendmentLine")),
    "books.Observation": lambda w: first_pk(apps.get_model("books", "Observation")),
    "books.ObservationAction": lambda w: first_pk(apps.get_model("books", "ObservationAction")),
    "books.LevySchedule": lambda w: first_pk(apps.get_model("books", "LevySchedule")),
    "books.LevyBracket": lambda w: first_pk(apps.get_model("books", "LevyBracket")),
    "books.MonthlyStatement": lambda w: first_pk(apps.get_model("books", "MonthlyStatement")),
    "cashbox.Signature": lambda w: first_pk(Signature),
    "cashbox.Advance": lambda w: first_pk(Advance),
    "cashbox.Count": lambda w: w["count"].pk,
    "cashbox.Count_witnesses": lambda w: first_pk(apps.get_model("cashbox", "Count_witnesses")),
    "cashbox.Interruption": lambda w: first_pk(Interruption),
    "cashbox.Correction": lambda w: first_pk(Correction),
    "cashbox.ControlRegister": lambda w: w["register"].pk,
    "cashbox.ControlRegisterLine": lambda w: first_pk(ControlRegisterLine),
}


def other_value_sql(model_field, column):
    """An SQL expression giving the column another value than it holds, valid for its type on both databases."""
    internal = model_field.get_internal_type()
    pg = connection.vendor == "postgresql"
    if isinstance(model_field, models.ForeignKey):
        # An empty key takes an existing row's id (PostgreSQL's ids do not restart between tests, and the foreign
        # keys are checked at the end of each test); a filled one moves to the next id, which the guard refuses.
        related = model_field.related_model._meta
        return f'COALESCE("{column}", (SELECT MIN("{related.pk.column}") FROM "{related.db_table}") - 1) + 1'
    if internal in (
        "AutoField",
        "BigAutoField",
        "IntegerField",
        "BigIntegerField",
        "PositiveIntegerField",
        "PositiveSmallIntegerField",
        "PositiveBigIntegerField",
        "SmallIntegerField",
        "DecimalField",
    ):
        return f'COALESCE("{column}", 0) + 1'
    if internal == "BooleanField":
        return f'CASE WHEN "{column}" THEN FALSE ELSE TRUE END' if pg else f'CASE WHEN "{column}" THEN 0 ELSE 1 END'
    literals = {
        "DateTimeField": ("1999-01-01 00:00:00+00:00", "1998-01-01 00:00:00+00:00")
        if pg
        else ("1999-01-01 00:00:00", "1998-01-01 00:00:00"),
        "DateField": ("1999-01-01", "1998-01-01"),
        "TimeField": ("01:02:03", "04:05:06"),
        "JSONField": ('{"z": 1}', '{"y": 2}'),
    }.get(internal, ("z", "y"))
    first, second = literals
    cast = {"JSONField": "jsonb", "DateTimeField": "timestamptz", "DateField": "date", "TimeField": "time"}
    if pg and internal in cast:
        kind = cast[internal]
        return f"CASE WHEN \"{column}\" = '{first}'::{kind} THEN '{second}'::{kind} ELSE '{first}'::{kind} END"
    return f"CASE WHEN \"{column}\" = '{first}' THEN '{second}' ELSE '{first}' END"
