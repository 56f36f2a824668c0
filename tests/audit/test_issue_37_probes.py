"""Every probe of issue 37, as the application role (refused by the database) and as the owner who switches the
guards off (found by the verifiers, named by record and field), with the casino still writing afterwards (R23).

On SQLite both roles are the same connection: the application-role half checks the triggers; on PostgreSQL with
DATABASE_APP_ROLE it runs as the restricted role `grant_app_role` sets up, the owner half as the tables' owner."""

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.db import DatabaseError, IntegrityError, connection, transaction

from cashbox.models import Advance, Count
from casino import services
from casino.audit import signing
from casino.audit.verification import verify_casino
from casino.models import CasinoKey, Employee, JournalHead, Role, Seal
from tests.conftest import APP_ROLE, as_owner
from tests.helpers.guard_helpers import drop_guard

pytestmark = pytest.mark.django_db


def refused(sql, params=()):
    """The statement, as the application role, must be refused by the database (nothing written)."""
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)
        if connection.vendor == "postgresql":
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def as_intruding_owner(table, sql, params=()):
    """The owner switches the table's guard off and writes (the trigger stays off: re-enabling it changes nothing the
    verifiers see)."""
    with as_owner(connection):
        drop_guard(table)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)


def problems_of(casino):
    return [what for _sequence, what in verify_casino(casino)[1]]


def still_writes(casino):
    """A journaled write of the casino goes through after the probe (no denial of service)."""
    alert = services.raise_alert(casino, "test", "apres-sonde", "Écriture après la sonde")
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
