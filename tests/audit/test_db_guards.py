"""Every database guard refuses a write made past the services, on SQLite here and on PostgreSQL when DATABASE_URL
is postgres:// (R23, and each rule a named constraint holds).

- Each trigger of casino/append_only.GUARDS: for every regulated table, an UPDATE of each column the workflow never
  changes, a second write of a column written once, a state moved off its transitions, and a DELETE are refused.
- Each named constraint of the models' Meta has its own test in CONSTRAINT_TESTS, which writes a violating row with
  bulk_create (no save(), no clean()) and expects the database to name the constraint.
- The walk tests fail when a guard has no test: a model guarded without a sample row, a constraint without a test.
"""

import contextlib
import datetime
from decimal import Decimal

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone

from books.models import LevyBracket, MonthlyStatement, Observation
from cashbox.models import (
    Advance,
    ControlRegister,
    ControlRegisterLine,
    Correction,
    Count,
    Interruption,
    RegisterAmendment,
    RegisterAmendmentLine,
    Signature,
)
from casino.audit import append_only
from casino.models import Alert, Casino, Employee, Export, IdempotentRequest, JournalEntry, Membership, Passkey, Role
from casino.regulated import regulated_labels
from seances.models import GamingDay, Opening, PushedBackStake, RosterChange, RosterMember, Seance, Spin
from seances.rosters import services as roster_services
from tables.games.rules import Game
from tables.models import Apparatus, Cashbox, Table, Tableau
from tests.conftest import PASSWORD, as_owner
from tests.helpers.guard_helpers import SAMPLES, drop_guard, first_pk, other_value_sql

pytestmark = pytest.mark.django_db


def guarded():
    """(label, model, guard) of every guarded model, history models included (they are written once)."""
    return [(model._meta.label, model, guard) for model, guard in append_only.guarded_models()]


def sample_pk(world, label, model):
    if label in SAMPLES:
        return SAMPLES[label](world)
    return first_pk(model)  # a history model: any of its rows


def write(sql, params=()):
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


def refused(sql, params=()):
    with pytest.raises(IntegrityError, match="r23_append_only"):
        write(sql, params)


def value_of(model, column, pk):
    with connection.cursor() as cursor:
        cursor.execute(f'SELECT "{column}" FROM "{model._meta.db_table}" WHERE "{model._meta.pk.column}" = %s', [pk])
        return cursor.fetchone()[0]


def test_r23_every_guarded_model_has_a_sample_row_so_its_guard_is_tested(world):
    """The walk: a model added to GUARDS (or a new history table) without a row here has an untested guard."""
    missing = []
    for label, model, _guard in guarded():
        pk = sample_pk(world, label, model)
        if pk is None:
            missing.append(label)
    assert not missing, f"guarded models without a sample row in tests/audit/test_db_guards.py: {missing}"


def test_r23_every_regulated_model_is_guarded():
    """Every history-tracked model is regulated (R23): it must have its line in append_only.GUARDS, and so must
    the many-to-many tables of the guarded models."""
    labels, regulated_apps = set(append_only.GUARDS), regulated_labels()
    for model in apps.get_models(include_auto_created=True):
        if model._meta.app_label not in regulated_apps or append_only.is_history_model(model):
            continue
        regulated = hasattr(model, "history")
        if model._meta.auto_created:
            regulated = any(
                f.remote_field.through is model
                for m in apps.get_models()
                for f in m._meta.many_to_many
                if m._meta.label in labels
            )
        if regulated:
            assert model._meta.label in labels, f"{model._meta.label} is regulated but has no line in GUARDS"


def test_r23_the_spec_names_only_existing_columns():
    for model, guard in append_only.guarded_models():
        append_only.column_rules(model, guard)


def test_r23_every_column_the_workflow_never_changes_is_refused(world):
    """For every guarded table: each frozen column, each column written once (when written), each state column
    off its transitions, and each conditional column out of its condition refuses an UPDATE; a DELETE is refused."""
    checked = 0
    for label, model, guard in guarded():
        table, key = model._meta.db_table, model._meta.pk.column
        pk = sample_pk(world, label, model)
        for model_field, kind, _detail in append_only.column_rules(model, guard):
            column = model_field.column
            change = f'UPDATE "{table}" SET "{column}" = {other_value_sql(model_field, column)} WHERE "{key}" = %s'
            if kind == append_only.FREE:
                continue
            if label == "casino.Passkey" and column == "sign_count":
                # A key's counter only grows (R28): going back is what the guard refuses.
                change = f'UPDATE "{table}" SET "{column}" = "{column}" - 1 WHERE "{key}" = %s'
                write(f'UPDATE "{table}" SET "{column}" = "{column}" + 1 WHERE "{key}" = %s', [pk])
            if kind == append_only.FILL_ONCE and value_of(model, column, pk) in (None, ""):
                # Empty: the workflow may write it once; a second, different write is refused. A key is retired
                # by the owner's rotation only (tests/audit/test_trust_anchor_guard.py).
                with as_owner(connection) if label == "casino.CasinoKey" else contextlib.nullcontext():
                    write(change, [pk])
            refused(change, [pk])
            checked += 1
        refused(f'DELETE FROM "{table}" WHERE "{key}" = %s', [pk])
        checked += 1
    assert checked > 100


def test_r23_an_unchanged_row_may_be_saved_again_where_the_workflow_updates_it(world):
    """The guards refuse changes, not the workflow's own saves of an unchanged row."""
    seance = Seance.objects.get(pk=world["seance"].pk)
    seance.save()
    register = ControlRegister.objects.get(pk=world["register"].pk)
    register.save()


def test_r23_a_register_is_signed_once_from_empty_and_never_resigned(world):
    register = world["register"]
    refused("UPDATE cashbox_controlregister SET total = total + 1000 WHERE id = %s", [register.pk])
    refused("UPDATE cashbox_controlregister SET second_signature_id = NULL WHERE id = %s", [register.pk])
    refused("UPDATE cashbox_controlregister SET first_signature_id = second_signature_id WHERE id = %s", [register.pk])


def test_r23_a_seance_moves_only_forward(world, director, casino):
    seance = world["seance"]
    refused("UPDATE seances_seance SET state = 'open', actual_end = NULL WHERE id = %s", [seance.pk])
    refused("UPDATE seances_seance SET state = 'planned' WHERE id = %s", [seance.pk])
    tomorrow = GamingDay.date_at(casino) + datetime.timedelta(days=1)
    from seances.services import plan_seances

    planned = plan_seances(director, casino, tomorrow)[0]
    refused("UPDATE seances_seance SET state = 'closed' WHERE id = %s", [planned.pk])
    write(
        "UPDATE seances_seance SET state = 'open', actual_start = %s, opened_by_id = %s WHERE id = %s",
        [timezone.now(), director.pk, planned.pk],
    )
    refused("UPDATE seances_seance SET planned_start = %s WHERE id = %s", [timezone.now(), planned.pk])


def test_r23_an_opening_never_changes_its_limits(world):
    """The issue's own example: UPDATE seances_opening SET minimum = 50, max_plein = 5000."""
    refused("UPDATE seances_opening SET minimum = 50, max_plein = 5000")


def test_r23_an_interruption_is_resumed_once(world):
    interruption = Interruption.objects.get()
    refused("UPDATE cashbox_interruption SET resumed_at = %s WHERE id = %s", [timezone.now(), interruption.pk])
    refused("UPDATE cashbox_interruption SET started_at = %s WHERE id = %s", [timezone.now(), interruption.pk])


def test_r23_a_draft_roster_may_be_reordered_a_published_one_not(world, director, casino, chef, croupier, croupier2):
    published = world["roster"]
    refused("UPDATE seances_rostermember SET position = position + 10 WHERE roster_id = %s", [published.pk])
    tomorrow = GamingDay.date_at(casino) + datetime.timedelta(days=1)
    from seances.services import plan_seances

    seance = plan_seances(director, casino, tomorrow)[0]
    draft = roster_services.create_roster(
        director, seance, published.apparatus, chef.username, [croupier.username, croupier2.username]
    )
    write("UPDATE seances_rostermember SET position = position + 10 WHERE roster_id = %s", [draft.pk])
    refused("UPDATE seances_rostermember SET user_id = %s WHERE roster_id = %s", [director.pk, draft.pk])


def test_r2_a_tableau_is_renumbered_only_before_its_cash_box(world, boule_table):
    tableau = Tableau.objects.get(number=1)
    refused("UPDATE tables_tableau SET number = 99 WHERE id = %s", [tableau.pk])
    bare = Tableau.objects.create(table=boule_table, number=7)
    write("UPDATE tables_tableau SET number = 8 WHERE id = %s", [bare.pk])


def test_r23_registry_settings_stay_editable(world):
    casino = world["casino"]
    casino.advance_multiple_boule = 5000
    casino.save()  # journaled: in SQL alone, PostgreSQL refuses it at commit (tests/audit/test_vouched_records.py)
    boule = Apparatus.objects.get(game=Game.BOULE).pk
    write("UPDATE tables_apparatus SET name = 'Boule bis' WHERE id = %s", [boule])
    refused("UPDATE tables_apparatus SET game = 'vingt_trois' WHERE id = %s", [boule])


def test_r23_postgresql_refuses_truncate_of_every_guarded_table(world):
    if connection.vendor != "postgresql":
        pytest.skip("TRUNCATE exists only on PostgreSQL")
    from tests.conftest import as_owner

    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    # As the owner: the application's role may not even truncate; the trigger refuses the owner too.
    with as_owner(connection):
        for _label, model, _guard in guarded():
            refused(f'TRUNCATE "{model._meta.db_table}" CASCADE')


def test_r23_no_row_of_any_table_switches_the_guards_off(world):
    """The old `casino_maintenance` switch is gone, and no trigger reads any table to decide whether to refuse."""
    with connection.cursor() as cursor:
        assert "casino_maintenance" not in connection.introspection.table_names(cursor)
        if connection.vendor == "postgresql":
            cursor.execute("SELECT prosrc FROM pg_proc WHERE proname LIKE 'r23\\_%%'")
        else:
            cursor.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'r23%'")
        bodies = [row[0] for row in cursor.fetchall()]
    assert bodies
    # Only the conditions of Tableau.number and RosterMember.position read a table, and only the registry's; the
    # journal's head is compared with the journal, an employee's role with their latest confirmed proposal (R29):
    # both append-only themselves, so no row written later lets a change through; a new key, the casino's key in
    # service (a refusal only); on PostgreSQL the head's deferred check reads the head as the transaction leaves it.
    allowed_reads = {
        "tables_cashbox",
        "seances_roster",
        "casino_journalentry",
        "casino_journalhead",
        "casino_accountchange",
        "casino_casinokey",
        "pg_class",  # the key table's owner, who alone retires a key
        # A membership's `director` flag copied from the employee's role (R29): it sets a value, refuses nothing; the
        # role itself moves only by a confirmed proposal (the role guard above).
        "casino_employee",
        # A count's witnesses are inserted only by the count's own transaction (its row's xmin), a refusal only.
        "cashbox_count",
        # A signing key is confirmed only with its confirmation's signature (written once), a refusal only (R29).
        "cashbox_signature",
        # The records workflows edit, read as their transaction leaves them, and whether an employee belongs to a
        # casino yet (vouched_statements): compared with their latest journal document, refusals only.
        "casino_casino",
        "casino_membership",
    }
    for body in bodies:
        assert "maintenance" not in body
        words = body.replace("(", " ").replace('"', " ").split()
        reads = {words[i + 1] for i, word in enumerate(words[:-1]) if word.upper() == "FROM"}
        # IS NOT DISTINCT FROM OLD.x, or the vouched record's row as read (latest_row.x)
        reads = {name for name in reads if not name.startswith(("OLD.", "NEW.", "latest_row."))}
        assert reads <= allowed_reads, body


def test_r23_the_api_answers_409_r23_when_the_database_refuses():
    from casino.web.errors import api_exception_handler

    response = api_exception_handler(IntegrityError(append_only.refusal("cashbox_advance", "amount", "frozen")), {})
    assert response.status_code == 409 and response.data["code"] == "R23"


# Named constraints: one test each ------------------------------------------------------------------------------


def clone(obj, **changes):
    """An unsaved copy of a row with some values changed, to be written with bulk_create (no save(), no clean())."""
    values = {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields if not f.primary_key}
    for name in changes:
        values.pop(obj._meta.get_field(name).attname, None)
    values.update(changes)
    return type(obj)(**values)


def pending_key():
    """The world's key as a key just enrolled: not confirmed, not revoked (what the services insert)."""
    return clone(
        Passkey.objects.get(), confirmed_at=None, confirmed_by=None, confirmation=None, revoked_at=None, revoked_by=None
    )


def without_key_guards(check):
    drop_guard("casino_passkey")
    check()


def constraint_refuses(name, objects):
    constraint = all_constraints()[name]
    model = type(objects[0])
    with pytest.raises(IntegrityError) as refusal, transaction.atomic():
        model.objects.bulk_create(objects)
    message = str(refusal.value)
    if isinstance(constraint, models.UniqueConstraint) and connection.vendor == "sqlite":
        # SQLite names the columns of a unique index, not the index.
        table = model._meta.db_table
        columns = [model._meta.get_field(f).column for f in constraint.fields]
        assert all(f"{table}.{column}" in message for column in columns), message
    else:
        assert name in message, message


def new_signature(w, **changes):
    original = Signature.objects.first()
    return Signature.objects.bulk_create([clone(original, **changes)])[0]


def other_day(world, days, **changes):
    """A copy of the world's gaming day on another date (one day per casino and date), with some values changed."""
    day = world["seance"].gaming_day
    return clone(day, date=day.date + datetime.timedelta(days=days), **changes)


def other_spin(**changes):
    """A copy of the world's spin with some values changed, under a sequence number of its own unless given."""
    spin = Spin.objects.order_by("pk").first()
    # Without the original's announcement unless given: one announcement is followed by one spin (R9).
    return clone(spin, **{"sequence": spin.sequence + 100, "announcement": None, **changes})


def other_amendment(**changes):
    """A copy of the world's rectificatif with another number, for the correction made before the register."""
    amendment = RegisterAmendment.objects.order_by("pk").first()
    free = Correction.objects.filter(amendment__isnull=True).order_by("pk").first()
    values = {"number": 90, "correction": free, "first_signature": None, "second_signature": None}
    return clone(amendment, **{**values, **changes})


def seance_not_held_without_reason(world):
    day = other_day(world, 1003)
    GamingDay.objects.bulk_create([day])
    day = GamingDay.objects.get(casino=day.casino, date=day.date)
    return clone(
        world["seance"],
        gaming_day=day,
        state="not_held",
        not_held_reason="",
        not_held_signature=None,
        actual_start=None,
        opened_by=None,
        actual_end=None,
        closed_by=None,
    )


def second_director():
    user = get_user_model().objects.create_user(username="second-directeur")
    return Employee.objects.create(
        user=user, role=Role.DIRECTOR, approval_number="A", approval_date=datetime.date(2020, 1, 1)
    )


def cosignatures_refused(w):
    """A final count signed by its counter but not by the caissier present, then an interruption's count co-signed:
    each refused on its own (R20, R28)."""
    one_of_two = clone(
        w["count"],
        seance=other_seance(w),
        signature_id=new_signature(w).pk,
        counter_signature_id=new_signature(w).pk,
        caissier_signature_id=None,
    )
    constraint_refuses("r28_final_count_cosigned_by_both", [one_of_two])
    on_interruption = clone(
        Count.objects.filter(kind="interruption").first(),
        counter_signature_id=new_signature(w).pk,
        caissier_signature_id=new_signature(w).pk,
    )
    constraint_refuses("r28_final_count_cosigned_by_both", [on_interruption])


CONSTRAINT_TESTS = {
    # Signing keys (R28, R29): ES256 or EdDSA only, which the offline verifier checks; never confirmed by its holder.
    "r28_passkey_es256_or_eddsa": lambda w: constraint_refuses(
        "r28_passkey_es256_or_eddsa", [clone(pending_key(), credential_id="autre", algorithm=-257)]
    ),
    # A key is inserted pending (the guard passkey_statements refuses a confirmed one first): the check constraint is
    # tried with that guard off, as the owner could.
    "r29_passkey_confirmed_by_another": lambda w: without_key_guards(
        lambda: constraint_refuses(
            "r29_passkey_confirmed_by_another",
            [clone(Passkey.objects.get(), credential_id="autre", confirmed_by_id=Passkey.objects.get().user_id)],
        )
    ),
    # The rectificatif and the séance non tenue (R24).
    "r24_difference_is_new_minus_previous_total": lambda w: constraint_refuses(
        "r24_difference_is_new_minus_previous_total",
        [other_amendment(difference=RegisterAmendment.objects.get().difference + 1)],
    ),
    "r24_second_signature_after_first": lambda w: constraint_refuses(
        "r24_second_signature_after_first",
        [other_amendment(second_signature=RegisterAmendment.objects.get().first_signature)],
    ),
    "r24_one_amendment_number_per_register": lambda w: constraint_refuses(
        "r24_one_amendment_number_per_register", [other_amendment(number=RegisterAmendment.objects.get().number)]
    ),
    "r24_one_amendment_line_per_seance_and_cashbox": lambda w: constraint_refuses(
        "r24_one_amendment_line_per_seance_and_cashbox", [clone(RegisterAmendmentLine.objects.order_by("pk").first())]
    ),
    "r24_not_held_with_reason_and_signature": lambda w: constraint_refuses(
        "r24_not_held_with_reason_and_signature", [seance_not_held_without_reason(w)]
    ),
    # The books beyond the day (R25–R27).
    "r25_bracket_lower_not_negative": lambda w: constraint_refuses(
        "r25_bracket_lower_not_negative", [clone(LevyBracket.objects.order_by("pk").first(), lower=Decimal("-1"))]
    ),
    "r25_bracket_upper_above_lower": lambda w: constraint_refuses(
        "r25_bracket_upper_above_lower",
        [clone(LevyBracket.objects.order_by("pk").first(), lower=Decimal("500"), upper=Decimal("500"))],
    ),
    "r25_rate_is_a_percentage": lambda w: constraint_refuses(
        "r25_rate_is_a_percentage",
        [clone(LevyBracket.objects.order_by("pk").first(), lower=Decimal("500"), rate=Decimal("101"))],
    ),
    "r25_one_bracket_per_lower_bound": lambda w: constraint_refuses(
        "r25_one_bracket_per_lower_bound", [clone(LevyBracket.objects.order_by("pk").first())]
    ),
    "r26_month_1_to_12": lambda w: constraint_refuses(
        "r26_month_1_to_12", [clone(MonthlyStatement.objects.get(), month=13, signature_id=new_signature(w).pk)]
    ),
    "r27_an_injunction_has_a_deadline": lambda w: constraint_refuses(
        "r27_an_injunction_has_a_deadline",
        [clone(Observation.objects.get(), deadline=None, signature_id=new_signature(w).pk)],
    ),
    # The register of spins (R1, R9, R23).
    "r9_one_spin_per_sequence_number": lambda w: constraint_refuses(
        "r9_one_spin_per_sequence_number", [other_spin(sequence=Spin.objects.order_by("pk").first().sequence)]
    ),
    "r9_spin_sequence_positive": lambda w: constraint_refuses("r9_spin_sequence_positive", [other_spin(sequence=0)]),
    # R9: a second spin following the announcement another spin already followed.
    "r9_one_spin_per_announcement": lambda w: constraint_refuses(
        "r9_one_spin_per_announcement", [other_spin(announcement=Spin.objects.order_by("pk").first().announcement)]
    ),
    "r9_pushed_back_stake_positive": lambda w: constraint_refuses(
        "r9_pushed_back_stake_positive", [clone(PushedBackStake.objects.order_by("pk").first(), amount=Decimal("0"))]
    ),
    "r1_spin_number_range": lambda w: constraint_refuses("r1_spin_number_range", [other_spin(number=15)]),
    "r1_spin_pocket_range": lambda w: constraint_refuses("r1_spin_pocket_range", [other_spin(pocket=28)]),
    "r9_spin_direction_known": lambda w: constraint_refuses("r9_spin_direction_known", [other_spin(direction="x")]),
    "r23_spin_correction_reason": lambda w: constraint_refuses(
        "r23_spin_correction_reason", [other_spin(corrects=Spin.objects.order_by("pk").first(), reason="")]
    ),
    # Day-fixed values (R10, R11, R15): a day carries its hours and minimums, ends after it starts, and its
    # advances, once fixed, are positive.
    "gaming_day_values_fixed": lambda w: constraint_refuses(
        "gaming_day_values_fixed", [other_day(w, 1000, start=None)]
    ),
    "gaming_day_ends_after_start": lambda w: constraint_refuses(
        "gaming_day_ends_after_start", [other_day(w, 1001, end=w["seance"].gaming_day.start)]
    ),
    "r15_day_advance_positive": lambda w: constraint_refuses(
        "r15_day_advance_positive", [other_day(w, 1002, advance_boule=Decimal("0"))]
    ),
    "r10_authorised_minimum_positive": lambda w: constraint_refuses(
        "r10_authorised_minimum_positive", [clone(w["casino"], name="Zéro", min_stake_boule=Decimal("0"))]
    ),
    "approval_end_after_start": lambda w: constraint_refuses(
        "approval_end_after_start",
        [
            Employee(
                user=make_user("u1"),
                role=Role.CROUPIER,
                approval_date=datetime.date(2020, 1, 2),
                approval_end=datetime.date(2020, 1, 1),
            )
        ],
    ),
    "suspension_end_after_start": lambda w: constraint_refuses(
        "suspension_end_after_start",
        [
            Employee(
                user=make_user("u2"),
                role=Role.CROUPIER,
                suspended_from=datetime.date(2020, 1, 2),
                suspended_until=datetime.date(2020, 1, 1),
            )
        ],
    ),
    "suspension_end_has_start": lambda w: constraint_refuses(
        "suspension_end_has_start",
        [Employee(user=make_user("u3"), role=Role.CROUPIER, suspended_until=datetime.date(2020, 1, 1))],
    ),
    "one_membership_per_casino": lambda w: constraint_refuses(
        # A membership that is not the director's: the director's clone would also break r29_one_director_per_casino.
        "one_membership_per_casino",
        [clone(Membership.objects.filter(director=False).first())],
    ),
    # A second directeur responsable in the casino (R29), written past the services.
    "r29_one_director_per_casino": lambda w: constraint_refuses(
        "r29_one_director_per_casino", [Membership(employee=second_director(), casino=w["casino"], director=True)]
    ),
    "one_open_alert_per_key": lambda w: constraint_refuses(
        "one_open_alert_per_key",
        [
            Alert(casino=w["casino"], kind="k", key="same", message="m"),
            Alert(casino=w["casino"], kind="k", key="same", message="m"),
        ],
    ),
    "one_answer_per_idempotency_key": lambda w: constraint_refuses(
        "one_answer_per_idempotency_key",
        [
            IdempotentRequest(user=make_user("u3"), key="k", path="/", status=200),
            IdempotentRequest(user=make_user("u3", existing=True), key="k", path="/", status=200),
        ],
    ),
    "r23_journal_sequence_unique": lambda w: constraint_refuses(
        "r23_journal_sequence_unique", [clone(JournalEntry.objects.first(), previous_hash="f" * 64)]
    ),
    "r23_journal_chain_unique": lambda w: constraint_refuses(
        "r23_journal_chain_unique", [clone(JournalEntry.objects.first(), sequence=10**9)]
    ),
    "r23_journal_sequence_positive": lambda w: constraint_refuses(
        "r23_journal_sequence_positive", [clone(JournalEntry.objects.first(), sequence=0, previous_hash="e" * 64)]
    ),
    "export_period_ordered": lambda w: constraint_refuses(
        "export_period_ordered",
        [clone(Export.objects.first(), date_to=Export.objects.first().date_from - datetime.timedelta(days=1))],
    ),
    "export_progress_at_most_100": lambda w: constraint_refuses(
        "export_progress_at_most_100", [clone(Export.objects.first(), progress=101)]
    ),
    "r1_legal_apparatus_configuration": lambda w: constraint_refuses(
        "r1_legal_apparatus_configuration",
        [Apparatus(casino=w["casino"], game=Game.BOULE, name="Boule 14", numbers=14, cases=27)],
    ),
    "unique_apparatus_name": lambda w: constraint_refuses("unique_apparatus_name", [clone(Apparatus.objects.first())]),
    "unique_table_name_per_apparatus": lambda w: constraint_refuses(
        "unique_table_name_per_apparatus", [clone(Table.objects.first())]
    ),
    "r5_reason_when_chef_cannot_face_launcher": lambda w: constraint_refuses(
        "r5_reason_when_chef_cannot_face_launcher",
        [clone(Table.objects.first(), name="Sans raison", chef_faces_launcher=False, placement_note="")],
    ),
    "r2_unique_order_number": lambda w: constraint_refuses("r2_unique_order_number", [clone(Tableau.objects.first())]),
    "r2_order_number_positive": lambda w: constraint_refuses(
        "r2_order_number_positive", [clone(Tableau.objects.first(), number=0)]
    ),
    "r3_no_built_in_cashbox_at_boule": lambda w: constraint_refuses(
        "r3_no_built_in_cashbox_at_boule",
        [Cashbox(tableau=Tableau.objects.get(game=Game.BOULE), game=Game.BOULE, kind=Cashbox.Kind.BUILT_IN)],
    ),
    "r3_vingt_trois_only_built_in_cashbox": lambda w: constraint_refuses(
        "r3_vingt_trois_only_built_in_cashbox",
        [
            Cashbox(
                tableau=Tableau.objects.get(game=Game.VINGT_TROIS), game=Game.VINGT_TROIS, kind=Cashbox.Kind.MOBILE_OPEN
            )
        ],
    ),
    "r3_one_built_in_cashbox_per_tableau": lambda w: constraint_refuses(
        "r3_one_built_in_cashbox_per_tableau",
        [
            Cashbox(
                tableau=Tableau.objects.get(game=Game.VINGT_TROIS), game=Game.VINGT_TROIS, kind=Cashbox.Kind.BUILT_IN
            )
        ],
    ),
    "r3_one_interruption_box_per_tableau": lambda w: constraint_refuses(
        "r3_one_interruption_box_per_tableau",
        [Cashbox(tableau=Tableau.objects.get(game=Game.BOULE), game=Game.BOULE, kind=Cashbox.Kind.INTERRUPTION_BOX)],
    ),
    "one_gaming_day_per_date": lambda w: constraint_refuses(
        "one_gaming_day_per_date", [clone(GamingDay.objects.first())]
    ),
    "one_seance_of_each_kind_per_day": lambda w: constraint_refuses(
        "one_seance_of_each_kind_per_day", [clone(w["seance"])]
    ),
    "seance_ends_after_start": lambda w: constraint_refuses(
        "seance_ends_after_start",
        [clone(w["seance"], kind="autre", planned_end=w["seance"].planned_start)],
    ),
    "seance_times_follow_state": lambda w: constraint_refuses(
        "seance_times_follow_state", [clone(w["seance"], kind="autre", state="planned")]
    ),
    "r10_r11_one_opening_per_tableau_per_day": lambda w: constraint_refuses(
        "r10_r11_one_opening_per_tableau_per_day", [clone(Opening.objects.first())]
    ),
    "r12_limits_positive": lambda w: constraint_refuses(
        "r12_limits_positive",
        [
            clone(
                Opening.objects.first(),
                gaming_day=GamingDay.objects.create(casino=w["casino"], date=datetime.date(2000, 1, 1)),
                minimum=0,
            )
        ],
    ),
    "r4_one_roster_per_seance_and_apparatus": lambda w: constraint_refuses(
        "r4_one_roster_per_seance_and_apparatus", [clone(w["roster"], signature_id=new_signature(w).pk)]
    ),
    "r4_rotation_period_positive": lambda w: constraint_refuses(
        "r4_rotation_period_positive",
        [clone(w["roster"], seance=other_seance(w), period_minutes=0, signature_id=new_signature(w).pk)],
    ),
    "r4_published_roster_is_signed": lambda w: constraint_refuses(
        "r4_published_roster_is_signed", [clone(w["roster"], seance=other_seance(w), signature=None)]
    ),
    "r4_launcher_listed_once": lambda w: constraint_refuses(
        "r4_launcher_listed_once", [clone(RosterMember.objects.first(), position=99)]
    ),
    "r4_replacement_for_a_relief_or_skip": lambda w: constraint_refuses(
        "r4_replacement_for_a_relief_or_skip",
        [clone(RosterChange.objects.first(), kind="absence", replacement_id=RosterChange.objects.first().member_id)],
    ),
    "r4_skip_is_signed": lambda w: constraint_refuses(
        "r4_skip_is_signed",
        [
            clone(
                RosterChange.objects.first(),
                kind="skip",
                replacement_id=RosterChange.objects.first().member_id,
                signature=None,
            )
        ],
    ),
    "r4_change_has_a_reason": lambda w: constraint_refuses(
        "r4_change_has_a_reason", [clone(RosterChange.objects.first(), reason="")]
    ),
    "r15_one_initial_advance_per_seance": lambda w: constraint_refuses(
        "r15_one_initial_advance_per_seance", [clone(Advance.objects.first(), signature_id=new_signature(w).pk)]
    ),
    "r15_advance_positive": lambda w: constraint_refuses(
        "r15_advance_positive",
        [clone(Advance.objects.first(), kind="top_up", amount=Decimal("0"), signature_id=new_signature(w).pk)],
    ),
    "r20_one_final_count_per_seance": lambda w: constraint_refuses(
        "r20_one_final_count_per_seance", [clone(w["count"], signature_id=new_signature(w).pk)]
    ),
    "r20_result_is_encaisse_minus_advances": lambda w: constraint_refuses(
        "r20_result_is_encaisse_minus_advances",
        [clone(w["count"], seance=other_seance(w), result=w["count"].result + 1000, signature_id=new_signature(w).pk)],
    ),
    # The co-signatures of the people present (R20, R28): the counter's without the caissier's, or on an interruption.
    "r28_final_count_cosigned_by_both": lambda w: cosignatures_refused(w),
    "r17_encaisse_not_negative": lambda w: constraint_refuses(
        "r17_encaisse_not_negative",
        [clone(Count.objects.filter(kind="interruption").first(), amount=Decimal("-1"))],
    ),
    "r17_one_ongoing_interruption": lambda w: constraint_refuses(
        "r17_one_ongoing_interruption",
        [clone(Interruption.objects.first(), resumed_at=None, resumed_by=None, count=c) for c in spare_counts(2)],
    ),
    "r18_short_interruption_attested": lambda w: constraint_refuses(
        "r18_short_interruption_attested", [clone(Interruption.objects.first(), kind="short", count_id=None)]
    ),
    "r23_correction_references_one_original": lambda w: constraint_refuses(
        "r23_correction_references_one_original",
        [clone(Correction.objects.first(), advance_id=Advance.objects.first().pk, approval_id=new_signature(w).pk)],
    ),
    "r22_second_signature_after_first": lambda w: constraint_refuses(
        "r22_second_signature_after_first",
        [
            clone(
                w["register"],
                gaming_day=GamingDay.objects.create(casino=w["casino"], date=datetime.date(2000, 1, 2)),
                first_signature=None,
                second_signature_id=new_signature(w).pk,
            )
        ],
    ),
    "r22_one_line_per_seance_and_cashbox": lambda w: constraint_refuses(
        "r22_one_line_per_seance_and_cashbox",
        [clone(ControlRegisterLine.objects.first(), count_id=Count.objects.filter(kind="interruption").first().pk)],
    ),
}


def spare_counts(number):
    """Interruption counts written past the services, for rows that each need their own count."""
    original = Count.objects.filter(kind="interruption").first()
    return Count.objects.bulk_create([clone(original) for _ in range(number)])


def make_user(username, existing=False):
    from django.contrib.auth import get_user_model

    users = get_user_model().objects
    return users.get(username=username) if existing else users.create_user(username=username, password=PASSWORD)


def other_seance(w):
    """A séance of another day, so that only the constraint under test is broken."""
    from seances.services import plan_seances

    director = w["casino"].memberships.get(employee__role=Role.DIRECTOR).employee.user
    return plan_seances(director, w["casino"], GamingDay.date_at(w["casino"]) + datetime.timedelta(days=3))[0]


def all_constraints():
    found, regulated_apps = {}, regulated_labels()
    for model in apps.get_models(include_auto_created=True):
        if model._meta.app_label in regulated_apps:
            for constraint in model._meta.constraints:
                found[constraint.name] = constraint
    return found


def test_every_named_constraint_has_a_test_that_writes_past_the_services():
    """The walk: a constraint added to a model's Meta without its entry in CONSTRAINT_TESTS fails here."""
    missing = sorted(set(all_constraints()) - set(CONSTRAINT_TESTS))
    assert not missing, f"named constraints without a database test in tests/audit/test_db_guards.py: {missing}"


def test_the_database_refuses_a_row_that_breaks_each_constraint(world):
    """Each constraint's test on the same world, each in a savepoint rolled back after it (a world costs a second,
    twice that on PostgreSQL, and there are some sixty constraints): the failures are reported by constraint."""
    failures = []
    for name in sorted(CONSTRAINT_TESTS):
        try:
            with transaction.atomic():
                assert name in all_constraints(), f"{name} is no longer a constraint of any model"
                CONSTRAINT_TESTS[name](world)
                transaction.set_rollback(True)
        except (Exception, pytest.fail.Exception) as failure:
            failures.append(f"{name}: {failure}")
    assert failures == [], "\n".join(failures)
    assert len(CONSTRAINT_TESTS) >= 50


def test_r23_casino_and_employee_rows_are_never_deleted(world):
    refused("DELETE FROM casino_casino WHERE id = %s", [world["casino"].pk])
    assert Casino.objects.filter(pk=world["casino"].pk).exists()
