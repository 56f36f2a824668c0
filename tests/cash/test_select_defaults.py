"""The selects of the floor, roster, cash and registry forms (issue 40): no Django « --------- », the logged-in person
proposed first wherever they are a legal choice (the interruption's key holder, the signers), nobody otherwise.
"""

import re

import pytest

from casino.models import Role
from tests.conftest import make_employee
from tests.rosters.test_rosters import build, launchers, roster_setup, seance  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


def options(page, name):
    """(value, selected) of each option of the select `name`, in order."""
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', page, re.S).group(1)
    return [(value, bool(selected)) for value, selected in re.findall(r'<option value="([^"]*)"( selected)?', select)]


@pytest.fixture
def floor_staff(director, codir, chef, croupier, croupier2, caissier, casino):
    # Sorted before « chef » and before « directeur » in their roles: a browser would pick them were nobody proposed.
    make_employee("alain", Role.CHEF, casino)
    make_employee("bernard", Role.CODIR, casino)  # one directeur responsable per casino (R29): a second CoDir


def test_the_short_interruptions_key_holder_defaults_to_the_logged_in_chef(
    as_user, chef, floor_staff, open_day, boule_tableau
):
    page = as_user(chef).get(f"/caisse/tableaux/{boule_tableau.pk}/interruption-momentanee/").content.decode()
    listed = options(page, "key_holder")
    assert listed[0] == ("", False) and listed[1] == ("chef", True)
    assert [value for value, selected in listed if selected] == ["chef"]


@pytest.mark.parametrize("persona", ["director", "codir"])
def test_the_signer_list_starts_with_the_logged_in_signer(
    request, as_user, persona, floor_staff, open_day, boule_tableau
):
    user = request.getfixturevalue(persona)
    page = as_user(user).get(f"/caisse/tableaux/{boule_tableau.pk}/avance/").content.decode()
    listed = options(page, "signer")
    assert listed[0] == ("", False) and listed[1] == (user.username, True)
    assert {"directeur", "codir", "bernard"} <= {value for value, _ in listed}


def test_nobody_whose_membership_of_the_casino_ended_is_proposed_to_count_or_sign(
    as_user, director, floor_staff, open_day, boule_tableau, casino
):
    from casino.models import Membership

    make_employee("ancien", Role.CROUPIER, casino)
    for username in ("ancien", "bernard"):
        membership = Membership.objects.get(employee__user__username=username, casino=casino)
        membership.active = False
        membership.save()

    page = as_user(director).get(f"/caisse/tableaux/{boule_tableau.pk}/avance/").content.decode()

    assert [value for value, _ in options(page, "counted_by")] == ["croupier1", "croupier2"]
    assert [value for value, _ in options(page, "signer")] == ["", "directeur", "codir"]


def test_a_chef_is_proposed_no_signer(as_user, chef, floor_staff, open_day, boule_tableau):
    page = as_user(chef).get(f"/caisse/tableaux/{boule_tableau.pk}/avance/").content.decode()
    assert [value for value, selected in options(page, "signer") if selected] in ([], [""])


def test_the_roster_signers_start_with_the_logged_in_director(as_user, director, floor_staff, roster_setup):  # noqa: F811
    roster = build(director, roster_setup)
    page = as_user(director).get(f"/roulement/{roster.pk}/").content.decode()
    assert options(page, "signer")[0] == ("directeur", True)


@pytest.mark.parametrize(
    "url",
    [
        "/registre/appareils/nouveau/",
        "/registre/tables/nouvelle/",
        "/registre/tableaux/nouveau/",
        "/registre/caisses/nouvelle/",
    ],
)
def test_the_registry_forms_say_choisir_not_dashes(as_user, director, boule_tableau, url):
    page = as_user(director).get(url).content.decode()
    assert "---------" not in page and "— choisir —" in page


def test_the_employee_form_proposes_no_role_in_words_not_dashes(as_user, administrator):
    page = as_user(administrator).get("/personnel/nouveau/").content.decode()
    assert "---------" not in page
    assert options(page, "role")[0][0] == "" and "— choisir —</option>" in page


def test_the_deputy_defaults_to_the_logged_in_codir_member_and_to_nobody_for_the_director(
    as_user, director, codir, floor_staff, casino
):
    url = f"/caisse/registres/2026-12-06/suppleant/?casino={casino.pk}"
    deputies = options(as_user(codir).get(url).content.decode(), "deputy")
    assert deputies[:2] == [("", False), ("codir", True)] and ("bernard", False) in deputies
    deputies = options(as_user(director).get(url).content.decode(), "deputy")
    assert deputies[0][0] == "" and not any(selected for value, selected in deputies if value)
