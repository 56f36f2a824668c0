"""Every change is recorded with who, when, before and after, and shown to the regulator; alerts record who
acknowledged them and when."""

import datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from casino.models import Alert, Membership, Role
from casino.tasks import check_approvals
from tests.conftest import make_employee
from tests.helpers.personas import end_memberships

pytestmark = pytest.mark.django_db


# History of the registry.


def edit_apparatus(client, apparatus, **changes):
    data = {"name": apparatus.name, "numbers": apparatus.numbers, "cases": apparatus.cases, "in_service": "on"}
    data.update(changes)
    return client.post(reverse("apparatus-update", args=[apparatus.pk]), data)


def test_editing_an_apparatus_through_the_web_form_records_who_and_the_before_and_after_values(
    as_user, director, boule
):
    response = edit_apparatus(as_user(director), boule, name="Boule principale")

    assert response.status_code == 302
    latest = boule.history.latest()
    assert latest.history_type == "~"
    assert latest.history_user == director
    assert latest.name == "Boule principale"
    assert latest.prev_record.name == "Boule"


def test_the_apparatus_page_shows_the_change_with_its_author_and_values(as_user, director, regulator, boule):
    edit_apparatus(as_user(director), boule, name="Boule principale")

    response = as_user(regulator).get(boule.get_absolute_url())

    page = response.content.decode()
    assert response.status_code == 200
    row = response.context["history"][0]
    assert row["type"] == "Modification"
    assert row["user"] == "directeur"
    assert row["changes"] == [{"field": "nom", "old": "Boule", "new": "Boule principale"}]
    assert "directeur" in page
    assert "Boule → Boule principale" in page


def test_the_history_endpoint_gives_the_regulator_who_when_before_and_after(api, as_user, director, regulator, boule):
    edit_apparatus(as_user(director), boule, in_service="")
    api.force_authenticate(regulator)

    rows = api.get(f"/api/v1/apparatus/{boule.pk}/history/").json()

    assert [row["type"] for row in rows] == ["Modification", "Création"]
    assert rows[0]["user"] == "directeur"
    assert rows[0]["date"]
    assert rows[0]["changes"] == [{"field": "en service", "old": True, "new": False}]


def test_a_refused_edit_records_no_history(as_user, director, boule):
    before = boule.history.count()

    response = edit_apparatus(as_user(director), boule, numbers="12")

    assert response.status_code == 400
    assert boule.history.count() == before


def test_a_change_through_the_api_records_its_author(api, administrator, boule):
    api.force_authenticate(administrator)

    response = api.patch(f"/api/v1/apparatus/{boule.pk}/", {"name": "Boule 1"}, format="json")

    assert response.status_code == 200
    assert boule.history.latest().history_user == administrator


# The approvals check (Celery task, eager in tests) and the acknowledgement of its alerts.


@pytest.fixture
def expired(casino):
    employee = make_employee("ancien", Role.CROUPIER, casino)
    employee.approval_end = datetime.date(2021, 1, 1)
    employee.save()
    return employee


def test_the_approvals_check_raises_an_alert_for_an_employee_whose_approval_expired(casino, director, expired):
    raised = check_approvals.delay().get()

    assert raised == 1
    alert = Alert.objects.get()
    assert alert.casino == casino
    assert alert.kind == "approval"
    assert str(expired) in alert.message
    assert alert.acknowledged_at is None


def test_the_approvals_check_does_not_raise_the_same_alert_twice(casino, expired):
    check_approvals.delay()
    raised_again = check_approvals.delay().get()

    assert raised_again == 0
    assert Alert.objects.count() == 1


def test_the_approvals_check_warns_before_an_approval_ends(casino):
    soon = timezone.localdate() + datetime.timedelta(days=10)
    employee = make_employee("bientot", Role.CAISSIER, casino)
    employee.approval_end = soon
    employee.save()

    check_approvals.delay()

    assert soon.strftime("%d/%m/%Y") in Alert.objects.get().message


def test_the_approvals_check_leaves_out_a_former_member_and_a_deactivated_account(casino):
    """Only the casino's staff are checked: someone whose membership ended, or whose account was deactivated, is no
    longer one of them, whatever their approval says."""
    former = make_employee("parti", Role.CROUPIER, casino)
    deactivated = make_employee("desactive", Role.CROUPIER, casino)
    for employee in (former, deactivated):
        employee.approval_end = datetime.date(2021, 1, 1)
        employee.save()
    end_memberships(Membership.objects.filter(employee=former, casino=casino))
    type(deactivated.user).objects.filter(pk=deactivated.user.pk).update(is_active=False)
    assert check_approvals.delay().get() == 0
    assert not Alert.objects.exists()


def test_the_approvals_check_leaves_valid_approvals_alone(director, chef, croupier, regulator, administrator):
    assert check_approvals.delay().get() == 0
    assert not Alert.objects.exists()


def test_a_chef_acknowledges_an_alert_and_who_and_when_are_recorded(as_user, chef, expired):
    check_approvals.delay()
    alert = Alert.objects.get()

    response = as_user(chef).post(reverse("alert-acknowledge", args=[alert.pk]))

    assert response.status_code == 302
    alert.refresh_from_db()
    assert alert.acknowledged_by == chef
    assert timezone.now() - alert.acknowledged_at < datetime.timedelta(minutes=1)
    assert alert.history.latest().history_user == chef


@pytest.mark.parametrize(
    ("target", "landing"),
    [("/journal/", "/journal/"), ("accueil", "/"), ("https://ailleurs.example/", "/"), ("//ailleurs.example/", "/")],
)
def test_an_acknowledgement_returns_to_a_page_of_this_site_only(as_user, chef, expired, target, landing):
    """`next` is followed when it is a path here; anything else (a bare word, which redirect() would look up as a URL
    name and fail on, another site) lands on the home page."""
    check_approvals.delay()
    response = as_user(chef).post(reverse("alert-acknowledge", args=[Alert.objects.get().pk]), {"next": target})
    assert response.status_code == 302 and response["Location"] == landing
    assert Alert.objects.get().acknowledged_by == chef


def test_an_acknowledged_alert_is_raised_again_when_the_approval_is_still_expired(as_user, chef, expired):
    check_approvals.delay()
    as_user(chef).post(reverse("alert-acknowledge", args=[Alert.objects.get().pk]))

    assert check_approvals.delay().get() == 1
    assert Alert.objects.open().count() == 1


def test_a_croupier_cannot_acknowledge_an_alert(as_user, croupier, expired):
    check_approvals.delay()
    alert = Alert.objects.get()

    response = as_user(croupier).post(reverse("alert-acknowledge", args=[alert.pk]))

    assert response.status_code == 403
    alert.refresh_from_db()
    assert alert.acknowledged_at is None
    assert alert.acknowledged_by is None


def test_the_director_of_another_casino_cannot_acknowledge_its_alerts(as_user, outsider, expired):
    check_approvals.delay()
    alert = Alert.objects.get()

    response = as_user(outsider).post(reverse("alert-acknowledge", args=[alert.pk]))

    assert response.status_code == 404
    alert.refresh_from_db()
    assert alert.acknowledged_at is None


def test_the_home_page_lists_open_alerts_for_the_chef(as_user, chef, expired):
    check_approvals.delay()

    # The chef's home is the floor, which lists the open alerts.
    page = as_user(chef).get(reverse("home"), follow=True).content.decode()

    assert "Alertes ouvertes" in page
    assert f"{expired} n&#x27;a pas d&#x27;agrément valide" in page
    assert reverse("alert-acknowledge", args=[Alert.objects.get().pk]) in page


# Histories read as French, not as stored values (issue 14).


def test_a_seance_history_shows_state_labels_and_the_person_not_raw_values(as_user, director, regulator, open_day):
    response = as_user(regulator).get(open_day.get_absolute_url())

    page = response.content.decode()
    assert response.status_code == 200
    assert "Prévue → Ouverte" in page and "planned" not in page
    assert "— → Directeur<" in page and f"— → {director.pk}<" not in page


def test_the_api_history_keeps_the_stored_values_for_machines(api, regulator, open_day):
    api.force_authenticate(regulator)

    rows = api.get(f"/api/v1/seances/{open_day.pk}/history/").json()

    changes = {change["field"]: change for row in rows for change in row["changes"]}
    assert changes["état"]["new"] == "open"


def test_a_history_shows_a_changed_time_in_paris_time(as_user, regulator, open_day):
    """A time is stored in UTC; the regulator reads it as the casino's clock showed it (a late-evening act in UTC is
    already the next day in Paris)."""
    from casino.audit.history import display_value

    late = datetime.datetime(2026, 12, 7, 23, 30, tzinfo=datetime.UTC)
    assert display_value(open_day, "actual_start", late) == "08/12/2026 00:30:00"
    open_day.refresh_from_db()
    page = as_user(regulator).get(open_day.get_absolute_url()).content.decode()
    assert f"— → {timezone.localtime(open_day.actual_start):%d/%m/%Y %H:%M:%S}" in page
