"""The rotation order in a real Chromium: the director builds, reorders and publishes it; the chef de partie
records an absence mid-séance and sees who launches now and next (R4)."""

import datetime
import re

import pytest
import time_machine
from django.utils import timezone

from casino.models import Role
from seances.models import GamingDay, Roster, RosterChange, Seance
from seances.services import change_seance_state, gaming_day_for
from tests.conftest import PASSWORD, make_employee
from tests.helpers.browser import log_in

try:
    from playwright.sync_api import expect
except ImportError:  # pragma: no cover - the browser fixture skips first
    expect = None

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_r4_director_publishes_the_roster_and_the_chef_records_an_absence(
    page,  # noqa: F811
    director,
    chef,
    croupier,
    croupier2,
    casino,
    boule_table,
):
    make_employee("croupier3", Role.CROUPIER, casino)
    # A séance planned around now, whatever the hour the test runs at (the default hours leave gaps).
    now = timezone.now()
    day = gaming_day_for(casino, GamingDay.date_at(casino))
    seance = Seance.objects.create(
        gaming_day=day,
        kind=Seance.Kind.AFTERNOON,
        # Within its gaming day, even in the day's first hour (a séance starts during its day).
        planned_start=max(now - datetime.timedelta(hours=1), day.starts_at),
        planned_end=now + datetime.timedelta(hours=5),
    )

    log_in(page, director)
    page.locator(".topbar summary", has_text="Plus").click()
    page.get_by_role("link", name="Roulement", exact=True).click()
    page.select_option("#id_seance", value=str(seance.pk))
    page.get_by_role("button", name="Proposer l'ordre de roulement").click()
    expect(page).to_have_url(re.compile(r"/roulement/\d+/$"))
    order = page.locator("#roster-order li")
    expect(order).to_have_count(3)
    expect(order.nth(2)).to_contain_text("Croupier3")

    page.get_by_role("button", name="Monter Croupier3").click()
    expect(order.nth(1)).to_contain_text("Croupier3")
    expect(order.nth(2)).to_contain_text("Croupier2")

    page.fill("#id_password", PASSWORD)
    page.get_by_role("button", name="Publier l'ordre de roulement").click()
    expect(page.locator("#roster-state")).to_have_text("Publié")
    roster = Roster.objects.get()
    assert [m.user.username for m in roster.members.order_by("position")] == ["croupier1", "croupier3", "croupier2"]

    # The séance has been playing for 30 minutes: the second of the order launches (20 to 40 minutes).
    # Opened through the service 30 minutes ago: the database lets a séance's start be written once only (R23).
    with time_machine.travel(timezone.now() - datetime.timedelta(minutes=30)):
        change_seance_state(director, seance, Seance.State.OPEN)

    page.get_by_role("button", name="Se déconnecter").click()
    log_in(page, chef)
    page.goto(f"/roulement/{roster.pk}/")
    expect(page.locator("#launcher-now")).to_have_text("Croupier3")
    expect(page.locator("#launcher-next")).to_have_text("Croupier2")

    form = page.locator("#roster-change")
    form.locator("#id_kind").select_option("absence")
    form.locator("#id_member").select_option("croupier3")
    form.locator("#id_reason").fill("Malaise")
    form.get_by_role("button", name="Enregistrer le changement").click()

    expect(page.locator(".messages")).to_contain_text("Changement enregistré (absence)")
    expect(page.locator("#launcher-now")).to_have_text("Croupier2")
    expect(page.locator("#launcher-next")).to_have_text("Croupier1")
    expect(page.locator("#order-in-force")).to_have_text("Croupier1 → Croupier2")
    expect(page.locator("#roster-changes")).to_contain_text("Malaise")
    # The published order itself is untouched; the change is a new record.
    expect(page.locator("#roster-order li").nth(1)).to_contain_text("Croupier3")
    assert RosterChange.objects.get().recorded_by == chef
