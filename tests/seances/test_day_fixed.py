"""Day-fixed values: the advance of each game, the day's hours, minimums and colours are stored with the day; a
change of the casino's settings applies from the next gaming day only (R7, R10, R11, R15, « Day-fixed values »)."""

import datetime
import html
import json
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from cashbox.models import Advance, Correction
from casino.models import (
    Casino,
    DaySettings,
)
from casino.rules import ARTICLES, DomainError
from seances.models import GamingDay, Opening
from seances.services import open_tableau, plan_seances
from tables.games.rules import Colour
from tables.models import Tableau
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import chips_for, open_seance, post_advance
from tests.helpers.days import (
    CORRECTED,
    NOW,
    PARIS,
    TODAY,
    TOMORROW,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def day_open(clock, director, codir, chef, croupier, croupier2, caissier, casino, boule_tableau, vingt_trois_tableau):
    """The afternoon séance of the 30th open, both tableaux opened: the day's advances are fixed."""
    from tables.services import register_tableau

    afternoon, _ = plan_seances(director, casino, TODAY)
    # A third tableau, served by the order (R31) and opened later in the day by a test.
    register_tableau(boule_tableau.table, 3)
    open_seance(director, afternoon)
    open_tableau(director, boule_tableau, TODAY, "2.00", "200.00", "1000.00")
    open_tableau(director, vingt_trois_tableau, TODAY, "1.00", "50.00", "250.00")
    afternoon.refresh_from_db()
    return afternoon


def change_settings(casino, **values):
    """Change the settings the way every entry point does: through Casino.save()."""
    casino = Casino.objects.get(pk=casino.pk)
    for name, value in values.items():
        setattr(casino, name, value)
    casino.full_clean()
    casino.save()
    return casino


NEW_SETTINGS = {
    "min_stake_boule": Decimal("2.50"),
    "advance_multiple_boule": 4000,
    "gaming_day_start": datetime.time(16, 0),
    "vingt_trois_colours": {"12": ["noir", "noir", "rouge"], "14": ["rouge", "rouge", "noir"]},
}


def test_r15_the_days_advance_is_stored_at_the_games_first_opening(day_open, casino):
    day = GamingDay.objects.get(casino=casino, date=TODAY)
    assert day.advance_boule == Decimal("8000.00")
    assert day.advance_vingt_trois == Decimal("10000.00")
    assert day.start == datetime.datetime(2026, 11, 30, 10, 0, tzinfo=PARIS)
    assert day.end == datetime.datetime(2026, 12, 1, 10, 0, tzinfo=PARIS)


def test_r15_a_settings_change_mid_day_leaves_the_days_advance_limits_hours_and_layout(
    day_open, api, director, casino, boule_tableau, vingt_trois_tableau
):
    assert post_advance(api, director, boule_tableau, day_open, chips=chips_for("8000")).status_code == 201
    day_before = GamingDay.objects.values().get(casino=casino, date=TODAY)

    change_settings(casino, **NEW_SETTINGS)

    # The day as stored has not moved: advance, minimums, hours, colours.
    assert GamingDay.objects.values().get(casino=casino, date=TODAY) == day_before
    assert GamingDay.date_at(casino) == TODAY
    assert casino.layout("vingt_trois").pockets_of(12)[0].colour == "rouge"
    # The opening announces the day's advance, not the new setting (API and page).
    opening = Opening.objects.get(tableau=boule_tableau, gaming_day__date=TODAY)
    api.force_authenticate(director)
    assert api.get(f"/api/v1/openings/{opening.pk}/").json()["advance"] == "8000.00"
    # An equal top-up is accepted, a top-up of the new amount refused (R15).
    refused = post_advance(api, director, boule_tableau, day_open, kind="top_up", chips=chips_for("10000"))
    assert refused.status_code == 400 and refused.json()["code"] == "R15"
    accepted = post_advance(api, director, boule_tableau, day_open, kind="top_up", chips=chips_for("8000"))
    assert accepted.status_code == 201, accepted.json()
    assert [a.amount for a in Advance.objects.order_by("pk")] == [Decimal("8000.00"), Decimal("8000.00")]
    # A tableau opened later that day keeps the day's authorised minimum (R10): 2,00 € is still allowed.
    third = Tableau.objects.get(table=boule_tableau.table, number=3)
    opening, created = open_tableau(director, third, TODAY, "2.00", "200.00", "1000.00")
    assert created and opening.minimum == Decimal("2.00")


def test_r15_the_next_gaming_day_uses_the_new_settings(day_open, clock, director, casino, boule_tableau):
    change_settings(casino, **NEW_SETTINGS)
    # The day of the 30th is closed; on the 1st at 17:00 (after the new start hour) the next day is in play.
    clock.move_to(datetime.datetime(2026, 12, 1, 17, 0, tzinfo=PARIS))
    assert GamingDay.date_at(casino) == TOMORROW
    open_seance(director, plan_seances(director, casino, TOMORROW)[0])  # limits once a séance is open (R30)
    with pytest.raises(ValidationError) as refused:
        open_tableau(director, boule_tableau, TOMORROW, "2.00", "200.00", "1000.00")
    assert refused.value.error_dict["minimum"][0].code == "R10"
    open_tableau(director, boule_tableau, TOMORROW, "2.50", "250.00", "1250.00")
    tomorrow = GamingDay.objects.get(casino=casino, date=TOMORROW)
    assert tomorrow.advance_boule == Decimal("10000.00")
    assert tomorrow.vingt_trois_colours == NEW_SETTINGS["vingt_trois_colours"]
    # The new day starts where the previous one ended, and ends at the new start hour: no gap, no overlap.
    today = GamingDay.objects.get(casino=casino, date=TODAY)
    assert tomorrow.start == today.end
    assert tomorrow.end == datetime.datetime(2026, 12, 2, 16, 0, tzinfo=PARIS)
    # The past did not move.
    assert today.advance_boule == Decimal("8000.00") and today.vingt_trois_colours is None


def test_r15_the_openings_of_a_past_day_announce_that_day_s_advance_after_a_settings_change(
    day_open, clock, api, director, casino, boule_tableau
):
    change_settings(casino, advance_multiple_boule=5000)
    # The next day, the new multiple is in force (5 000 × 2,00 € = 10 000 €); the 30th's opening keeps its 8 000 €.
    clock.move_to(datetime.datetime(2026, 12, 1, 17, 0, tzinfo=PARIS))
    assert casino.advance_amount("boule") == Decimal("10000.00")
    opening = Opening.objects.get(tableau=boule_tableau, gaming_day__date=TODAY)
    api.force_authenticate(director)
    assert api.get(f"/api/v1/openings/{opening.pk}/").json()["advance"] == "8000.00"
    listed = api.get("/api/v1/openings/", {"gaming_day": TODAY.isoformat()}).json()["results"]
    assert {item["tableau"]: item["advance"] for item in listed}[boule_tableau.pk] == "8000.00"


def test_r10_r11_a_new_start_hour_mid_day_does_not_reslice_the_day(day_open, director, casino, boule_tableau):
    # 15:00: with a start hour of 16:00 applied at once, 15:00 would belong to the 29th and a second opening of
    # the same tableau with other limits could be fixed (R10, R11).
    change_settings(casino, gaming_day_start=datetime.time(16, 0))
    assert GamingDay.date_at(casino) == TODAY
    assert GamingDay.date_at(casino, NOW - datetime.timedelta(hours=4)) == TODAY
    with pytest.raises(DomainError) as refused:
        open_tableau(director, boule_tableau, GamingDay.date_at(casino), "5.00", "500.00", "2500.00")
    assert refused.value.rule == "R10"
    assert Opening.objects.filter(tableau=boule_tableau).count() == 1
    assert GamingDay.objects.filter(casino=casino).count() == 1


def test_r10_r11_check_stakes_applies_the_days_limits_after_a_start_hour_change(
    day_open, api, croupier, casino, boule_tableau
):
    change_settings(casino, gaming_day_start=datetime.time(16, 0))
    api.force_authenticate(croupier)
    apparatus = boule_tableau.table.apparatus
    body = {"stakes": [{"tableau": boule_tableau.pk, "bet": "plein", "number": 3, "stake": "1.00"}]}
    response = api.post(f"/api/v1/apparatus/{apparatus.pk}/check-stakes/", body, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["gaming_day"] == TODAY.isoformat()


def test_r15_settings_page_api_and_admin_say_from_which_day_a_change_applies(
    day_open, client, api, director, casino, django_user_model
):
    client.force_login(director)
    form = client.get(f"/etablissements/{casino.pk}/modifier/").content.decode()
    assert "s'applique à partir de la journée du 01/12/2026" in html.unescape(form)
    api.force_authenticate(director)
    signed = {"password": PASSWORD, "reason": "avance relevée"}  # the director's signed act (R29)
    response = api.patch(f"/api/v1/casinos/{casino.pk}/", {"advance_multiple_boule": 5000} | signed, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["settings_in_force"]["advance_multiple_boule"] == 4000
    assert body["pending_settings"][0]["effective_from"] == "2026-12-01"
    assert body["pending_settings"][0]["advance_multiple_boule"] == 5000
    page = html.unescape(client.get(f"/etablissements/{casino.pk}/").content.decode())
    assert "Réglages applicables à partir de la journée du 01/12/2026" in page
    admin = django_user_model.objects.create_superuser("root", password=PASSWORD)
    client.force_login(admin)
    admin_page = html.unescape(client.get(f"/admin/casino/casino/{casino.pk}/change/").content.decode())
    assert "la journée du 01/12/2026" in admin_page


def test_r15_the_admin_cannot_change_the_casino_settings_behind_the_dated_versions(
    day_open, client, django_user_model, casino
):
    """/admin/ shows a casino read-only (R29): its settings change through the settings page, dated (R15)."""
    from tests.registry.test_casino_settings import settings_form

    admin = django_user_model.objects.create_superuser("root", password=PASSWORD)
    client.force_login(admin)
    data = settings_form(casino, advance_multiple_boule="6000")
    response = client.post(f"/admin/casino/casino/{casino.pk}/change/", data)
    assert response.status_code == 403
    assert Casino.objects.get(pk=casino.pk).advance_multiple_boule != 6000
    assert casino.settings_on(TOMORROW).advance_amount("boule") == Decimal("8000.00")


# Corrections (R15, R23) ----------------------------------------------------------------------------------------


def correction(api, user, advance, amount, words, chips=None):
    api.force_authenticate(user)
    body = {
        "advance": advance.pk,
        "chips": chips or chips_for(amount),
        "reason": "Erreur de lecture d'une colonne de jetons",
        "approval_words": words,
        "signer": "directeur",
        "password": PASSWORD,
    }
    return api.post("/api/v1/corrections/", body, format="json")


def test_r15_a_correction_cannot_make_a_vingt_trois_advance_differ_from_the_days_amount(
    day_open, api, director, chef, vingt_trois_tableau
):
    assert post_advance(api, director, vingt_trois_tableau, day_open, chips=chips_for("10000")).status_code == 201
    advance = Advance.objects.get()
    refused = correction(api, chef, advance, "9000", "neuf mille euros")
    assert refused.status_code == 400 and refused.json()["code"] == "R15"
    assert Correction.objects.count() == 0
    # Correcting how the same amount was counted is still possible.
    accepted = correction(api, chef, advance, "10000", "dix mille euros", chips={"500.00": 20})
    assert accepted.status_code == 201, accepted.json()


def test_r15_a_correction_keeps_the_day_amount_after_a_settings_change(
    day_open, api, director, chef, casino, vingt_trois_tableau
):
    assert post_advance(api, director, vingt_trois_tableau, day_open, chips=chips_for("10000")).status_code == 201
    change_settings(casino, advance_multiple_vingt_trois=9000)
    refused = correction(api, chef, Advance.objects.get(), "9000", "neuf mille euros")
    assert refused.status_code == 400 and refused.json()["code"] == "R15"


# Colours (R7) --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "colours",
    [{"5": ["noir", "noir"]}, {"1": ["noir"]}, {"12": ["rouge", "rouge", "rouge"]}, {"9": ["blanc", "noir"]}],
)
def test_r7_a_layout_that_breaks_the_one_ninth_edge_is_refused_by_page_and_api(
    clock, as_user, api, director, casino, colours
):
    from tests.registry.test_casino_settings import settings_form

    response = as_user(director).post(
        f"/etablissements/{casino.pk}/modifier/", settings_form(casino, vingt_trois_colours=json.dumps(colours))
    )
    assert response.status_code == 400
    assert ARTICLES["R7"] in html.unescape(response.content.decode())
    assert "au lieu de 1/9" in html.unescape(response.content.decode())
    api.force_authenticate(director)
    signed = {"password": PASSWORD, "reason": "plateau"}
    response = api.patch(f"/api/v1/casinos/{casino.pk}/", {"vingt_trois_colours": colours} | signed, format="json")
    assert response.status_code == 400 and response.json()["code"] == "R7"
    assert Casino.objects.get(pk=casino.pk).vingt_trois_colours is None
    assert casino.day_settings.count() == 1


def test_r7_a_colour_correction_applies_from_the_next_gaming_day(day_open, clock, api, croupier, casino):
    change_settings(casino, vingt_trois_colours=NEW_SETTINGS["vingt_trois_colours"])
    api.force_authenticate(croupier)
    body = {"outcome": 12, "pocket": 0, "bets": [{"bet": "noir", "stake": "10.00"}]}
    today = api.post("/api/v1/games/vingt_trois/settle/", body, format="json").json()
    assert today["bets"][0]["won"] is False  # pocket 0 of the 12 is still red today
    clock.move_to(datetime.datetime(2026, 12, 1, 12, 0, tzinfo=PARIS))
    tomorrow = api.post("/api/v1/games/vingt_trois/settle/", body, format="json").json()
    assert tomorrow["bets"][0]["won"] is True


# Day-fixed settings: versions (R7, R10, R15, « Day-fixed values ») -------------------------------------------


def test_r15_a_new_casino_records_its_first_settings_from_the_origin(casino):
    (version,) = casino.day_settings.all()
    assert version.effective_from == datetime.date.min
    assert (version.min_stake_boule, version.min_stake_vingt_trois) == (Decimal("2.00"), Decimal("1.00"))
    assert (version.advance_multiple_boule, version.advance_multiple_vingt_trois) == (4000, 10000)
    assert version.gaming_day_start == datetime.time(10, 0)
    assert version.vingt_trois_colours is None
    assert str(version) == "Réglages de Casino Test depuis l'origine"


def test_r15_a_change_of_a_day_fixed_setting_applies_from_the_next_gaming_day(clock, casino):
    change_settings(casino, advance_multiple_boule=5000)
    latest = casino.day_settings.latest("pk")
    assert latest.effective_from == TOMORROW
    assert latest.casino == casino
    assert latest.advance_multiple_boule == 5000
    # Every value of the version is the casino's, not only the one changed.
    assert (latest.min_stake_boule, latest.min_stake_vingt_trois) == (Decimal("2.00"), Decimal("1.00"))
    assert latest.advance_multiple_vingt_trois == 10000
    assert str(latest) == "Réglages de Casino Test à partir de la journée du 01/12/2026"


def test_r15_saving_the_casino_without_changing_a_day_fixed_setting_records_no_version(clock, casino):
    change_settings(casino, short_interruption_minutes=20, name="Casino Renommé")
    change_settings(casino, min_stake_boule="2.0", gaming_day_start="10:00", advance_multiple_boule=4000)
    # Values set as text, unvalidated, are compared once the database has read them back as it stores them.
    casino = Casino.objects.get(pk=casino.pk)
    casino.min_stake_boule, casino.gaming_day_start, casino.vingt_trois_colours = "2", "10:00:00", None
    casino.save()
    assert casino.day_settings.count() == 1


def test_r15_a_change_compares_with_the_latest_version_not_the_first(clock, casino):
    change_settings(casino, advance_multiple_boule=5000)
    change_settings(casino, advance_multiple_boule=5000, short_interruption_minutes=15)
    assert casino.day_settings.count() == 2
    change_settings(casino, advance_multiple_boule=4000)
    assert [v.advance_multiple_boule for v in casino.day_settings.order_by("pk")] == [4000, 5000, 4000]


def test_r15_a_save_of_some_fields_only_writes_those_fields(clock, casino):
    casino.name = "Casino Renommé"
    casino.advance_multiple_boule = 9000
    casino.save(update_fields=["name"])
    stored = Casino.objects.get(pk=casino.pk)
    assert (stored.name, stored.advance_multiple_boule) == ("Casino Renommé", 4000)
    assert casino.day_settings.count() == 1


def test_r10_r15_the_settings_in_force_on_a_day_are_those_of_the_latest_version_not_after_it(clock, casino):
    change_settings(casino, min_stake_boule=Decimal("3.00"), advance_multiple_boule=5000)
    today = casino.settings_on(TODAY)
    assert (today.effective_from, today.min_stake_boule, today.advance_multiple_boule) == (
        datetime.date.min,
        Decimal("2.00"),
        4000,
    )
    # From the day it applies: on the day itself (not only after it).
    tomorrow = casino.settings_on(TOMORROW)
    assert (tomorrow.effective_from, tomorrow.min_stake_boule, tomorrow.advance_multiple_boule) == (
        TOMORROW,
        Decimal("3.00"),
        5000,
    )


def test_r10_r15_of_two_changes_made_the_same_day_the_second_applies_next_day(clock, casino):
    change_settings(casino, min_stake_boule=Decimal("3.00"))
    change_settings(casino, min_stake_boule=Decimal("4.00"))
    assert casino.settings_on(TOMORROW).min_stake_boule == Decimal("4.00")
    assert [v.min_stake_boule for v in casino.pending_settings()] == [Decimal("3.00"), Decimal("4.00")]
    # And the latest of the two is what a third save compares with.
    change_settings(casino, min_stake_boule=Decimal("4.00"), short_interruption_minutes=10)
    assert casino.day_settings.count() == 3


def test_r10_r15_a_casino_not_yet_saved_is_in_force_with_its_own_values_from_the_origin():
    casino = Casino(name="Nouveau", min_stake_boule=Decimal("5.00"), min_stake_vingt_trois=Decimal("3.00"))
    version = casino.settings_on(TODAY)
    assert version.effective_from == datetime.date.min
    assert version.casino is casino
    assert (version.min_stake_boule, version.min_stake_vingt_trois) == (Decimal("5.00"), Decimal("3.00"))
    assert version.advance_amount("boule") == Decimal("20000.00")


def test_r10_r15_a_version_of_the_settings_copies_every_day_fixed_value(casino):
    casino.min_stake_boule = Decimal("5.00")
    casino.min_stake_vingt_trois = Decimal("3.00")
    casino.advance_multiple_boule = 100
    casino.advance_multiple_vingt_trois = 200
    casino.gaming_day_start = datetime.time(14, 0)
    casino.vingt_trois_colours = CORRECTED
    version = DaySettings.of(casino, TOMORROW)
    assert version.casino is casino and version.effective_from == TOMORROW
    assert (
        version.min_stake_boule,
        version.min_stake_vingt_trois,
        version.advance_multiple_boule,
        version.advance_multiple_vingt_trois,
        version.gaming_day_start,
        version.vingt_trois_colours,
    ) == (Decimal("5.00"), Decimal("3.00"), 100, 200, datetime.time(14, 0), CORRECTED)


def test_r15_a_version_in_force_from_today_is_no_longer_pending(clock, casino):
    assert casino.pending_settings() == []
    change_settings(casino, advance_multiple_boule=5000)
    (pending,) = casino.pending_settings()
    assert (pending.effective_from, pending.advance_multiple_boule) == (TOMORROW, 5000)
    clock.move_to(datetime.datetime(2026, 12, 1, 15, 0, tzinfo=PARIS))
    assert casino.pending_settings() == []


def test_r15_a_change_applies_after_the_current_day_and_after_every_day_already_stored(clock, casino):
    assert casino.next_settings_day() == TOMORROW
    GamingDay.objects.create(casino=casino, date=TODAY - datetime.timedelta(days=3))
    assert casino.next_settings_day() == TOMORROW
    GamingDay.objects.create(casino=casino, date=TODAY)
    assert casino.next_settings_day() == TOMORROW
    # Days planned in advance never move: a change applies after the last of them.
    GamingDay.objects.create(casino=casino, date=TODAY + datetime.timedelta(days=2))
    GamingDay.objects.create(casino=casino, date=TODAY + datetime.timedelta(days=5))
    assert casino.next_settings_day() == TODAY + datetime.timedelta(days=6)
    change_settings(casino, advance_multiple_boule=5000)
    assert casino.day_settings.latest("pk").effective_from == TODAY + datetime.timedelta(days=6)


def test_r15_the_stored_gaming_day_of_a_date_defaults_to_the_current_one(clock, casino):
    assert casino.gaming_day() is None
    today = GamingDay.objects.create(casino=casino, date=TODAY)
    tomorrow = GamingDay.objects.create(casino=casino, date=TOMORROW)
    assert casino.gaming_day() == today
    assert casino.gaming_day(TOMORROW) == tomorrow
    assert casino.gaming_day(TODAY + datetime.timedelta(days=2)) is None


def test_r10_r15_a_day_not_stored_yet_takes_the_settings_in_force_for_its_date(clock, casino):
    GamingDay.objects.create(casino=casino, date=TODAY)
    change_settings(casino, min_stake_boule=Decimal("3.00"), advance_multiple_vingt_trois=9000)
    # Today is stored: its values; tomorrow is not: the version in force for it.
    assert casino.authorised_minimum("boule") == Decimal("2.00")
    assert casino.authorised_minimum("boule", TOMORROW) == Decimal("3.00")
    assert casino.authorised_minimum("vingt_trois", TOMORROW) == Decimal("1.00")
    assert casino.advance_amount("boule") == Decimal("8000.00")
    assert casino.advance_amount("boule", TOMORROW) == Decimal("12000.00")
    assert casino.advance_amount("vingt_trois") == Decimal("10000.00")
    assert casino.advance_amount("vingt_trois", TOMORROW) == Decimal("9000.00")


def test_r10_r15_without_any_stored_day_the_current_days_values_come_from_the_settings(clock, casino):
    change_settings(casino, min_stake_boule=Decimal("3.00"))
    assert casino.authorised_minimum("boule") == Decimal("2.00")
    assert casino.advance_amount("boule") == Decimal("8000.00")
    assert casino.layout("vingt_trois").pockets_of(12)[0].colour == Colour.ROUGE
    assert casino.gaming_day() is None


def test_r7_a_colour_correction_changes_the_layout_from_the_next_gaming_day_only(clock, casino):
    GamingDay.objects.create(casino=casino, date=TODAY)
    change_settings(casino, vingt_trois_colours=CORRECTED)
    assert [p.colour for p in casino.layout("vingt_trois").pockets_of(12)] == ["rouge", "rouge", "noir"]
    assert [p.colour for p in casino.layout("vingt_trois", TOMORROW).pockets_of(12)] == ["noir", "noir", "rouge"]
    # The boule keeps its colours whatever the vingt-trois correction (R6).
    assert casino.layout("boule", TOMORROW).game == "boule"
    assert [p.colour for p in casino.layout("boule", TOMORROW).pockets_of(1)] == ["noir"]


def test_r10_r15_a_versions_minimum_and_advance_are_those_of_the_game_asked():
    version = DaySettings(
        min_stake_boule=Decimal("2.00"),
        min_stake_vingt_trois=Decimal("5.00"),
        advance_multiple_boule=3,
        advance_multiple_vingt_trois=7,
    )
    assert version.authorised_minimum("boule") == Decimal("2.00")
    assert version.authorised_minimum("vingt_trois") == Decimal("5.00")
    assert version.advance_amount("boule") == Decimal("6.00")
    assert version.advance_amount("vingt_trois") == Decimal("35.00")


def test_r7_a_versions_layout_applies_its_colours_to_the_vingt_trois_only():
    version = DaySettings(vingt_trois_colours=CORRECTED)
    assert [p.colour for p in version.layout("vingt_trois").pockets_of(14)] == ["rouge", "rouge", "noir"]
    assert [p.colour for p in version.layout("boule").pockets_of(2)] == ["rouge"]
    assert version.layout("boule").game == "boule"
