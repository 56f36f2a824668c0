"""The shell's account commands (R28, R29): Django's `changepassword` sets no casino person's password, even for
whoever holds a shell on the server — a lost password is a reset the administrator proposes and the direction
confirms; `createsuperuser` makes an account without any role, which signs nothing and decides nothing."""

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management import call_command, get_commands
from django.core.management.base import CommandError

from cashbox.signatures import sign
from casino.accounts.services import decide, propose, state_of
from casino.models import AccountDecision, Role
from casino.rules import RoleForbidden
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def test_r28_the_casinos_changepassword_is_the_one_manage_py_runs():
    assert get_commands()["changepassword"] == "casino.accounts"


@pytest.mark.parametrize("username", ["croupier1", "directeur", "admin"])
def test_r28_changepassword_sets_no_casino_persons_password(monkeypatch, croupier, director, administrator, username):
    user = get_user_model().objects.get(username=username)
    before = user.password
    # Were the command to ask, it would be given a new password: it must refuse before asking.
    monkeypatch.setattr("getpass.getpass", lambda *args, **kwargs: "Nouveau-mot-de-passe-2026")
    with pytest.raises(CommandError, match=r"R28.*arts\. 69 et 80") as refused:
        call_command("changepassword", username)
    assert "proposition de l'administrateur" in str(refused.value) and "direction" in str(refused.value)
    user.refresh_from_db()
    assert user.password == before and user.check_password(PASSWORD)


def test_r28_changepassword_still_serves_the_operators_own_superuser(monkeypatch):
    root = get_user_model().objects.create_superuser("root", "root@example.org", "Ancien-mot-de-passe-2026")
    monkeypatch.setattr("getpass.getpass", lambda *args, **kwargs: "Nouveau-mot-de-passe-2026")
    call_command("changepassword", "root")
    root.refresh_from_db()
    assert root.check_password("Nouveau-mot-de-passe-2026")


def test_r29_a_superuser_from_createsuperuser_signs_and_decides_nothing(
    monkeypatch, casino, administrator, croupier, director
):
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "Mot-de-passe-root-2026")
    call_command("createsuperuser", "--noinput", "--username", "root", "--email", "root@example.org")
    root = get_user_model().objects.get(username="root")
    assert root.is_superuser and not hasattr(root, "employee")
    # No role in any casino: no signature in its name…
    with pytest.raises(ValidationError) as refused:
        sign(casino, "root", "Mot-de-passe-root-2026", "account", "x", {Role.DIRECTOR}, "R29")
    assert "employé inconnu" in str(refused.value)
    # …and no decision on a proposal: R29's confirmation stays the direction's.
    change = propose(administrator, croupier.employee, {**state_of(croupier.employee), "role": Role.CHEF})
    with pytest.raises(RoleForbidden) as forbidden:
        decide(root, change, True, "Mot-de-passe-root-2026")
    assert forbidden.value.rule == "R29"
    assert not AccountDecision.objects.exists()
