"""The direction's acts and the books signed with keys, verified offline (R22–R29): the export carries the rows of
each act (rectificatifs, key confirmations and revocations, decisions on proposals, versions of the settings, levy
schedules, the registre d'observations); tools/verify_export.py rebuilds each statement from them and checks the
person's assertion with `cryptography` alone. A figure changed in one of those rows, even with the bag signed again
with the casino's key, fails on that person's signature, naming the person and the act."""

import datetime
import zipfile

import pytest
from django.utils import timezone

import casino.tasks  # noqa: F401 -- registers the export's build task, queued by name on commit
from books import services as book_services
from cashbox import services as cash_services
from cashbox.models import Count, RegisterAmendment
from cashbox.signatures import people_of
from casino.accounts import services as account_services
from casino.accounts.passkeys import signing_options
from casino.models import Casino, Role
from tests.conftest import PASSWORD
from tests.exports.test_exports import archive, run_script
from tests.exports.test_r28_personal_signatures_offline import _resign, built, keyed_day  # noqa: F401
from tests.helpers.cash_helpers import chips_for
from tests.helpers.passkey_helpers import enrolled_key, key_of

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    return settings.EXPORT_ROOT


def sign_with(user, casino, options_of, act_of):
    """Sign with the user's key: the first step's options, then the act with the assertion."""
    return act_of(key_of(user, casino).assertion(options_of()))


@pytest.fixture
def direction_day(
    keyed_day,  # noqa: F811 -- the fixture imported above
    casino,
    cash_staff,
    administrator,
    regulator,
):
    """keyed_day (its advance, count and register signed with keys), then, each signed with a key: a rectificatif
    (by two), a croupier's key confirmed and revoked, a role confirmed, the settings changed, a levy schedule, the
    regulator's entry and the direction's follow-up."""
    director, codir = cash_staff["director"], cash_staff["codir"]
    # The correction is the floor's act: made while the casino signs with passwords, then the casino is back on keys.
    Casino.objects.filter(pk=casino.pk).update(signature_method=Casino.SignatureMethod.PASSWORD)
    count = Count.objects.get(kind="final")
    cash_services.correct(
        cash_staff["chef"], count, chips_for("8900"), "Erreur", "huit mille neuf cents euros", "directeur", PASSWORD
    )
    Casino.objects.filter(pk=casino.pk).update(signature_method=Casino.SignatureMethod.PASSKEY)
    amendment = RegisterAmendment.objects.get()
    for user, username in ((director, "directeur"), (codir, "codir")):
        person = people_of(casino, [username])[username]
        sign_with(
            user,
            casino,
            lambda p=person, u=username: signing_options(casino, p, cash_services.amendment_act(amendment, u)),
            lambda a, u=username: cash_services.sign_amendment(amendment, u, None, assertion=a),
        )
    _, key = enrolled_key(cash_staff["croupier"], casino, confirmed_by=director)
    sign_with(
        codir,
        casino,
        lambda: account_services.key_signing_options(codir, key, True, "Départ"),
        lambda a: account_services.revoke_passkey(codir, key, "Départ", None, assertion=a),
    )
    employee = cash_staff["caissier"].employee
    change = account_services.propose(
        administrator, employee, {**account_services.state_of(employee), "role": Role.CHEF}
    )
    sign_with(
        director,
        casino,
        lambda: account_services.decision_signing_options(director, change, True, "Promotion"),
        lambda a: account_services.decide(director, change, True, None, "Promotion", assertion=a),
    )
    values = casino.latest_settings() | {"launch_share_threshold": 35}
    sign_with(
        director,
        casino,
        lambda: account_services.settings_signing_options(director, casino, values, "Arrêté"),
        lambda a: account_services.change_settings(director, casino, values, "Arrêté", None, assertion=a),
    )
    brackets = [{"lower": "0", "upper": "1000", "rate": "10"}, {"lower": "1000", "upper": None, "rate": "20"}]
    sign_with(
        director,
        casino,
        lambda: book_services.levy_schedule_signing_options(
            director, casino, 2025, "Progressif", brackets, "directeur"
        ),
        lambda a: book_services.enter_levy_schedule(
            director, casino, 2025, "Progressif", brackets, "directeur", None, assertion=a
        ),
    )
    enrolled_key(regulator, casino, confirmed_by=director)
    visited = timezone.now() - datetime.timedelta(hours=1)
    observation = sign_with(
        regulator,
        casino,
        lambda: book_services.observation_signing_options(
            regulator, casino, visited, "Tableaux conformes.", "Afficher"
        ),
        lambda a: book_services.record_observation(
            regulator, casino, visited, "Tableaux conformes.", "Afficher", None, assertion=a
        ),
    )
    sign_with(
        director,
        casino,
        lambda: book_services.action_signing_options(director, observation, "Affiche posée.", "directeur"),
        lambda a: book_services.record_action(director, observation, "Affiche posée.", "directeur", None, assertion=a),
    )
    return keyed_day


def test_r28_the_direction_s_acts_verify_offline(
    regulator, casino, direction_day, django_capture_on_commit_callbacks, settings
):
    export = built(regulator, casino, direction_day, django_capture_on_commit_callbacks)
    code, output = run_script(archive(export, settings))
    assert code == 0, output
    # keyed_day's 9 (advance, count by three, register by two, the keys of the CoDir member, the croupier and the
    # caissier confirmed with the director's), then: the rectificatif by two, the croupier's key confirmed and
    # revoked, the decision, the settings, the schedule, the entry, its follow-up.
    assert "19 signature(s) personnelle(s) par clé vérifiée(s)" in output, output


@pytest.mark.parametrize(
    ("file", "old", "new", "who", "what"),
    [
        ("data/register_amendments.csv", b"Erreur", b"Erreue", "directeur", "le rectificatif n° 1 du registre"),
        ("data/account_decisions.csv", b"Promotion", b"Promotiom", "directeur", "la décision sur la proposition"),
        ("data/levy_brackets.csv", b"20.0000", b"21.0000", "directeur", "le barème « Progressif »"),
        ("data/observations.csv", b"Tableaux conformes.", b"Tableaux conformez", "controleur", "l'observation n°"),
        ("data/passkeys.csv", b"D\xc3\xa9part", b"D\xc3\xa9parx", "codir", "la révocation de la clé"),
    ],
)
def test_r28_a_changed_row_fails_on_the_persons_signature_even_with_the_bag_signed_again(
    regulator, casino, direction_day, django_capture_on_commit_callbacks, settings, tmp_path, file, old, new, who, what
):
    export = built(regulator, casino, direction_day, django_capture_on_commit_callbacks)
    forged = _resign(casino, archive(export, settings), tmp_path / "forged.zip", file, old, new)
    code, output = run_script(forged)
    assert code == 1
    assert "tagmanifest-sha256.txt : signature invalide" not in output
    assert f"signature de {who} invalide pour {what}" in output, output


def test_r28_a_changed_setting_fails_on_the_directors_signature(
    regulator, casino, direction_day, django_capture_on_commit_callbacks, settings, tmp_path
):
    export = built(regulator, casino, direction_day, django_capture_on_commit_callbacks)
    source = archive(export, settings)
    with zipfile.ZipFile(source) as bag:
        name = next(n for n in bag.namelist() if n.endswith("data/day_settings.csv"))
        header, *rows = bag.read(name).decode().splitlines()
    column = header.split(",").index("launch_share_threshold")
    row = next(r for r in rows if r.split(",")[column] == "35")
    changed = ",".join("45" if i == column else v for i, v in enumerate(row.split(",")))
    forged = _resign(casino, source, tmp_path / "forged.zip", "data/day_settings.csv", row.encode(), changed.encode())
    code, output = run_script(forged)
    assert code == 1
    assert "signature de directeur invalide pour le changement des réglages" in output, output
