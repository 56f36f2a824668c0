"""A safe /admin/: scoped to the user's casinos, history never rewritten, accounts and secrets out of reach (R28,
R29), behind the second factor outside demo mode."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django_otp.oath import totp
from django_otp.plugins.otp_totp.models import TOTPDevice

from casino.models import Alert, Casino, Membership
from tables.models import Apparatus, Cashbox, Tableau
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_admin(administrator):
    """The casino's administrator with access to /admin/, as in the demo."""
    administrator.is_staff = True
    administrator.save()
    return administrator


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser("racine", password=PASSWORD)


@pytest.fixture
def lake(other_casino, outsider):
    """Casino du Lac, with its director, an apparatus and an alert."""
    apparatus = Apparatus.objects.create(casino=other_casino, game="boule", name="Boule du Lac")
    alert = Alert.objects.create(casino=other_casino, kind="test", key="lac", message="Alerte du Lac")
    return {"casino": other_casino, "apparatus": apparatus, "alert": alert, "director": outsider.employee}


def admin_client(user):
    client = Client()
    client.force_login(user)
    return client


def test_the_administrator_finds_nothing_of_another_casino_in_the_admin(staff_admin, casino, lake):
    client = admin_client(staff_admin)
    for url in ["/admin/casino/casino/", "/admin/casino/employee/", "/admin/tables/apparatus/", "/admin/casino/alert/"]:
        page = client.get(url)
        assert page.status_code == 200, url
        text = page.content.decode()
        assert "Autre Casino" not in text and "Boule du Lac" not in text and "Alerte du Lac" not in text, url
        assert "Directeur2" not in text, url
    assert "Casino Test" in client.get("/admin/casino/casino/").content.decode()
    for url in [
        f"/admin/casino/casino/{lake['casino'].pk}/change/",
        f"/admin/casino/employee/{lake['director'].pk}/change/",
        f"/admin/tables/apparatus/{lake['apparatus'].pk}/change/",
        f"/admin/casino/casino/{lake['casino'].pk}/history/",
        f"/admin/casino/alert/{lake['alert'].pk}/history/",
    ]:
        response = client.get(url)
        assert response.status_code in (302, 404), url
        assert "Autre Casino" not in response.content.decode(), url


def test_the_administrator_cannot_change_another_casinos_settings_nor_their_own(staff_admin, casino, lake):
    client = admin_client(staff_admin)
    before = Casino.objects.get(pk=lake["casino"].pk).advance_multiple_boule
    body = {"name": "Autre Casino", "advance_multiple_boule": "1", "min_stake_boule": "0.01"}
    client.post(f"/admin/casino/casino/{lake['casino'].pk}/change/", body)
    assert Casino.objects.get(pk=lake["casino"].pk).advance_multiple_boule == before
    own = client.post(f"/admin/casino/casino/{casino.pk}/change/", body | {"name": "Casino Test"})
    assert own.status_code == 403
    assert Casino.objects.get(pk=casino.pk).advance_multiple_boule == casino.advance_multiple_boule


def test_the_administrator_cannot_make_themselves_a_member_or_a_director_in_the_admin(staff_admin, casino, lake):
    client = admin_client(staff_admin)
    employee = staff_admin.employee
    body = {
        "role": "directeur",
        "approval_number": "X",
        "approval_date": "2024-01-01",
        "memberships-TOTAL_FORMS": "1",
        "memberships-INITIAL_FORMS": "0",
        "memberships-0-casino": str(lake["casino"].pk),
        "memberships-0-active": "on",
    }
    assert client.post(f"/admin/casino/employee/{employee.pk}/change/", body).status_code == 403
    assert (
        client.post("/admin/casino/membership/add/", {"employee": employee.pk, "casino": lake["casino"].pk}).status_code
        == 404
    )
    employee.refresh_from_db()
    assert employee.role == "administrateur"
    assert not Membership.objects.filter(employee=employee, casino=lake["casino"]).exists()


def test_nobody_sets_a_password_or_a_role_group_in_the_admin(staff_admin, superuser, director):
    for user in (staff_admin, superuser):
        client = admin_client(user)
        assert client.get(f"/admin/auth/user/{director.pk}/password/").status_code == 404
        response = client.post(
            f"/admin/auth/user/{director.pk}/password/",
            {"password1": "nouveau mot de passe", "password2": "nouveau mot de passe"},
        )
        assert response.status_code == 404
        assert client.get(f"/admin/auth/user/{director.pk}/change/").status_code == 404
        assert client.get("/admin/auth/group/").status_code == 404
        assert client.get("/admin/otp_totp/totpdevice/add/").status_code == 404
    director.refresh_from_db()
    assert director.check_password(PASSWORD)


def test_a_history_form_post_is_refused_even_to_a_superuser(staff_admin, superuser, casino, director):
    alert = Alert.objects.create(casino=casino, kind="test", key="k", message="Alerte")
    from casino.services import acknowledge_alert

    acknowledge_alert(director, alert)
    first = alert.history.earliest("history_date")
    url = f"/admin/casino/alert/{alert.pk}/history/{first.history_id}/"
    for user in (staff_admin, superuser):
        client = admin_client(user)
        assert client.get(url).status_code == 200
        # No time of an act in the body: that alone would be refused first (400 R30, casino.web.clock).
        response = client.post(url, {"message": "Réécrite", "_continue": "1"})
        assert response.status_code == 403
    alert.refresh_from_db()
    assert alert.acknowledged_at is not None and alert.message == "Alerte"
    first_casino = casino.history.earliest("history_date")
    response = admin_client(superuser).post(
        f"/admin/casino/casino/{casino.pk}/history/{first_casino.history_id}/", {"name": "Rétabli"}
    )
    assert response.status_code == 403


def test_foreign_key_choices_are_scoped_to_the_users_casinos(staff_admin, casino, lake):
    client = admin_client(staff_admin)
    page = client.get("/admin/tables/apparatus/add/").content.decode()
    assert "Casino Test" in page and "Autre Casino" not in page
    body = {"game": "boule", "name": "Intruse", "numbers": 9, "cases": 9, "in_service": "on"}
    refused = client.post("/admin/tables/apparatus/add/", body | {"casino": lake["casino"].pk})
    assert refused.status_code == 200  # the form refuses the foreign casino as an invalid choice
    assert not Apparatus.objects.filter(name="Intruse").exists()
    # The same form for the administrator's own casino is accepted: only the casino made the difference.
    assert client.post("/admin/tables/apparatus/add/", body | {"casino": casino.pk}).status_code == 302
    assert Apparatus.objects.get(name="Intruse").casino == casino


def test_outside_demo_mode_the_admin_needs_a_verified_second_factor_superusers_included(settings, superuser):
    settings.REQUIRE_2FA = True
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    client = Client()
    response = client.post("/admin/login/", {"username": "racine", "password": PASSWORD, "next": "/admin/"})
    assert response.status_code == 200 and "otp_token" in response.content.decode()
    assert client.get("/admin/").status_code == 302  # still sent to the login page
    device = TOTPDevice.objects.create(user=superuser, name="t", confirmed=True)
    token = f"{totp(device.bin_key, device.step, device.t0, device.digits, device.drift):06d}"
    response = client.post(
        "/admin/login/",
        {
            "username": "racine",
            "password": PASSWORD,
            "otp_device": device.persistent_id,
            "otp_token": token,
            "next": "/admin/",
        },
    )
    assert response.status_code == 302
    assert client.get("/admin/").status_code == 200


def test_in_demo_mode_the_admin_opens_with_the_password(settings, staff_admin):
    settings.REQUIRE_2FA = False
    client = Client()
    response = client.post("/admin/login/", {"username": "admin", "password": PASSWORD, "next": "/admin/"})
    assert response.status_code == 302
    assert client.get("/admin/").status_code == 200


def test_a_superuser_sees_every_casino(superuser, casino, lake):
    page = admin_client(superuser).get("/admin/casino/casino/").content.decode()
    assert "Casino Test" in page and "Autre Casino" in page


def test_r3_a_tableau_added_in_the_admin_comes_with_the_cash_boxes_r3_prescribes(staff_admin, boule_table):
    client = admin_client(staff_admin)
    response = client.post("/admin/tables/tableau/add/", {"table": boule_table.pk, "number": 7, "in_service": "on"})
    assert response.status_code == 302
    tableau = Tableau.objects.get(number=7)
    assert tableau.casino == boule_table.apparatus.casino and tableau.game == "boule"
    kinds = sorted(Cashbox.objects.filter(tableau=tableau).values_list("kind", flat=True))
    assert kinds == sorted(Cashbox.DEFAULT_KINDS["boule"])
