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
    """casino.rows builds each shape's SQL once per process: built again in each test, with the code under test."""
    from casino import rows

    rows._select.cache_clear()
    rows._scope.cache_clear()
    yield
    rows._select.cache_clear()
    rows._scope.cache_clear()


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
