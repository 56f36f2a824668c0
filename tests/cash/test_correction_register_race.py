"""A correction and the control register at the same moment: the register never misses a correction committed
alongside it (R22, R23). Both lock the gaming day; on PostgreSQL only, where row locks serialise them."""

import threading
import time

import pytest
from django.db import connection
from rest_framework.test import APIClient

from cashbox import services
from cashbox.models import ControlRegister, Correction, Count
from casino.rules import DomainError
from seances.models import GamingDay, Seance
from seances.services import change_seance_state
from tests.conftest import PASSWORD, require_postgres
from tests.helpers.cash_helpers import chips_for, open_seance, post_advance, post_final_count

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def postgres_only():
    require_postgres()


@pytest.fixture
def counted_day(director, codir, chef, croupier, croupier2, caissier, open_day, boule_tableau):
    """A day whose séances are closed, with one certified final count of 9 000 € (result 1 000 €)."""
    assert post_advance(APIClient(), chef, boule_tableau, open_day).status_code == 201
    assert post_final_count(APIClient(), chef, boule_tableau, open_day, "9000").status_code == 201
    for seance in open_day.gaming_day.seances.order_by("planned_start"):
        seance.refresh_from_db()
        if seance.state == Seance.State.PLANNED:
            open_seance(director, seance)  # after its rotation orders (R4)
        change_seance_state(director, seance, Seance.State.CLOSED)
    return open_day.gaming_day


def test_r22_a_register_drawn_up_during_a_correction_includes_it_or_refuses_it(
    counted_day, director, chef, monkeypatch
):
    original_sign = services.sign
    signing = threading.Event()

    def slow_sign(*args, **kwargs):
        # The correction has passed its « no register yet » check: hold it here while the register is drawn up.
        signing.set()
        time.sleep(1.0)
        return original_sign(*args, **kwargs)

    monkeypatch.setattr(services, "sign", slow_sign)
    count = Count.objects.get(kind=Count.Kind.FINAL)
    answers = {}

    def correct():
        try:
            answers["correction"] = services.correct(
                chef,
                count,
                chips_for("9100"),
                "Erreur de lecture",
                "neuf mille cent euros",
                "directeur",
                PASSWORD,
            )
        except DomainError as error:
            answers["correction"] = error
        finally:
            connection.close()

    def draw_up():
        try:
            signing.wait(timeout=10)
            answers["register"] = services.draw_up_register(director, GamingDay.objects.get(pk=counted_day.pk))
        finally:
            connection.close()

    threads = [threading.Thread(target=correct), threading.Thread(target=draw_up)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads), "deadlock"

    register = ControlRegister.objects.get()
    if Correction.objects.exists():
        # The correction committed: the register, drawn up after it, carries the corrected result.
        assert register.total == 1100
        assert register.lines.get().result == 1100
    else:
        assert isinstance(answers["correction"], DomainError) and answers["correction"].rule == "R22"
        assert register.total == 1000
