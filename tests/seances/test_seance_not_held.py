"""A planned séance that does not take place is declared « non tenue » and the register no longer waits (R24)."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.utils.html import escape

from cashbox import services
from cashbox.models import ControlRegister, Signature
from casino.models import Role, SigningChallenge
from casino.rules import ARTICLES, InvalidTransition, RoleForbidden, cite
from seances.models import GamingDay, Seance
from seances.services import change_seance_state, declare_not_held, not_held_options, plan_seances
from tests.conftest import PASSWORD
from tests.helpers.books_helpers import day_of_play, play_seance, rows, staff_fixture  # noqa: F401
from tests.helpers.cash_helpers import open_seance
from tests.helpers.days import DATE, reach_opening
from tests.helpers.passkey_helpers import use_keys
from tests.helpers.second_factor import totp_code

pytestmark = pytest.mark.django_db


@pytest.fixture
def evening(staff, casino):
    _afternoon, evening = plan_seances(staff["director"], casino, GamingDay.date_at(casino))
    return evening


def not_held(api, user, seance, **body):
    api.force_authenticate(user)
    payload = {"reason": "Grève du personnel", "signer": "directeur", "password": PASSWORD, **body}
    return api.post(f"/api/v1/seances/{seance.pk}/not-held/", payload, format="json")


def test_r24_the_director_declares_a_planned_seance_not_held_with_a_signed_reason(api, staff, evening):
    response = not_held(api, staff["director"], evening)
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["state"] == "not_held" and body["not_held_reason"] == "Grève du personnel"
    assert body["not_held_by"] == "directeur" and body["actual_start"] is None
    signature = Signature.objects.get(purpose=Signature.Purpose.SEANCE_NOT_HELD)
    assert "Grève du personnel" in signature.statement and signature.signer == staff["director"]


def test_r24_a_seance_declared_not_held_can_never_open(api, staff, evening):
    assert not_held(api, staff["director"], evening).status_code == 200
    before = rows()
    response = api.post(f"/api/v1/seances/{evening.pk}/open/")
    assert response.status_code == 409 and response.json()["code"] == "R24"
    assert ARTICLES["R24"] in response.json()["message"]
    assert rows() == before
    with pytest.raises(InvalidTransition) as refusal:
        change_seance_state(staff["director"], evening, Seance.State.CLOSED)
    assert refusal.value.rule == "R24"


def test_r24_a_reason_is_required(api, staff, evening):
    before = rows()
    response = not_held(api, staff["director"], evening, reason="   ")
    assert response.status_code == 400 and response.json()["code"] == "R24"
    assert "reason" in response.json()["errors"]
    assert rows() == before


@pytest.mark.parametrize("state", ["open", "closed", "not_held"])
def test_r24_only_a_planned_seance_can_be_declared_not_held(api, staff, evening, state):
    if state in ("open", "closed"):
        reach_opening(evening)
        change_seance_state(staff["director"], evening, Seance.State.OPEN)
    if state == "closed":
        change_seance_state(staff["director"], evening, Seance.State.CLOSED)
    if state == "not_held":
        declare_not_held(staff["director"], evening, "Panne", "directeur", PASSWORD)
    before = rows()
    response = not_held(api, staff["director"], evening)
    assert response.status_code == 409 and response.json()["code"] == "R24"
    assert rows() == before


def test_r24_a_chef_cannot_declare_a_seance_not_held(api, staff, evening):
    before = rows()
    response = not_held(api, staff["chef"], evening, signer="chef")
    assert response.status_code == 403
    assert rows() == before


def test_r24_the_declaration_is_signed_by_the_direction_with_its_password(api, staff, evening):
    before = rows()
    wrong = not_held(api, staff["director"], evening, password="wrong")
    assert wrong.status_code == 400 and wrong.json()["code"] == "R24"
    by_chef = not_held(api, staff["director"], evening, signer="chef")
    assert by_chef.status_code == 403 and by_chef.json()["code"] == "R24"
    assert rows() == before


def test_r24_the_database_refuses_a_not_held_seance_without_reason_nor_signature(evening):
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE seances_seance SET state = 'not_held' WHERE id = %s", [evening.pk])


def test_r24_the_register_no_longer_waits_for_a_seance_not_held(api, staff, casino, boule_tableau):
    day = day_of_play(staff, casino, GamingDay.date_at(casino), {"apres_midi": [(boule_tableau, "9000")]}, ["soiree"])
    register, created = services.draw_up_register(staff["director"], day)
    assert created and register.total == 1000 and register.lines.count() == 1


def test_r24_without_the_declaration_a_planned_seance_still_blocks_the_register(staff, casino, boule_tableau):
    afternoon, _evening = plan_seances(staff["director"], casino, GamingDay.date_at(casino))
    open_seance(staff["director"], afternoon)
    play_seance(staff, boule_tableau, afternoon, "9000")
    change_seance_state(staff["director"], afternoon, Seance.State.CLOSED)
    with pytest.raises(InvalidTransition) as refusal:
        services.draw_up_register(staff["director"], afternoon.gaming_day)
    assert refusal.value.rule == "R30" and not ControlRegister.objects.exists()


def test_r24_through_the_pages_the_day_and_the_register_show_the_seance_not_held(
    as_user, staff, casino, evening, boule_tableau
):
    client = as_user(staff["director"])
    form = client.get(f"/seances/{evening.pk}/non-tenue/")
    assert form.status_code == 200 and escape(ARTICLES["R24"]) in form.content.decode()
    refused = client.post(
        f"/seances/{evening.pk}/non-tenue/", {"reason": "", "signer": "directeur", "password": PASSWORD}
    )
    assert refused.status_code == 400
    evening.refresh_from_db()
    assert evening.state == Seance.State.PLANNED
    done = client.post(
        f"/seances/{evening.pk}/non-tenue/", {"reason": "Salle inondée", "signer": "directeur", "password": PASSWORD}
    )
    assert done.status_code == 302
    evening.refresh_from_db()
    assert evening.state == Seance.State.NOT_HELD
    day_page = client.get(f"/seances/?casino={casino.pk}&date={evening.gaming_day.date.isoformat()}").content.decode()
    assert "Non tenue" in day_page and "Salle inondée" in day_page
    afternoon = evening.gaming_day.seances.get(kind="apres_midi")
    open_seance(staff["director"], afternoon)
    play_seance(staff, boule_tableau, afternoon, "9000")
    change_seance_state(staff["director"], afternoon, Seance.State.CLOSED)
    # Opening the afternoon may have moved the clock to its planned start (R30): the idle session has ended.
    client = as_user(staff["director"])
    url = f"/caisse/registres/{evening.gaming_day.date.isoformat()}/?casino={casino.pk}"
    assert client.post(url, {"action": "draw_up"}).status_code == 302
    page = client.get(url).content.decode()
    assert "non tenue" in page and "Salle inondée" in page


def test_r24_a_page_refusal_for_a_seance_already_open_answers_409(as_user, staff, evening):
    reach_opening(evening)
    change_seance_state(staff["director"], evening, Seance.State.OPEN)
    response = as_user(staff["director"]).post(
        f"/seances/{evening.pk}/non-tenue/", {"reason": "Trop tard", "signer": "directeur", "password": PASSWORD}
    )
    assert response.status_code == 409 and escape(ARTICLES["R24"]) in response.content.decode()


def test_r24_a_planned_seance_is_declared_not_held_with_its_trimmed_reason_signed_by_the_direction(
    casino, director, codir
):
    _afternoon, evening = plan_seances(director, casino, DATE)
    declared = declare_not_held(director, evening, "  Grève du personnel \n", "codir", PASSWORD)
    evening.refresh_from_db()
    assert (evening.state, evening.not_held_reason) == (Seance.State.NOT_HELD, "Grève du personnel")
    assert declared.not_held_signature == evening.not_held_signature
    signature = evening.not_held_signature
    assert (signature.signer, signature.casino, signature.purpose) == (codir, casino, "seance_not_held")
    assert signature.statement == "Séance de la soirée du 10/03/2026 déclarée non tenue — motif : Grève du personnel"
    assert evening.history.latest().history_user == director


@pytest.mark.parametrize("reason", ["", "  \n ", None])
def test_r24_a_seance_is_not_declared_not_held_without_a_reason(casino, director, reason):
    _afternoon, evening = plan_seances(director, casino, DATE)
    with pytest.raises(ValidationError) as caught:
        declare_not_held(director, evening, reason, "directeur", PASSWORD)
    ((field, (error,)),) = caught.value.error_dict.items()
    assert (field, error.code) == ("reason", "R24")
    assert error.message == cite("R24", "Indiquez le motif pour lequel la séance n'a pas été tenue")
    evening.refresh_from_db()
    assert evening.state == Seance.State.PLANNED and not Signature.objects.exists()


@pytest.mark.parametrize(("state", "label"), [("open", "ouverte"), ("closed", "close"), ("not_held", "non tenue")])
def test_r24_only_a_planned_seance_is_declared_not_held(casino, director, state, label):
    afternoon, _evening = plan_seances(director, casino, DATE)
    if state == "not_held":
        declare_not_held(director, afternoon, "Panne", "directeur", PASSWORD)
    else:
        reach_opening(afternoon)
        change_seance_state(director, afternoon, Seance.State.OPEN)
        if state == "closed":
            change_seance_state(director, afternoon, Seance.State.CLOSED)
    signatures = Signature.objects.count()
    with pytest.raises(InvalidTransition) as caught:
        declare_not_held(director, afternoon, "Trop tard", "directeur", PASSWORD)
    assert caught.value.rule == "R24"
    assert caught.value.message == cite(
        "R24",
        f"Seule une séance prévue peut être déclarée non tenue ; Séance de l'après-midi du 10/03/2026 est {label}",
    )
    afternoon.refresh_from_db()
    assert afternoon.state == state and Signature.objects.count() == signatures


def test_r24_only_the_direction_declares_and_signs_a_seance_not_held(casino, director, chef):
    _afternoon, evening = plan_seances(director, casino, DATE)
    with pytest.raises(RoleForbidden) as caught:
        declare_not_held(chef, evening, "Panne", "directeur", PASSWORD)
    assert caught.value.rule == "R24"
    assert caught.value.message == cite(
        "R24",
        "Seul le directeur responsable ou un membre du comité de direction peut déclarer une séance non tenue "
        f"(votre rôle : {Role.CHEF.label})",
    )
    with pytest.raises(RoleForbidden) as caught:
        declare_not_held(director, evening, "Panne", "chef", PASSWORD)
    assert caught.value.rule == "R24" and caught.value.message.startswith("Seul peut signer : ")
    with pytest.raises(ValidationError) as caught:
        declare_not_held(director, evening, "Panne", "directeur", "faux")
    ((field, (error,)),) = caught.value.error_dict.items()
    assert (field, error.code) == ("password", "R24")
    evening.refresh_from_db()
    assert evening.state == Seance.State.PLANNED and not Signature.objects.exists()


def test_r24_r28_a_director_with_a_second_factor_signs_a_seance_not_held_with_their_totp_code(
    casino, director, settings
):
    _afternoon, evening = plan_seances(director, casino, DATE)
    code = totp_code(settings, director)
    declare_not_held(director, evening, "Panne", "directeur", PASSWORD, otp=code)
    evening.refresh_from_db()
    assert evening.state == Seance.State.NOT_HELD and evening.not_held_signature.signer == director


# The first step of a « non tenue » signed with a key (R24, R28): the challenge of the act the request describes.


def test_r28_a_casino_signing_with_passwords_gives_no_challenge_for_a_seance_not_held(casino, director):
    _afternoon, evening = plan_seances(director, casino, DATE)
    with pytest.raises(InvalidTransition) as caught:
        not_held_options(evening, "Grève du personnel", "directeur")
    assert caught.value.rule == "R28"
    assert caught.value.message == cite("R28", "L'établissement signe au mot de passe : aucune clé n'est demandée")
    assert not SigningChallenge.objects.exists()


@pytest.mark.parametrize("reason", ["", "  \n ", None])
def test_r24_no_challenge_is_given_for_a_seance_not_held_without_a_reason(casino, director, reason):
    _afternoon, evening = plan_seances(director, use_keys(casino), DATE)
    with pytest.raises(ValidationError) as caught:
        not_held_options(evening, reason, "directeur")
    ((field, (error,)),) = caught.value.error_dict.items()
    assert (field, error.code) == ("reason", "R24")
    assert error.message == cite("R24", "Indiquez le motif pour lequel la séance n'a pas été tenue")
    assert not SigningChallenge.objects.exists()


def test_r24_r28_the_challenge_names_the_seance_its_day_its_kind_the_trimmed_reason_and_the_signer(
    casino, director, codir
):
    _afternoon, evening = plan_seances(director, use_keys(casino), DATE)
    options = not_held_options(evening, "  Grève du personnel \n", "codir")
    assert options["act"] == {
        "record": "seances.seance",
        "purpose": "seance_not_held",
        "casino": casino.pk,
        "signer": "codir",
        "figures": {"seance": evening.pk, "date": "2026-03-10", "kind": "soiree", "reason": "Grève du personnel"},
    }
    challenge = SigningChallenge.objects.get()
    assert (challenge.user, challenge.casino, challenge.nonce) == (codir, casino, options["nonce"])


def test_r28_no_challenge_is_given_to_a_signer_who_is_not_of_the_casino(casino, director, outsider):
    _afternoon, evening = plan_seances(director, use_keys(casino), DATE)
    with pytest.raises(ValidationError) as caught:
        not_held_options(evening, "Grève du personnel", outsider.username)
    ((field, (error,)),) = caught.value.error_dict.items()
    assert (field, error.code) == ("signer", "R28")
    assert error.message == cite("R28", "Signature refusée : employé inconnu dans l'établissement (directeur2)")
    assert not SigningChallenge.objects.exists()
