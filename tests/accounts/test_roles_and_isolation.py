"""Roles checked on the server for every request, R23 (nothing is deleted), and the isolation of casinos: whose
records a user sees (CasinoQuerySet, ScopedQuerySet, EmployeeQuerySet) and whose approval is valid on a day."""

import datetime

import pytest
from django.contrib.auth.models import AnonymousUser
from django.urls import reverse

from casino.models import Casino, Employee, Membership, Role
from tables.games.rules import Game
from tables.models import Apparatus, Cashbox, Table, Tableau
from tests.conftest import make_employee
from tests.helpers.personas import end_memberships

pytestmark = pytest.mark.django_db

PERSONAS = ["director", "codir", "chef", "croupier", "caissier", "regulator", "administrator"]
CREATORS = {"director", "administrator"}

API_LISTS = ["/api/v1/apparatus/", "/api/v1/tables/", "/api/v1/tableaux/", "/api/v1/cashboxes/"]
PAGE_LISTS = ["apparatus-list", "table-list", "tableau-list", "cashbox-list"]


@pytest.fixture
def registry(boule_tableau, vingt_trois_tableau):
    """One of each record of the registry of the first casino."""
    return {
        "apparatus": boule_tableau.table.apparatus,
        "table": boule_tableau.table,
        "tableau": boule_tableau,
        "cashbox": boule_tableau.cashboxes.first(),
    }


def api_detail_urls(registry):
    return {
        "apparatus": f"/api/v1/apparatus/{registry['apparatus'].pk}/",
        "table": f"/api/v1/tables/{registry['table'].pk}/",
        "tableau": f"/api/v1/tableaux/{registry['tableau'].pk}/",
        "cashbox": f"/api/v1/cashboxes/{registry['cashbox'].pk}/",
    }


def page_detail_urls(registry):
    return {name: obj.get_absolute_url() for name, obj in registry.items()}


def page_form_urls(registry):
    return [
        reverse("apparatus-update", args=[registry["apparatus"].pk]),
        reverse("table-update", args=[registry["table"].pk]),
        reverse("tableau-update", args=[registry["tableau"].pk]),
    ]


# The role matrix.


@pytest.mark.parametrize("persona", PERSONAS)
def test_every_role_reads_the_registry_lists_of_the_api_and_the_pages(request, api, client, persona, registry):
    user = request.getfixturevalue(persona)
    api.force_authenticate(user)
    client.force_login(user)

    for url in API_LISTS:
        response = api.get(url)
        assert response.status_code == 200, url
        assert response.json()["count"] >= 1, url
    for name in PAGE_LISTS:
        assert client.get(reverse(name)).status_code == 200, name


@pytest.mark.parametrize("persona", PERSONAS)
def test_only_the_director_and_the_administrator_register_an_apparatus_through_the_api(request, api, casino, persona):
    api.force_authenticate(request.getfixturevalue(persona))

    response = api.post("/api/v1/apparatus/", {"casino": casino.pk, "game": "boule", "name": "B2"}, format="json")

    if persona in CREATORS:
        assert response.status_code == 201, response.content
        assert Apparatus.objects.filter(name="B2").exists()
    else:
        assert response.status_code == 403
        assert response.json()["code"] == "permission_denied"
        assert "rôle" in response.json()["message"]
        assert not Apparatus.objects.exists()


@pytest.mark.parametrize("persona", PERSONAS)
def test_only_the_director_and_the_administrator_register_an_apparatus_through_the_pages(
    request, client, casino, persona
):
    client.force_login(request.getfixturevalue(persona))
    url = reverse("apparatus-create")
    data = {"casino": casino.pk, "game": "boule", "name": "B2", "in_service": "on"}

    form = client.get(url)
    response = client.post(url, data)

    if persona in CREATORS:
        assert form.status_code == 200
        assert response.status_code == 302
        assert Apparatus.objects.filter(name="B2").exists()
    else:
        assert form.status_code == 403
        assert response.status_code == 403
        assert not Apparatus.objects.exists()


@pytest.mark.parametrize("persona", ["codir", "chef", "croupier", "caissier", "regulator"])
def test_roles_without_registry_rights_cannot_create_tables_tableaux_or_cash_boxes(
    request, api, client, persona, registry
):
    user = request.getfixturevalue(persona)
    api.force_authenticate(user)
    client.force_login(user)
    attempts = [
        ("/api/v1/tables/", "table-create", {"apparatus": registry["apparatus"].pk, "name": "T9"}),
        ("/api/v1/tableaux/", "tableau-create", {"table": registry["table"].pk, "number": 9}),
        ("/api/v1/cashboxes/", "cashbox-create", {"tableau": registry["tableau"].pk, "kind": "mobile_open"}),
    ]
    counts = (Table.objects.count(), Tableau.objects.count(), Cashbox.objects.count())

    for api_url, page, data in attempts:
        assert api.post(api_url, data, format="json").status_code == 403, api_url
        assert client.post(reverse(page), data).status_code == 403, page

    assert (Table.objects.count(), Tableau.objects.count(), Cashbox.objects.count()) == counts


# The regulator reads everything and changes nothing.


def test_the_regulator_reads_every_detail_and_every_history(api, client, regulator, registry):
    api.force_authenticate(regulator)
    client.force_login(regulator)

    for url in api_detail_urls(registry).values():
        assert api.get(url).status_code == 200, url
        history = api.get(f"{url}history/")
        assert history.status_code == 200, url
        assert history.json()[0]["type"] == "Création"
    for url in page_detail_urls(registry).values():
        response = client.get(url)
        assert response.status_code == 200, url
        assert "Historique des modifications" in response.content.decode()
    for url in page_form_urls(registry):
        assert client.get(url).status_code == 403, url


def test_the_regulator_reads_the_staff_and_the_casino_with_their_histories(api, client, regulator, director, casino):
    api.force_authenticate(regulator)
    client.force_login(regulator)
    employee = director.employee

    for url in ["/api/v1/employees/", "/api/v1/casinos/"]:
        assert api.get(url).json()["count"] >= 1, url
    for url in [f"/api/v1/employees/{employee.pk}/history/", f"/api/v1/casinos/{casino.pk}/history/"]:
        assert api.get(url).status_code == 200, url
    for url in [reverse("employee-list"), employee.get_absolute_url(), casino.get_absolute_url()]:
        assert client.get(url).status_code == 200, url


def test_every_write_of_the_regulator_answers_403(api, client, regulator, registry, casino):
    api.force_authenticate(regulator)
    client.force_login(regulator)
    apparatus_url = api_detail_urls(registry)["apparatus"]

    assert api.post("/api/v1/apparatus/", {"casino": casino.pk, "game": "boule", "name": "X"}).status_code == 403
    assert api.put(apparatus_url, {"name": "X", "in_service": False}, format="json").status_code == 403
    assert api.patch(apparatus_url, {"name": "X"}, format="json").status_code == 403
    assert api.patch(f"/api/v1/casinos/{casino.pk}/", {"approval_warning_days": 1}, format="json").status_code == 403
    for url in page_form_urls(registry):
        assert client.post(url, {"name": "X"}).status_code == 403, url

    registry["apparatus"].refresh_from_db()
    assert registry["apparatus"].name == "Boule"
    assert not Apparatus.objects.filter(name="X").exists()


# R23: nothing recorded is ever deleted.


@pytest.mark.parametrize("persona", PERSONAS)
def test_r23_delete_answers_405_for_every_role_and_deletes_nothing(request, api, persona, registry):
    api.force_authenticate(request.getfixturevalue(persona))
    counts = (Apparatus.objects.count(), Table.objects.count(), Tableau.objects.count(), Cashbox.objects.count())

    for url in api_detail_urls(registry).values():
        response = api.delete(url)
        assert response.status_code == 405, (url, response.content)
        assert response.json()["code"] == "method_not_allowed"
        assert "R23" in response.json()["message"]

    assert (
        Apparatus.objects.count(),
        Table.objects.count(),
        Tableau.objects.count(),
        Cashbox.objects.count(),
    ) == counts


def test_r23_a_cash_box_cannot_be_changed_through_the_api(api, director, registry):
    api.force_authenticate(director)
    url = api_detail_urls(registry)["cashbox"]

    assert api.patch(url, {"kind": "built_in"}, format="json").status_code == 405
    assert api.put(url, {"kind": "built_in"}, format="json").status_code == 405


# Unauthenticated requests.


def test_the_api_refuses_an_unauthenticated_request(api, registry):
    for url in [*API_LISTS, *api_detail_urls(registry).values()]:
        response = api.get(url)
        assert response.status_code in (401, 403), url
        assert response.json()["code"] == "not_authenticated"
    assert api.post("/api/v1/apparatus/", {"name": "X"}).status_code in (401, 403)


def test_the_pages_send_an_unauthenticated_visitor_to_the_login_page(client, registry):
    urls = [
        reverse("home"),
        *[reverse(name) for name in PAGE_LISTS],
        reverse("apparatus-create"),
        *page_detail_urls(registry).values(),
        *page_form_urls(registry),
    ]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response.url.startswith("/connexion/"), url


# Isolation: the director of another casino sees nothing of the first.


def test_the_outsider_gets_404_on_every_api_detail_of_the_first_casino(api, outsider, registry):
    api.force_authenticate(outsider)

    for url in api_detail_urls(registry).values():
        assert api.get(url).status_code == 404, url
        assert api.get(f"{url}history/").status_code == 404, url
        assert api.patch(url, {"name": "X"}, format="json").status_code in (404, 405), url


def test_the_outsider_gets_404_on_every_page_of_the_first_casinos_records(client, outsider, registry, casino):
    client.force_login(outsider)

    for url in [*page_detail_urls(registry).values(), *page_form_urls(registry), casino.get_absolute_url()]:
        assert client.get(url).status_code == 404, url
    for url in page_form_urls(registry):
        assert client.post(url, {"name": "X"}).status_code == 404, url


def test_the_outsider_sees_empty_lists(api, client, outsider, registry):
    api.force_authenticate(outsider)
    client.force_login(outsider)

    for url in API_LISTS:
        assert api.get(url).json()["results"] == [], url
    for name in PAGE_LISTS:
        assert list(client.get(reverse(name)).context["object_list"]) == [], name
    assert "Aucun appareil enregistré." in client.get(reverse("apparatus-list")).content.decode()


def test_the_outsider_cannot_reference_the_first_casinos_table_when_creating_a_tableau(api, client, outsider, registry):
    api.force_authenticate(outsider)
    client.force_login(outsider)

    api_response = api.post("/api/v1/tableaux/", {"table": registry["table"].pk, "number": 42}, format="json")
    page_response = client.post(reverse("tableau-create"), {"table": registry["table"].pk, "number": 42})

    assert api_response.status_code == 400
    assert "table" in api_response.json()["errors"]
    assert page_response.status_code == 400
    assert not Tableau.objects.filter(number=42).exists()


def test_the_outsider_cannot_register_an_apparatus_in_the_first_casino(api, outsider, casino):
    api.force_authenticate(outsider)

    response = api.post("/api/v1/apparatus/", {"casino": casino.pk, "game": Game.BOULE, "name": "X"}, format="json")

    assert response.status_code == 400
    assert not Apparatus.objects.exists()


DAY = datetime.date(2026, 6, 15)


def test_a_user_sees_the_casinos_of_their_active_memberships_only(director, casino, other_casino):
    assert list(Casino.objects.for_user(director)) == [casino]
    Membership.objects.create(employee=director.employee, casino=other_casino)
    assert set(Casino.objects.for_user(director)) == {casino, other_casino}
    # Two members of one casino do not make it appear twice.
    assert Casino.objects.for_user(director).count() == 2


def test_an_anonymous_user_sees_no_casino(casino, director):
    assert list(Casino.objects.for_user(AnonymousUser())) == []


def test_a_deactivated_membership_hides_its_casino_and_everything_in_it(director, casino, boule_tableau):
    membership = Membership.objects.get(employee=director.employee, casino=casino)
    membership.active = False
    membership.save()
    assert list(Casino.objects.for_user(director)) == []
    assert list(Apparatus.objects.for_user(director)) == []
    assert list(Tableau.objects.for_user(director)) == []
    assert list(Employee.objects.for_user(director)) == []


def test_each_registry_record_is_scoped_through_its_own_path_to_its_casino(
    director, outsider, boule_tableau, other_casino
):
    table = boule_tableau.table
    for model, records in (
        (Apparatus, {table.apparatus}),
        (Table, {table}),
        (Tableau, {boule_tableau}),
        (Cashbox, set(boule_tableau.cashboxes.all())),
    ):
        assert records and set(model.objects.for_user(director)) == records, model
        assert list(model.objects.for_user(outsider)) == [], model


def test_the_staff_of_a_casino_is_seen_once_by_its_members_only(director, croupier, outsider, casino, other_casino):
    # The croupier also works at the other casino: still listed once to the first casino's director.
    Membership.objects.create(employee=croupier.employee, casino=other_casino)
    staff = list(Employee.objects.for_user(director))
    assert sorted(e.user.username for e in staff) == ["croupier1", "directeur"]
    assert sorted(e.user.username for e in Employee.objects.for_user(outsider)) == ["croupier1", "directeur2"]


def test_a_staff_member_whose_membership_was_deactivated_is_no_longer_listed(director, croupier, casino):
    membership = Membership.objects.get(employee=croupier.employee, casino=casino)
    membership.active = False
    membership.save()
    assert [e.user.username for e in Employee.objects.for_user(director)] == ["directeur"]


def test_a_staff_member_who_left_for_another_casino_of_the_group_is_listed_there_only(
    api, client, director, croupier, outsider, casino, other_casino
):
    # The croupier's membership of the first casino ended; they are an active member of the other one: their active
    # membership is not of the first casino, their membership of the first casino is not active.
    Membership.objects.create(employee=croupier.employee, casino=other_casino)
    end_memberships(Membership.objects.filter(employee=croupier.employee, casino=casino))
    assert [e.user.username for e in Employee.objects.for_user(director)] == ["directeur"]
    assert sorted(e.user.username for e in Employee.objects.for_user(outsider)) == ["croupier1", "directeur2"]
    api.force_authenticate(director)
    assert api.get(f"/api/v1/employees/{croupier.employee.pk}/").status_code == 404
    listed = api.get("/api/v1/employees/").json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert [row["id"] for row in rows] == [director.employee.pk]
    client.force_login(director)
    assert client.get(croupier.employee.get_absolute_url()).status_code == 404


def approval(casino, username, number="AGR-1", start=datetime.date(2020, 1, 1), end=None, sfrom=None, suntil=None):
    employee = make_employee(username, Role.CROUPIER, casino)
    employee.approval_number = number
    employee.approval_date = start
    employee.approval_end = end
    employee.suspended_from = sfrom
    employee.suspended_until = suntil
    employee.save()
    return employee


@pytest.mark.parametrize(
    ("kwargs", "valid"),
    [
        ({}, True),
        ({"start": DAY}, True),
        ({"start": DAY + datetime.timedelta(days=1)}, False),
        ({"end": DAY}, True),
        ({"end": DAY - datetime.timedelta(days=1)}, False),
        ({"sfrom": DAY}, False),
        ({"sfrom": DAY + datetime.timedelta(days=1)}, True),
        ({"sfrom": DAY - datetime.timedelta(days=9), "suntil": DAY}, False),
        ({"sfrom": DAY - datetime.timedelta(days=9), "suntil": DAY - datetime.timedelta(days=1)}, True),
        ({"sfrom": DAY - datetime.timedelta(days=9)}, False),
    ],
    ids=[
        "open-ended",
        "starts-that-day",
        "starts-next-day",
        "ends-that-day",
        "ended-the-day-before",
        "suspended-from-that-day",
        "suspended-from-next-day",
        "suspended-until-that-day",
        "suspension-ended-the-day-before",
        "suspended-without-end",
    ],
)
def test_r15_r20_an_approval_is_valid_on_a_day_by_its_dates_and_suspension(casino, kwargs, valid):
    """Whoever counts, signs or is rostered holds a valid approval on the day: the model and the queryset agree."""
    employee = approval(casino, "agree", **kwargs)
    assert employee.approval_valid_on(DAY) is valid
    assert Employee.objects.filter(pk=employee.pk).with_valid_approval(on=DAY).exists() is valid


def test_r15_r20_an_approval_without_number_is_never_valid(casino):
    employee = make_employee("sans-numero", Role.CONTROLEUR, casino, approved=False)
    employee.approval_date = datetime.date(2020, 1, 1)
    employee.save()
    assert employee.approval_valid_on(DAY) is False
    assert not Employee.objects.filter(pk=employee.pk).with_valid_approval(on=DAY).exists()


# Scoping: a deactivated membership -----------------------------------------------------------------------------


def test_a_user_whose_membership_was_deactivated_no_longer_sees_the_casino(
    api, client, director, boule_tableau, casino
):
    api.force_authenticate(director)
    assert [c["id"] for c in api.get("/api/v1/casinos/").json()["results"]] == [casino.pk]
    end_memberships(Membership.objects.filter(employee__user=director, casino=casino))
    assert list(Casino.objects.for_user(director)) == []
    assert api.get("/api/v1/casinos/").json()["results"] == []
    assert api.get("/api/v1/tableaux/").json()["results"] == []
    assert api.get(f"/api/v1/tableaux/{boule_tableau.pk}/").status_code == 404
    assert api.get(f"/api/v1/casinos/{casino.pk}/").status_code == 404
    client.force_login(director)
    assert client.get(casino.get_absolute_url()).status_code == 404


def test_a_deactivated_membership_hides_the_staff_of_that_casino(api, director, croupier, casino):
    from casino.models import Employee

    assert croupier.employee in Employee.objects.for_user(director)
    end_memberships(Membership.objects.filter(employee__user=director, casino=casino))
    assert list(Employee.objects.for_user(director)) == []
