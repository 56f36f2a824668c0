"""casino.rows.rows_with_times gives what list() gives, on both databases (issue 15: the roster report's heads)."""

import datetime

import pytest
from django.db.models.functions import Coalesce

from casino.models import Role
from casino.rows import rows_with_times
from seances.models import GamingDay, Seance
from seances.services import plan_seances
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def sql_built_here():
    """casino.rows builds each shape's SQL once per process, and each model's converters once per connection: built
    again in each test, with the code under test."""
    from casino import rows

    rows._select.cache_clear()
    rows._scope.cache_clear()
    rows._CONVERTERS.clear()
    yield
    rows._select.cache_clear()
    rows._scope.cache_clear()
    rows._CONVERTERS.clear()


def test_timestamps_and_plain_columns_read_the_same_as_through_django(director, casino):
    plan_seances(director, casino, GamingDay.date_at(casino))
    seances = (
        Seance.objects.filter(gaming_day__casino=casino)
        .order_by("planned_start")
        .values_list(
            "pk", "gaming_day_id", "state", Coalesce("actual_start", "planned_start"), "planned_end", "actual_end"
        )
    )
    expected = list(seances.all())
    assert len(expected) == 2
    found = rows_with_times(seances)
    assert found == [tuple(row) for row in expected]
    start = found[0][3]
    assert start.utcoffset() == datetime.timedelta(0) and found[0][5] is None


# One record by its key (casino.rows.instance, scoped_instance): what the ORM's lookup finds, on both databases ----


def _fields(instance):
    """Every column's value with its type: a converter that the hand-written read missed shows as a wrong type."""
    return {
        field.attname: (getattr(instance, field.attname), type(getattr(instance, field.attname)))
        for field in type(instance)._meta.concrete_fields
    }


def _same(found, expected):
    if expected is None:
        return found is None
    return (
        found is not None
        and type(found) is type(expected)
        and _fields(found) == _fields(expected)
        and (found._state.db, found._state.adding) == (expected._state.db, False)
    )


@pytest.fixture
def readers(director, regulator, outsider, casino):
    from django.contrib.auth.models import AnonymousUser

    from tests.conftest import make_employee

    gone = make_employee("parti", Role.CROUPIER, casino)
    membership = gone.memberships.get()
    membership.active = False
    membership.save()
    return {
        "director": director,
        "regulator": regulator,
        "outsider": outsider,
        "gone": gone.user,
        "anonymous": AnonymousUser(),
    }


def test_a_record_by_its_key_within_the_user_s_casinos_is_what_for_user_finds(
    cash_staff, open_day, boule_tableau, elsewhere, readers
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from cashbox.models import Advance, Count
    from cashbox.services import record_advance, record_final_count
    from casino.rows import scoped_instance
    from tables.models import Cashbox, Tableau
    from tests.helpers.cash_helpers import chips_for, main_box

    box = main_box(boule_tableau)
    amount = boule_tableau.casino.advance_amount(boule_tableau.game)
    director = cash_staff["director"]
    record_advance(director, box, open_day, "initial", chips_for(amount), "croupier1", "directeur", PASSWORD)
    record_final_count(
        director, box, open_day, chips_for(amount + 200), "croupier1", ["croupier2"], "caissier", "directeur", PASSWORD
    )
    cases = [
        (Cashbox, None, [*Cashbox.objects.values_list("pk", flat=True)]),
        (Tableau, None, [boule_tableau.pk, elsewhere.pk]),
        (Seance, None, [*Seance.objects.values_list("pk", flat=True)]),
        (Seance, "gaming_day", [*Seance.objects.values_list("pk", flat=True)]),
        (Advance, None, [*Advance.objects.values_list("pk", flat=True)]),
        (Count, None, [*Count.objects.values_list("pk", flat=True)]),
    ]
    seen = {True: 0, False: 0}
    for model, related, keys in cases:
        for user in readers.values():
            for pk in [*keys, max(keys) + 1000, "12", 2**63, -(2**63) - 1]:
                queryset = model.objects.for_user(user)
                expected = (queryset.select_related(related) if related else queryset).filter(pk=pk).first()
                with CaptureQueriesContext(connection) as queries:
                    found = scoped_instance(model, pk, user, related)
                assert _same(found, expected), (model, related, user, pk)
                # A lookup locks nothing: the cash box is locked once the signer's secrets are checked (issue 15).
                assert not any("FOR UPDATE" in query["sql"] for query in queries)
                if related and expected is not None:
                    assert related in found._state.fields_cache  # read in the same query, not on access
                    assert _same(getattr(found, related), getattr(expected, related))
                seen[expected is not None] += 1
    # Both outcomes met, for each kind of reader: the director and the regulator see their casino's records,
    # the other casino's employee sees only theirs, a deactivated membership and an anonymous user nothing.
    assert seen[True] and seen[False]
    assert scoped_instance(Cashbox, box.pk, readers["director"]) is not None
    assert scoped_instance(Cashbox, box.pk, readers["regulator"]) is not None
    for user in ("outsider", "gone", "anonymous"):
        assert scoped_instance(Cashbox, box.pk, readers[user]) is None
    assert scoped_instance(Cashbox, main_box(elsewhere).pk, readers["outsider"]) is not None
    for bad in ("abc", None, [1]):
        with pytest.raises((TypeError, ValueError)):
            scoped_instance(Cashbox, bad, readers["director"])


def test_a_locked_record_with_its_related_rows_is_what_select_related_reads(boule_tableau, elsewhere):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from casino.rows import instance
    from tables.models import Cashbox
    from tests.helpers.cash_helpers import main_box

    paths = ("tableau__casino", "tableau__table")
    for box in (main_box(boule_tableau), main_box(elsewhere)):
        expected = Cashbox.objects.select_related(*paths).get(pk=box.pk)
        with CaptureQueriesContext(connection) as queries:
            found = instance(Cashbox, box.pk, paths, lock=True)
            assert _same(found, expected)
            assert _same(found.tableau, expected.tableau)
            assert _same(found.tableau.casino, expected.tableau.casino)
            assert _same(found.tableau.table, expected.tableau.table)
        assert len(queries) == 1
        if connection.vendor == "postgresql":
            assert queries[0]["sql"].endswith('FOR UPDATE OF "tables_cashbox"')
    for missing in (10**6, 2**63):
        with pytest.raises(Cashbox.DoesNotExist, match="^Cashbox matching query does not exist.$"):
            instance(Cashbox, missing, paths)
    with pytest.raises(ValueError, match="never null"):
        instance(Seance, 1, ("actual_start",))


@pytest.mark.django_db(transaction=True)
def test_a_lock_outside_a_transaction_is_refused_as_select_for_update_refuses_it(boule_tableau):
    from django.db import connection
    from django.db.transaction import TransactionManagementError

    from casino.rows import instance
    from tables.models import Cashbox
    from tests.helpers.cash_helpers import main_box

    box = main_box(boule_tableau)
    if not connection.features.has_select_for_update:
        pytest.skip("SQLite takes no row lock: there is nothing to refuse")
    # A lock taken in autocommit would be released at once: select_for_update() refuses it, and so does this.
    message = "^select_for_update cannot be used outside of a transaction.$"
    with pytest.raises(TransactionManagementError, match=message):
        instance(Cashbox, box.pk, ("tableau__casino",), lock=True)
    with pytest.raises(TransactionManagementError, match=message):
        Cashbox.objects.select_for_update(of=("self",)).get(pk=box.pk)
    assert instance(Cashbox, box.pk, ("tableau__casino",)).tableau.casino == boule_tableau.casino


def test_the_first_and_the_last_key_of_the_column_s_range_are_found(casino):
    """A key at either end of its column's range is looked up (only a key beyond them is known to find nothing)."""
    from django.db import connection

    from casino.models import Casino
    from casino.rows import instance

    low, high = connection.ops.integer_field_range(Casino._meta.pk.get_internal_type())
    for pk in (low, high):
        Casino.objects.create(
            pk=pk, name=f"Casino {pk}", arrete_reference="Arrêté", arrete_date=casino.arrete_date, **_stakes(casino)
        )
        assert _same(instance(Casino, pk), Casino.objects.get(pk=pk))
    for pk in (low - 1, high + 1):
        with pytest.raises(Casino.DoesNotExist):
            instance(Casino, pk)


def _stakes(casino):
    return {"min_stake_boule": casino.min_stake_boule, "min_stake_vingt_trois": casino.min_stake_vingt_trois}


def test_a_record_by_a_unique_key_is_what_filter_first_reads(director, codir, casino):
    """unique_instance reads a signing key by its credential id as the ORM's filter().first() reads it, its holder in
    the same query; where it locks, it locks the key's row alone (on PostgreSQL)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from casino.models import Passkey
    from casino.rows import unique_instance
    from tests.helpers.passkey_helpers import enrolled_key

    keys = [enrolled_key(user, casino)[1] for user in (director, codir)]
    for key in keys:
        expected = Passkey.objects.select_related("user").filter(credential_id=key.credential_id).first()
        for lock in (False, True):
            with CaptureQueriesContext(connection) as queries:
                found = unique_instance(
                    Passkey, "credential_id", key.credential_id, ("user",), **({"lock": True} if lock else {})
                )
                assert _same(found, expected)
                assert "user" in found._state.fields_cache  # read in the same query, not on access
                assert _same(found.user, expected.user)
            assert len(queries) == 1
            locked = queries[0]["sql"].endswith('FOR UPDATE OF "casino_passkey"')
            assert locked is (lock and connection.vendor == "postgresql")
    assert unique_instance(Passkey, "credential_id", "pas-une-cle", ("user",)) is None
    assert unique_instance(Passkey, "credential_id", str(keys[0].pk), ("user",)) is None  # a key, not an id


def test_a_record_read_with_the_statement_before_it_is_what_select_related_reads_in_one_round_trip(
    boule_tableau, elsewhere
):
    """counted_then_unique_instance (PostgreSQL: a key's challenge consumed and the key locked in one statement)
    counts the rows of the statement before it and reads the record as select_related does, its row alone locked."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from casino.rows import counted_then_unique_instance
    from tables.models import Cashbox
    from tests.conftest import require_postgres
    from tests.helpers.cash_helpers import main_box

    require_postgres()
    paths = ("tableau__casino", "tableau__table")
    before = "SELECT generate_series(1, %s)"
    for rows, box in enumerate((main_box(boule_tableau), main_box(elsewhere))):
        expected = Cashbox.objects.select_related(*paths).get(pk=box.pk)
        with CaptureQueriesContext(connection) as queries:
            done, found = counted_then_unique_instance(before, [rows], Cashbox, "id", box.pk, paths)
            assert done == rows
            assert _same(found, expected)
            assert _same(found.tableau, expected.tableau)
            assert _same(found.tableau.casino, expected.tableau.casino)
            assert _same(found.tableau.table, expected.tableau.table)
        assert len(queries) == 1
        assert 'FOR UPDATE OF "tables_cashbox")' in queries[0]["sql"]
    assert counted_then_unique_instance(before, [2], Cashbox, "id", 10**6, paths) == (2, None)


def test_the_casino_s_people_a_write_names_are_what_the_orm_reads(director, codir, outsider, casino):
    """members (cashbox.signatures.people_of) reads the casino's active members among the usernames, each with their
    employee and the extra columns, as the ORM's select_related("employee").filter(…).annotate(…) reads them."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.db.models.expressions import RawSQL
    from django.test.utils import CaptureQueriesContext

    from casino.rows import members
    from tests.conftest import make_employee

    gone = make_employee("parti", Role.CROUPIER, casino)
    membership = gone.memberships.get()
    membership.active = False
    membership.save()
    extra = {
        "casino_name": ('SELECT "name" FROM "casino_casino" WHERE "id" = %s', [casino.pk]),
        "members": ('SELECT count(*) FROM "casino_membership" WHERE "casino_id" = %s AND "active"', [casino.pk]),
    }
    names = [director.username, codir.username, outsider.username, gone.user.username, "personne", "", codir.username]
    expected = {
        user.username: user
        for user in get_user_model()
        .objects.select_related("employee")
        .filter(
            username__in=names,
            is_active=True,
            employee__memberships__casino=casino,
            employee__memberships__active=True,
        )
        .annotate(**{name: RawSQL(sql, params) for name, (sql, params) in extra.items()})
    }
    assert sorted(expected) == sorted([director.username, codir.username])
    with CaptureQueriesContext(connection) as queries:
        found = members(casino.pk, names, extra)
        assert sorted(found) == sorted(expected)
        for username, user in found.items():
            assert _same(user, expected[username])
            assert _same(user.employee, expected[username].employee)  # read in the same query, not on access
            assert user.employee.user is user
            assert (user.casino_name, user.members) == (casino.name, expected[username].members)
    assert len(queries) == 1
    assert members(casino.pk, ["", ""], extra) == {}


def test_each_model_s_converters_are_found_once_per_connection(casino):
    """The column converters of a model, which the ORM's compiler finds anew for every query, are found once for each
    connection and model, then reused."""
    from django.db import connection, connections

    from casino import rows
    from casino.models import Casino, Employee

    here = connections[connection.alias]
    first = rows._converters(here, Casino)
    assert rows._converters(here, Casino) is first
    assert rows._converters(here, Employee) is not first
    assert rows._CONVERTERS[here][Casino] is first
    assert rows.instance(Casino, casino.pk) == casino  # read with the same converters
    assert rows._converters(here, Casino) is first
