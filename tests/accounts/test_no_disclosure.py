"""No refusal tells one casino who works at another (R28): signers, roster members, chefs, witnesses and key holders
of another casino are « employé inconnu », in the same words as a name that exists nowhere."""

import datetime

import pytest

from casino.models import Role
from seances.models import GamingDay
from seances.services import plan_seances
from tables.models import Table
from tests.conftest import make_employee
from tests.helpers.cash_helpers import post_advance, post_final_count, post_short_interruption

pytestmark = pytest.mark.django_db


@pytest.fixture
def lucas(other_casino):
    """A croupier and a chef of Casino du Lac, with full names that must never show in our refusals."""
    croupier = make_employee("lucas", Role.CROUPIER, other_casino).user
    croupier.first_name, croupier.last_name = "Lucas", "Bernard"
    croupier.save()
    chef = make_employee("chef_lac", Role.CHEF, other_casino).user
    chef.first_name, chef.last_name = "Claire", "Martin"
    chef.save()
    return croupier


def refusal(response):
    body = response.json()
    assert response.status_code == 400, body
    return body["message"] + str(body.get("errors", ""))


def roster(api, director, casino, boule, chef, members):
    Table.objects.get_or_create(apparatus=boule, name="Table A")
    seance = plan_seances(director, casino, GamingDay.date_at(casino) + datetime.timedelta(days=1))[0]
    api.force_authenticate(director)
    body = {"seance": seance.pk, "apparatus": boule.pk, "chef": chef, "members": members}
    return api.post("/api/v1/rosters/", body, format="json")


def test_r28_a_launcher_of_another_casino_is_an_unknown_employee(api, director, chef, croupier, casino, boule, lucas):
    theirs = refusal(roster(api, director, casino, boule, "chef", ["croupier1", "lucas"]))
    nobody = refusal(roster(api, director, casino, boule, "chef", ["croupier1", "personne"]))
    assert "Employé inconnu" in theirs and "Bernard" not in theirs and "appartient" not in theirs
    assert theirs.replace("lucas", "personne") == nobody


def test_r28_a_chef_of_another_casino_is_an_unknown_employee(api, director, croupier, croupier2, casino, boule, lucas):
    theirs = refusal(roster(api, director, casino, boule, "chef_lac", ["croupier1", "croupier2"]))
    assert "Employé inconnu" in theirs and "Martin" not in theirs and "appartient" not in theirs


def test_r28_a_witness_of_another_casino_is_an_unknown_employee(api, cash_staff, open_day, boule_tableau, lucas):
    assert post_advance(api, cash_staff["chef"], boule_tableau, open_day).status_code == 201
    amount = boule_tableau.casino.advance_amount(boule_tableau.game)
    response = post_final_count(api, cash_staff["chef"], boule_tableau, open_day, amount, witnesses=["lucas"])
    nobody = post_final_count(api, cash_staff["chef"], boule_tableau, open_day, amount, witnesses=["personne"])
    message = refusal(response)
    # R20: witnesses are the tableau's roster staff; someone of another casino is refused exactly like a name that
    # belongs to nobody, without a word on who they are or where they work.
    assert "ne sert pas le tableau" in message and "Bernard" not in message and "appartient" not in message
    assert message.replace("lucas", "personne") == refusal(nobody)


def test_r28_a_signer_or_key_holder_of_another_casino_is_an_unknown_employee(
    api, cash_staff, outsider, open_day, boule_tableau
):
    outsider.first_name, outsider.last_name = "Paul", "Durand"
    outsider.save()
    signer = refusal(post_advance(api, cash_staff["chef"], boule_tableau, open_day, signer="directeur2"))
    assert "employé inconnu" in signer and "Durand" not in signer and "appartient" not in signer
    post_advance(api, cash_staff["chef"], boule_tableau, open_day)
    key = refusal(post_short_interruption(api, cash_staff["chef"], boule_tableau, open_day, key_holder="directeur2"))
    assert "employé inconnu" in key and "Durand" not in key


def test_another_casino_s_cash_box_and_seance_read_as_keys_that_exist_nowhere(
    api, cash_staff, open_day, boule_tableau, elsewhere
):
    """The API's lookups of a write's cash box and séance (casino.rows.scoped_instance): another casino's record is
    « n'existe pas », in the words of a key that exists nowhere; a key of the wrong type is refused as such."""
    from cashbox.models import Advance, Signature
    from seances.models import Seance
    from tests.helpers.cash_helpers import main_box

    their_seance = Seance.objects.filter(gaming_day__casino=elsewhere.casino).earliest("planned_start")
    box, unknown = main_box(elsewhere).pk, 10**6

    def errors(seance=open_day, **body):
        response = post_advance(api, cash_staff["chef"], boule_tableau, seance, **body)
        assert response.status_code == 400, response.json()
        return response.json()["errors"]

    def does_not_exist(field, pk):
        message = f"Clé primaire «\xa0{pk}\xa0» non valide - l'objet n'existe pas."
        return {field: [{"message": message, "code": "does_not_exist"}]}

    assert errors(cashbox=box) == does_not_exist("cashbox", box)
    assert errors(cashbox=unknown) == does_not_exist("cashbox", unknown)
    assert errors(seance=their_seance) == does_not_exist("seance", their_seance.pk)
    assert errors(cashbox=2**63) == does_not_exist("cashbox", 2**63)
    for wrong, kind in (("abc", "str"), (True, "bool"), ([1], "list")):
        (shown,) = errors(cashbox=wrong)["cashbox"]
        assert shown["message"] == f"Type incorrect. Attendait une clé primaire, a reçu {kind}.", shown
    assert not Advance.objects.exists() and not Signature.objects.filter(purpose="advance").exists()
