"""On SQLite a REPLACE removes the row it conflicts with without firing its DELETE trigger unless recursive triggers
are on: every guarded row, the control register first, must refuse it like any other rewrite (R23)."""

import pytest
from django.db import IntegrityError, connection, transaction

from cashbox.models import ControlRegister
from casino.audit import append_only

pytestmark = pytest.mark.django_db


@pytest.fixture
def sqlite_only():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's REPLACE only (PostgreSQL has no REPLACE)")


def columns_and_values(table, pk):
    with connection.cursor() as cursor:
        cursor.execute(f'SELECT * FROM "{table}" WHERE id = %s', [pk])
        names = [column[0] for column in cursor.description]
        return names, list(cursor.fetchone())


def test_r23_the_control_register_has_its_guard_triggers_on_sqlite(sqlite_only, world):
    triggers = {name for table, name in append_only.existing_triggers(connection, ["cashbox_controlregister"])}
    assert "r23_guard_delete_cashbox_controlregister" in triggers
    assert "r23_guard_cashbox_controlregister__total" in triggers


def test_r23_a_replace_of_a_signed_control_register_is_refused_on_sqlite(sqlite_only, world):
    register = ControlRegister.objects.get(pk=world["register"].pk)
    names, values = columns_and_values("cashbox_controlregister", register.pk)
    values[names.index("total")] = "999999.00"
    placeholders = ", ".join(["%s"] * len(values))
    quoted = ", ".join(f'"{name}"' for name in names)
    with pytest.raises(IntegrityError, match="r23_append_only"):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f'REPLACE INTO "cashbox_controlregister" ({quoted}) VALUES ({placeholders})', values)
    register.refresh_from_db()
    assert str(register.total) != "999999.00"
