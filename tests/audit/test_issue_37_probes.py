"""Every probe of issue 37, as the application role (refused by the database) and as the owner who switches the
guards off (found by the verifiers, named by record and field), with the casino still writing afterwards (R23).

On SQLite both roles are the same connection: the application-role half checks the triggers; on PostgreSQL with
DATABASE_APP_ROLE it runs as the restricted role `grant_app_role` sets up, the owner half as the tables' owner."""

import importlib
import io
import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import CommandError, call_command
from django.db import DatabaseError, IntegrityError, connection, transaction

from cashbox.models import Advance, Count
from casino import services
from casino.audit import signing
from casino.audit.verification import run_verification, verify_casino
from casino.models import CasinoKey, Employee, JournalEntry, JournalHead, Passkey, Role, Seal
from tests.conftest import APP_ROLE, as_owner
from tests.helpers.guard_helpers import drop_guard

pytestmark = pytest.mark.django_db


def refused(sql, params=()):
    """The statement, as the application role, must be refused by the database (nothing written)."""
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)
        if connection.vendor == "postgresql":
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the deferred checks run now; a refusal rolls back
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")


def as_intruding_owner(table, sql, params=()):
    """The owner switches the table's guard off and writes (the trigger stays off: re-enabling it changes nothing the
    verifiers see)."""
    with as_owner(connection):
        drop_guard(table)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)


def problems_of(casino):
    return [what for _sequence, what in verify_casino(casino)[1]]


def still_writes(casino, key="apres-sonde"):
    """A journaled write of the casino goes through after the probe (no denial of service)."""
    alert = services.raise_alert(casino, "test", key, "Écriture après la sonde")
    assert alert is not None


def key_probe_sql(casino):
    pem = signing.public_pem(Ed25519PrivateKey.generate())
    insert = (
        "INSERT INTO casino_casinokey (casino_id, key_id, public_key_pem, created_at) VALUES (%s, %s, %s, "
        "CURRENT_TIMESTAMP)",
        [casino.pk, signing.key_id_of(pem), pem],
    )
    retire = ("UPDATE casino_casinokey SET retired_at = CURRENT_TIMESTAMP WHERE casino_id = %s", [casino.pk])
    return insert, retire, signing.key_id_of(pem)


def test_probe_the_trust_anchor_swapped_by_the_application_role_is_refused(world):
    casino = world["casino"]
    real = CasinoKey.objects.get(casino=casino, retired_at__isnull=True)
    insert, retire, _key_id = key_probe_sql(casino)
    refused(*insert)  # a second key beside the one in service
    if APP_ROLE:
        refused(*retire)  # only the owner (the rotation) retires a key
        assert CasinoKey.objects.filter(casino=casino, retired_at__isnull=True).count() == 1
        still_writes(casino)
        assert problems_of(casino) == []
    else:
        # SQLite has no roles: the retirement goes through, and the verifiers name it.
        with connection.cursor() as cursor:
            cursor.execute(*retire)
        assert any(f"clé de signature {real.key_id} (n° {real.pk}) : retirée le " in p for p in problems_of(casino))


def test_probe_the_trust_anchor_swapped_by_the_owner_is_named(world):
    casino = world["casino"]
    real = CasinoKey.objects.get(casino=casino, retired_at__isnull=True)
    insert, retire, key_id = key_probe_sql(casino)
    as_intruding_owner("casino_casinokey", *retire)
    with as_owner(connection), connection.cursor() as cursor:
        cursor.execute(*insert)
    problems = problems_of(casino)
    assert any(f"clé de signature {real.key_id} (n° {real.pk}) : retirée le " in p for p in problems), problems
    assert any(f"clé de signature {key_id}" in p and "ajoutée hors de la rotation" in p for p in problems), problems


def test_probe_a_role_changed_in_sql_by_the_application_role_is_refused(world):
    casino = world["casino"]
    croupier = Employee.objects.filter(role=Role.CROUPIER, memberships__casino=casino).first()
    refused("UPDATE casino_employee SET role = %s WHERE id = %s", [Role.DIRECTOR, croupier.pk])
    still_writes(casino)
    assert problems_of(casino) == []


def test_probe_a_role_changed_in_sql_by_the_owner_is_named_by_record_and_field(world):
    casino = world["casino"]
    croupier = Employee.objects.filter(role=Role.CROUPIER, memberships__casino=casino).first()
    as_intruding_owner(
        "casino_employee", "UPDATE casino_employee SET role = %s WHERE id = %s", [Role.DIRECTOR, croupier.pk]
    )
    problems = problems_of(casino)
    assert any(f"casino.employee n° {croupier.pk} : le champ « role »" in p for p in problems), problems


def test_probe_the_journal_head_moved_by_the_application_role_is_refused(world):
    casino = world["casino"]
    refused("UPDATE casino_journalhead SET sequence = sequence - 1 WHERE casino_id = %s", [casino.pk])
    still_writes(casino)
    assert problems_of(casino) == []


def test_probe_the_journal_head_moved_by_the_owner_is_named(world):
    casino = world["casino"]
    as_intruding_owner(
        "casino_journalhead", "UPDATE casino_journalhead SET sequence = sequence - 1 WHERE casino_id = %s", [casino.pk]
    )
    head = JournalHead.objects.get(casino=casino)
    problems = problems_of(casino)
    assert any(f"la tête du journal (n° {head.sequence}," in p for p in problems), problems


def test_probe_a_history_row_changed_by_the_application_role_is_refused(world):
    casino = world["casino"]
    refused("UPDATE cashbox_historicaladvance SET amount = amount + 1000")
    still_writes(casino)
    assert problems_of(casino) == []


def test_probe_a_history_row_changed_by_the_owner_is_named_by_record_and_field(world):
    casino = world["casino"]
    advance = Advance.objects.order_by("pk").first()
    as_intruding_owner(
        "cashbox_historicaladvance",
        "UPDATE cashbox_historicaladvance SET amount = amount + 1000 WHERE id = %s",
        [advance.pk],
    )
    problems = problems_of(casino)
    assert any(
        p.startswith(f"cashbox.advance n° {advance.pk}, ligne d'historique n° ") and "« amount »" in p for p in problems
    ), problems
    still_writes(casino)


def test_probe_a_seal_deleted_by_the_application_role_is_refused(world):
    casino = world["casino"]
    refused("DELETE FROM casino_seal WHERE casino_id = %s", [casino.pk])
    still_writes(casino)
    assert problems_of(casino) == []


def test_probe_a_seal_deleted_by_the_owner_is_named_as_a_sealed_day_without_its_seal(world):
    casino = world["casino"]
    sealed = Seal.objects.filter(casino=casino, reason=Seal.Reason.DAY_END).first()
    as_intruding_owner("casino_seal", "DELETE FROM casino_seal WHERE id = %s", [sealed.pk])
    problems = problems_of(casino)
    assert any(
        p.startswith(f"scellement n° {sealed.pk} (day_end, journée {sealed.gaming_day.isoformat()})")
        and "supprimé" in p
        for p in problems
    ), problems
    still_writes(casino)


WITNESS_REFUSAL = "les présents d'un comptage s'inscrivent avec lui"


def add_witness(count_id, user_id):
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("INSERT INTO cashbox_count_witnesses (count_id, user_id) VALUES (%s, %s)", [count_id, user_id])


@pytest.mark.django_db(transaction=True)
def test_probe_a_witness_added_to_a_past_count_is_refused_as_the_application_role_and_as_the_owner(world):
    """Who was present at a count is written with it (R17, R20): a person added afterwards to a committed count is
    refused for every role (the count's own transaction alone may add them: the world's counts were written so)."""
    casino = world["casino"]
    assert Count.objects.count() >= 2  # on SQLite, the rule is « only the newest count »: probe an older one
    past = Count.objects.order_by("pk").first()
    intruder = Employee.objects.filter(memberships__casino=casino).exclude(user__in=past.witnesses.all()).first()
    with pytest.raises(IntegrityError, match=WITNESS_REFUSAL):
        add_witness(past.pk, intruder.user_id)
    with as_owner(connection), pytest.raises(IntegrityError, match=WITNESS_REFUSAL):
        add_witness(past.pk, intruder.user_id)
    assert not past.witnesses.filter(pk=intruder.user_id).exists()
    still_writes(casino)
    assert problems_of(casino) == []


def test_probe_a_witness_written_with_its_count_in_one_transaction_is_accepted(world):
    """The services' way: the count, then its witnesses, in one transaction (savepoints included)."""
    past = world["count"]
    with transaction.atomic():
        with transaction.atomic():
            fresh = Count.objects.create(
                cashbox=past.cashbox,
                seance=past.seance,
                kind=Count.Kind.INTERRUPTION,
                chips=past.chips,
                amount=past.amount,
                advances_total=past.advances_total,
                counted_by=past.counted_by,
                recorded_by=past.recorded_by,
            )
        with transaction.atomic():
            fresh.witnesses.add(past.counted_by)
    assert list(fresh.witnesses.values_list("pk", flat=True)) == [past.counted_by_id]
    # Another path than the services' (the ORM's add()) is journaled too, by the m2m_changed receiver.
    payload = json.loads(witness_entry(fresh).document)["payload"]
    assert payload["witnesses"] == [past.counted_by_id]
    assert payload["witnesses_usernames"] == [past.counted_by.username]
    assert problems_of(world["casino"]) == []


# Who was present at a count, against the journal entry that inscribed them (R17, R20, R23) -----------------------


def witness_entry(count):
    """The journal entry that inscribed the count's witnesses (the newest one)."""
    return (
        JournalEntry.objects.filter(object_type="cashbox.count_witnesses", object_id=str(count.pk))
        .order_by("-sequence")
        .first()
    )


def test_every_count_written_by_the_services_journals_its_witnesses_by_id_and_username(world):
    for count in Count.objects.all():
        entry = witness_entry(count)
        assert entry is not None, count.pk
        assert entry.action == "cashbox.count_witnesses.set"
        payload = json.loads(entry.document)["payload"]
        people = count.witnesses.order_by("pk")
        assert payload["witnesses"] == [user.pk for user in people]
        assert payload["witnesses_usernames"] == sorted(user.username for user in people)
        assert entry.tableau_number == count.cashbox.tableau.number


def test_probe_a_witness_inserted_by_the_owner_with_the_guards_off_is_named_by_record_field_and_entry(world):
    casino = world["casino"]
    past = Count.objects.order_by("pk").first()
    before = sorted(past.witnesses.values_list("pk", flat=True))
    intruder = Employee.objects.filter(memberships__casino=casino).exclude(user__in=before).first().user_id
    entry = witness_entry(past)
    proven, _problems = run_verification(casino, full=True)
    assert proven.problems == 0 and proven.seal is not None
    as_intruding_owner(
        "cashbox_count_witnesses",
        "INSERT INTO cashbox_count_witnesses (count_id, user_id) VALUES (%s, %s)",
        [past.pk, intruder],
    )
    expected = (
        f"cashbox.count n° {past.pk} : le champ « witnesses » vaut {sorted([*before, intruder])!r} en base (table "
        f"cashbox_count_witnesses), {before!r} au journal (entrée n° {entry.sequence})"
    )
    assert expected in problems_of(casino)
    # The nightly task names it too, in its incremental runs (from the seal proven above) and its whole ones.
    for full in (False, True):
        run, problems = run_verification(casino, full=full)
        assert run.full is full
        assert expected in [what for _sequence, what in problems]
    still_writes(casino)


def test_probe_a_witness_deleted_by_the_owner_with_the_guards_off_is_named(world):
    casino = world["casino"]
    past = Count.objects.order_by("pk").first()
    before = sorted(past.witnesses.values_list("pk", flat=True))
    gone = before[0]
    as_intruding_owner(
        "cashbox_count_witnesses",
        "DELETE FROM cashbox_count_witnesses WHERE count_id = %s AND user_id = %s",
        [past.pk, gone],
    )
    entry = witness_entry(past)
    assert (
        f"cashbox.count n° {past.pk} : le champ « witnesses » vaut {before[1:]!r} en base (table "
        f"cashbox_count_witnesses), {before!r} au journal (entrée n° {entry.sequence})"
    ) in problems_of(casino)
    still_writes(casino)


def test_witnesses_no_entry_vouches_for_are_named_and_the_migration_journals_those_written_before(world):
    """A count whose witness rows no journal entry describes (written before this version, or behind the signal's
    back) is named; migration cashbox 0014 journals the rows the counts had then, and the verifiers are content."""
    from django.apps import apps
    from django.db.models.signals import m2m_changed

    from casino.audit.relations import on_relation_changed

    casino = world["casino"]
    past = world["count"]
    m2m_changed.disconnect(on_relation_changed, dispatch_uid="journal_relations")
    try:
        with transaction.atomic():
            fresh = Count.objects.create(
                cashbox=past.cashbox,
                seance=past.seance,
                kind=Count.Kind.INTERRUPTION,
                chips=past.chips,
                amount=past.amount,
                advances_total=past.advances_total,
                counted_by=past.counted_by,
                recorded_by=past.recorded_by,
            )
            fresh.witnesses.add(past.counted_by)
    finally:
        m2m_changed.connect(on_relation_changed, dispatch_uid="journal_relations")
    assert (
        f"cashbox.count n° {fresh.pk} : le champ « witnesses » vaut [{past.counted_by_id}] en base (table "
        "cashbox_count_witnesses), mais aucune entrée du journal ne l'inscrit"
    ) in problems_of(casino)
    migration = importlib.import_module("cashbox.migrations.0014_journal_count_witnesses")
    migration.journal_witnesses(apps, None)
    assert problems_of(casino) == []
    assert json.loads(witness_entry(fresh).document)["payload"]["_reason"] == migration.REASON
    still_writes(casino)


def test_probe_a_head_moved_by_the_owner_is_said_at_once_and_released_after_inspection(world, director, api, client):
    """Every write is refused (409 R23, saying why) while the head is off its chain; verify_journal and the journal's
    verification page say so with the command that releases it; once released (journaled), the casino writes."""
    casino = world["casino"]
    alert = services.raise_alert(casino, "test", "avant-sonde", "Une alerte à acquitter")
    as_intruding_owner(
        "casino_journalhead", "UPDATE casino_journalhead SET sequence = sequence - 1 WHERE casino_id = %s", [casino.pk]
    )
    api.force_authenticate(director)
    refused_write = api.post(f"/api/v1/alerts/{alert.pk}/acknowledge/")
    assert refused_write.status_code == 409
    assert refused_write.json()["code"] == "R23"
    assert "la tête du journal ne correspond plus à sa dernière entrée" in refused_write.json()["message"]
    assert "--release-head" in refused_write.json()["message"]
    # A page's write too: 409 saying why, not a 500.
    client.force_login(director)
    page_write = client.post(f"/alertes/{alert.pk}/acquitter/")
    assert page_write.status_code == 409
    assert "la tête du journal ne correspond plus à sa dernière entrée" in page_write.content.decode()

    command = f"python manage.py verify_journal --casino {casino.pk} --release-head"
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError):
        call_command("verify_journal", casino=casino.pk, processes=1, stdout=out, stderr=err)
    assert "la tête du journal (n° " in err.getvalue() and command in err.getvalue(), err.getvalue()
    page = client.get(f"/journal/verification/?casino={casino.pk}").content.decode()
    assert command in page

    head = JournalHead.objects.get(casino=casino)
    out = io.StringIO()
    with pytest.raises(CommandError):  # the run still reports what it found, then releases
        call_command(
            "verify_journal", casino=casino.pk, processes=1, release_head=True, stdout=out, stderr=io.StringIO()
        )
    assert f"tête du journal libérée (elle marquait n° {head.sequence})" in out.getvalue()
    released = JournalEntry.objects.filter(casino=casino, action="journal.head_released").get()
    assert json.loads(released.document)["payload"]["head_sequence"] == head.sequence
    assert released.actor.username == "systeme"

    assert api.post(f"/api/v1/alerts/{alert.pk}/acknowledge/").status_code == 200
    assert problems_of(casino) == []
    out = io.StringIO()
    call_command("verify_journal", casino=casino.pk, processes=1, release_head=True, stdout=out)
    assert "rien à libérer" in out.getvalue()


# The records workflows edit (the casino's settings, roles and approvals, memberships): on PostgreSQL a change no
# journaled save came with is refused at commit, for every role (append_only.vouched_statements); SQLite has no
# deferred triggers, so there, and for the owner who drops the guard, the verifiers name it by record and field.

FREE_COLUMNS = [
    ("casino_casino", "casino.casino", "rotation_period_minutes", "rotation_period_minutes = 1"),
    ("casino_casino", "casino.casino", "min_stake_boule", "min_stake_boule = min_stake_boule + 1"),
    ("casino_casino", "casino.casino", "chip_denominations", """chip_denominations = '["5.00"]'"""),
    ("casino_employee", "casino.employee", "approval_end", "approval_end = '2099-12-31'"),
    ("casino_employee", "casino.employee", "suspended_from", "suspended_from = '2099-01-01', suspended_until = NULL"),
    ("casino_membership", "casino.membership", "active", "active = NOT active"),
]


def refused_at_commit(sql, params):
    """Run the statement, then the checks a commit runs (deferred triggers), in a savepoint."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")


def free_column_record(world, croupier, table):
    casino, employee = world["casino"], croupier.employee
    return {
        "casino_casino": casino.pk,
        "casino_employee": employee.pk,
        "casino_membership": employee.memberships.get(casino=casino).pk,
    }[table]


@pytest.mark.parametrize(("table", "label", "field", "assignment"), FREE_COLUMNS)
def test_probe_a_free_column_changed_in_sql_is_refused_or_named_by_record_and_field(
    world, croupier, table, label, field, assignment
):
    casino = world["casino"]
    pk = free_column_record(world, croupier, table)
    if connection.vendor == "postgresql":
        # A value no journaled save wrote: refused at commit (here, at once), as the application's role.
        sql = f"UPDATE {table} SET {assignment} WHERE id = %s"
        with pytest.raises(IntegrityError, match="ne changent que par leurs formulaires"):
            refused_at_commit(sql, [pk])
        assert problems_of(casino) == []
        still_writes(casino, "apres-refus")
        # The owner who drops the guard gets through, and is named.
        as_intruding_owner(table, f"UPDATE {table} SET {assignment} WHERE id = %s", [pk])
    else:
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {table} SET {assignment} WHERE id = %s", [pk])
    problems = problems_of(casino)
    assert any(p.startswith(f"{label} n° {pk} : le champ « {field} » vaut ") for p in problems), problems
    still_writes(casino)


# An enrolled signing key: inserted pending, confirmed only with another director's signature (R28, R29) ----------

PASSKEY_REFUSAL = "une clé de signature s'enrôle en attente"


def refused_by_the_key_guard(sql, params):
    with pytest.raises(IntegrityError, match=PASSKEY_REFUSAL), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


def pending_key(world):
    """A key enrolled the services' way (pending), beside the world's confirmed one."""
    confirmed = Passkey.objects.get()
    fields = {f.attname: getattr(confirmed, f.attname) for f in Passkey._meta.concrete_fields if not f.primary_key}
    fields.update(
        credential_id="cle-en-attente",
        confirmed_at=None,
        confirmed_by_id=None,
        confirmation_id=None,
        revoked_at=None,
        revoked_by_id=None,
    )
    return confirmed, Passkey.objects.create(**fields)


def test_probe_a_signing_key_inserted_or_confirmed_in_sql_by_the_application_role_is_refused(world):
    confirmed, pending = pending_key(world)
    other = Employee.objects.exclude(user_id=pending.user_id).first()
    refused_by_the_key_guard(
        "INSERT INTO casino_passkey (casino_id, user_id, name, credential_id, public_key, public_key_spki, algorithm, "
        "aaguid, sign_count, transports, enrolled_at, confirmed_at, confirmed_by_id, revocation_reason) "
        "SELECT casino_id, user_id, name, 'cle-inseree', public_key, public_key_spki, algorithm, aaguid, sign_count, "
        "transports, enrolled_at, enrolled_at, %s, '' FROM casino_passkey WHERE id = %s",
        [other.user_id, confirmed.pk],
    )
    refused_by_the_key_guard(
        "UPDATE casino_passkey SET confirmed_at = CURRENT_TIMESTAMP, confirmed_by_id = %s WHERE id = %s",
        [other.user_id, pending.pk],
    )
    # Nor with a signature of another purpose or signer: the world's key's own confirmation is of its confirmer.
    refused_by_the_key_guard(
        "UPDATE casino_passkey SET confirmed_at = CURRENT_TIMESTAMP, confirmed_by_id = %s, confirmation_id = "
        "(SELECT id FROM cashbox_signature WHERE purpose <> 'passkey_confirmation' ORDER BY id LIMIT 1) WHERE id = %s",
        [other.user_id, pending.pk],
    )
    pending.refresh_from_db()
    assert pending.confirmed_at is None
    still_writes(world["casino"])
    assert problems_of(world["casino"]) == []


def test_probe_a_signing_key_confirmed_by_the_owner_with_the_guards_off_is_named(world):
    _confirmed, pending = pending_key(world)
    other = Employee.objects.exclude(user_id=pending.user_id).first()
    as_intruding_owner(
        "casino_passkey",
        "UPDATE casino_passkey SET confirmed_at = CURRENT_TIMESTAMP, confirmed_by_id = %s WHERE id = %s",
        [other.user_id, pending.pk],
    )
    problems = problems_of(world["casino"])
    assert any(f"casino.passkey n° {pending.pk} : le champ « confirmed_at »" in p for p in problems), problems
    still_writes(world["casino"])
