"""The last acts signed with a password in a casino that signs with keys, now each signed with the signer's own key
(R28): a séance declared « non tenue » (R24), the designation of the director's deputy (R22) and the reopening of a
short interruption's box by its key holder at the resumption (R18). For each: the API's two steps (…/options/ gives
the act's challenge, the write carries the assertion), the page's « Signer avec ma clé », the offline verifier
rebuilding the act from its exported rows; a key not confirmed, a revoked key, another person's key, a replayed
assertion and a password are refused with the rule named and nothing written. In a casino on passwords, the password
still signs and no challenge is given."""

import datetime
import json
from dataclasses import dataclass

import pytest

import casino.tasks  # noqa: F401 -- registers the export's build task, queued by name on commit
from cashbox import services
from cashbox.models import Deputy, Interruption, Signature
from casino.accounts.services import revoke_passkey
from seances.models import GamingDay, Seance
from seances.services import plan_seances
from tests.conftest import PASSWORD
from tests.exports.test_exports import archive, run_script
from tests.exports.test_r28_personal_signatures_offline import _resign, built
from tests.helpers.cash_steps import enter_initial_advance
from tests.helpers.passkey_helpers import enrolled_key, use_keys

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    return settings.EXPORT_ROOT


@dataclass
class Act:
    """One kind of act, and two instances of it (the second one for the replay)."""

    name: str
    purpose: str
    rule: str
    poster: str  # who is logged in and posts
    signer: str  # whose key signs
    other: str  # the person whose key is not the signer's
    urls: list  # the write's URL of each instance
    option_urls: list
    bodies: list
    page_urls: list
    page_data: list

    def written(self, n):
        """Whether the instance n is written."""
        return self.state(n)

    def signatures(self):
        return Signature.objects.filter(purpose=self.purpose).count()


@pytest.fixture
def world(cash_staff, casino, open_day, boule_tableau, vingt_trois_tableau):
    """Both tableaux in play and their encaisse locked by the chef (short interruptions signed with the password),
    the evening séance and tomorrow's planned; then the chef's, the director's and the CoDir member's keys enrolled
    and confirmed, and the casino on keys."""
    for tableau in (boule_tableau, vingt_trois_tableau):
        enter_initial_advance(cash_staff, tableau, open_day)
    interruptions = [
        services.interrupt_short(cash_staff["chef"], tableau, open_day, "chef", PASSWORD, True, True, True)
        for tableau in (boule_tableau, vingt_trois_tableau)
    ]
    today = GamingDay.date_at(casino)
    evening = Seance.objects.get(gaming_day__casino=casino, gaming_day__date=today, kind=Seance.Kind.EVENING)
    tomorrow, _ = plan_seances(cash_staff["director"], casino, today + datetime.timedelta(days=1))
    codir = cash_staff["codir"]
    keys = {name: enrolled_key(cash_staff[name], casino, confirmed_by=codir) for name in ("chef", "director")}
    keys["codir"] = enrolled_key(codir, casino, confirmed_by=cash_staff["director"])
    use_keys(casino)
    return {
        "keys": keys,
        "interruptions": interruptions,
        "seances": [evening, tomorrow],
        "days": [today, today + datetime.timedelta(days=1)],
    }


USERNAMES = {"directeur": "director", "chef": "chef", "codir": "codir"}


def act_of_kind(kind, world, casino):
    if kind == "not_held":
        seances = world["seances"]
        act = Act(
            name=kind,
            purpose="seance_not_held",
            rule="R24",
            poster="director",
            signer="directeur",
            other="chef",
            urls=[f"/api/v1/seances/{s.pk}/not-held/" for s in seances],
            option_urls=[f"/api/v1/seances/{s.pk}/not-held/options/" for s in seances],
            bodies=[{"reason": "Coupure de courant", "signer": "directeur"}] * 2,
            page_urls=[f"/seances/{s.pk}/non-tenue/" for s in seances],
            page_data=[{"reason": "Coupure de courant", "signer": "directeur"}] * 2,
        )
        act.state = lambda n: Seance.objects.get(pk=seances[n].pk).state == Seance.State.NOT_HELD
    elif kind == "deputy":
        days = world["days"]
        act = Act(
            name=kind,
            purpose="deputy",
            rule="R22",
            poster="director",
            signer="directeur",
            other="codir",
            urls=["/api/v1/deputies/"] * 2,
            option_urls=["/api/v1/deputies/sign/options/"] * 2,
            bodies=[
                {"casino": casino.pk, "gaming_day": d.isoformat(), "deputy": "codir", "reason": "Congé annuel"}
                | {"signer": "directeur"}
                for d in days
            ],
            page_urls=[f"/caisse/registres/{d.isoformat()}/suppleant/?casino={casino.pk}" for d in days],
            page_data=[{"deputy": "codir", "reason": "Congé annuel", "signer": "directeur"}] * 2,
        )
        act.state = lambda n: Deputy.objects.filter(gaming_day__date=days[n]).exists()
    else:
        interruptions = world["interruptions"]
        act = Act(
            name=kind,
            purpose="resumption",
            rule="R18",
            poster="chef",
            signer="chef",
            other="directeur",
            urls=[f"/api/v1/interruptions/{i.pk}/resume/" for i in interruptions],
            option_urls=[f"/api/v1/interruptions/{i.pk}/resume/options/" for i in interruptions],
            bodies=[{"unlocked_by": "chef", "lids_off": True}] * 2,
            page_urls=[f"/caisse/interruptions/{i.pk}/reprise/" for i in interruptions],
            page_data=[{"unlocked_by": "chef", "lids_off": "on"}] * 2,
        )
        act.state = lambda n: not Interruption.objects.get(pk=interruptions[n].pk).ongoing
    return act


KINDS = ["not_held", "deputy", "resumption"]


def authenticator_of(world, username):
    return world["keys"][USERNAMES[username]][0]


def two_steps(api, user, act, n, authenticator, options=None):
    api.force_authenticate(user)
    if options is None:
        asked = api.post(act.option_urls[n], act.bodies[n], format="json")
        assert asked.status_code == 200, asked.content
        options = asked.json()
    response = api.post(act.urls[n], {**act.bodies[n], "assertion": authenticator.assertion(options)}, format="json")
    return options, response


@pytest.mark.parametrize("kind", KINDS)
def test_r28_the_act_is_signed_with_the_signers_own_key(api, cash_staff, casino, world, kind):
    act = act_of_kind(kind, world, casino)
    authenticator, key = world["keys"][USERNAMES[act.signer]]
    options, response = two_steps(api, cash_staff[act.poster], act, 0, authenticator)
    assert response.status_code in (200, 201), response.content
    statement = options["act"]
    assert (statement["purpose"], statement["signer"], statement["casino"]) == (act.purpose, act.signer, casino.pk)
    signature = Signature.objects.get(purpose=act.purpose, method="passkey")
    assert (signature.passkey_id, signature.signer.username) == (key.pk, act.signer)
    assert json.loads(signature.act) == statement and signature.assertion_signature
    assert act.written(0) and not act.written(1)


def test_r28_each_act_names_its_figures(api, cash_staff, casino, world):
    api.force_authenticate(cash_staff["director"])
    not_held = act_of_kind("not_held", world, casino)
    figures = api.post(not_held.option_urls[0], not_held.bodies[0], format="json").json()["act"]["figures"]
    evening = world["seances"][0]
    assert figures == {"seance": evening.pk, "date": world["days"][0].isoformat(), "kind": "soiree"} | {
        "reason": "Coupure de courant"
    }
    deputy = act_of_kind("deputy", world, casino)
    figures = api.post(deputy.option_urls[0], deputy.bodies[0], format="json").json()["act"]["figures"]
    assert figures == {"date": world["days"][0].isoformat(), "deputy": "codir", "reason": "Congé annuel"}
    api.force_authenticate(cash_staff["chef"])
    resumption = act_of_kind("resumption", world, casino)
    figures = api.post(resumption.option_urls[0], resumption.bodies[0], format="json").json()["act"]["figures"]
    interruption = world["interruptions"][0]
    assert figures == {
        "interruption": interruption.pk,
        "seance": interruption.seance_id,
        "tableau": interruption.tableau.number,
        "locked_box": interruption.locked_box_id,
        "lids_off": True,
    }


EXPECTED = {
    "pending": (403, "R29"),
    "revoked": (403, "R28"),
    "another_persons": (403, "R28"),
    "replayed": (409, "R28"),
    "other_act": (400, "R28"),
}


@pytest.mark.parametrize("probe", [*EXPECTED, "password", "nothing"])
@pytest.mark.parametrize("kind", KINDS)
def test_r28_r29_a_wrong_key_a_replay_or_a_password_is_refused_and_nothing_is_written(
    api, cash_staff, casino, world, kind, probe
):
    act = act_of_kind(kind, world, casino)
    poster = cash_staff[act.poster]
    signer = cash_staff[USERNAMES[act.signer]]
    authenticator, key = world["keys"][USERNAMES[act.signer]]
    api.force_authenticate(poster)
    n, assertion = 0, None
    if probe == "pending":
        # A second key of the signer, not yet confirmed by the direction.
        authenticator, _ = enrolled_key(signer, casino)
    elif probe == "revoked":
        # Its holder revokes it (lost), with the password.
        revoke_passkey(signer, key, "Clé perdue", PASSWORD)
    elif probe == "another_persons":
        authenticator = authenticator_of(world, act.other)
    elif probe == "replayed":
        # The assertion that signed the first instance, posted again for the second one.
        assertion = authenticator.assertion(api.post(act.option_urls[0], act.bodies[0], format="json").json())
        first = api.post(act.urls[0], {**act.bodies[0], "assertion": assertion}, format="json")
        assert first.status_code in (200, 201), first.content
        n = 1
    elif probe == "other_act":
        # The key signed the second instance's act; the first one is posted with it.
        assertion = authenticator.assertion(api.post(act.option_urls[1], act.bodies[1], format="json").json())
    signatures = act.signatures()
    if probe in ("password", "nothing"):
        body = {**act.bodies[n], "password": PASSWORD} if probe == "password" else act.bodies[n]
        expected = (400, act.rule)
    else:
        if assertion is None:
            assertion = authenticator.assertion(api.post(act.option_urls[n], act.bodies[n], format="json").json())
        body = {**act.bodies[n], "assertion": assertion}
        expected = EXPECTED[probe]
    response = api.post(act.urls[n], body, format="json")
    assert (response.status_code, response.json()["code"]) == expected, response.content
    assert act.signatures() == signatures
    assert not act.written(n)
    if n == 0:
        assert not act.written(1)


@pytest.mark.parametrize("kind", KINDS)
def test_r28_the_page_signs_the_act_with_the_key(as_user, cash_staff, casino, world, kind):
    act = act_of_kind(kind, world, casino)
    authenticator = authenticator_of(world, act.signer)
    page = as_user(cash_staff[act.poster])
    url, data = act.page_urls[0], act.page_data[0]
    shown = page.get(url).content.decode()
    assert "Signer avec ma clé" in shown and 'name="password"' not in shown
    options = page.post(url, {**data, "sign_options": "1"})
    assert options.status_code == 200, options.content
    assert (options.json()["act"]["purpose"], options.json()["act"]["signer"]) == (act.purpose, act.signer)
    assert not act.written(0)
    # A password typed in the page signs nothing: the key is asked (the rule named, nothing written).
    refused = page.post(url, {**data, "password": PASSWORD})
    assert refused.status_code == 400 and refused.journal_refusal["rule"] == act.rule
    assert "signez avec votre clé" in refused.content.decode()
    assert not act.written(0)
    signed = page.post(url, {**data, "assertion": json.dumps(authenticator.assertion(options.json()))})
    assert signed.status_code == 302, signed.content.decode()
    assert act.written(0)
    assert Signature.objects.get(purpose=act.purpose).method == "passkey"


@pytest.mark.parametrize("kind", KINDS)
def test_r28_a_casino_on_passwords_gives_no_challenge_and_signs_with_the_password(
    api, cash_staff, casino, open_day, boule_tableau, vingt_trois_tableau, kind
):
    for tableau in (boule_tableau, vingt_trois_tableau):
        enter_initial_advance(cash_staff, tableau, open_day)
    interruptions = [
        services.interrupt_short(cash_staff["chef"], tableau, open_day, "chef", PASSWORD, True, True, True)
        for tableau in (boule_tableau, vingt_trois_tableau)
    ]
    today = GamingDay.date_at(casino)
    evening = Seance.objects.get(gaming_day__casino=casino, gaming_day__date=today, kind=Seance.Kind.EVENING)
    world = {"interruptions": interruptions, "seances": [evening, evening], "days": [today, today]}
    act = act_of_kind(kind, world, casino)
    api.force_authenticate(cash_staff[act.poster])
    asked = api.post(act.option_urls[0], act.bodies[0], format="json")
    assert (asked.status_code, asked.json()["code"]) == (409, "R28")
    response = api.post(act.urls[0], {**act.bodies[0], "password": PASSWORD}, format="json")
    assert response.status_code in (200, 201), response.content
    signature = Signature.objects.get(purpose=act.purpose)
    assert (signature.method, signature.passkey, signature.act) == ("password", None, "")
    assert act.written(0)


def test_r28_the_export_verifies_each_act_and_names_the_signer_of_a_changed_one(
    api, cash_staff, casino, regulator, world, django_capture_on_commit_callbacks, settings, tmp_path
):
    for kind in KINDS:
        act = act_of_kind(kind, world, casino)
        _, response = two_steps(api, cash_staff[act.poster], act, 0, authenticator_of(world, act.signer))
        assert response.status_code in (200, 201), response.content
    day = GamingDay.objects.get(casino=casino, date=world["days"][0])
    export = built(regulator, casino, day, django_capture_on_commit_callbacks)
    code, output = run_script(archive(export, settings))
    assert code == 0, output
    assert "3 signature(s) personnelle(s) par clé vérifiée(s)" in output
    evening, interruption = world["seances"][0], Interruption.objects.get(pk=world["interruptions"][0].pk)
    forgeries = [
        (
            "data/seances.csv",
            b"Coupure de courant",
            b"Coupure de secteur",
            f"signature de directeur invalide pour la déclaration de la séance n° {evening.pk}",
        ),
        (
            "data/deputies.csv",
            b"Cong\xc3\xa9 annuel",
            b"Cong\xc3\xa9 maladie",
            f"signature de directeur invalide pour la désignation de codir comme suppléant du directeur le {day.date}",
        ),
        (
            "data/interruptions.csv",
            f",chef,t,{interruption.resumption_id}".encode(),
            f",chef,f,{interruption.resumption_id}".encode(),
            f"signature de chef invalide pour la reprise de l'interruption momentanée n° {interruption.pk}",
        ),
    ]
    for n, (file, old, new, message) in enumerate(forgeries):
        forged = _resign(casino, archive(export, settings), tmp_path / f"forged{n}.zip", file, old, new)
        code, output = run_script(forged)
        assert code == 1
        assert message in output, output


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"user_verified": False}, "user verification"),
        ({"origin": "https://casino.example.evil"}, "origin"),
        ({"rp_id": "casino.example.evil"}, "RP ID"),
    ],
)
def test_r28_an_assertion_without_user_verification_or_from_another_site_is_refused(
    api, cash_staff, casino, world, change, message
):
    """The server checks the origin, the RP id and the user's verification (PIN, biometrics) of each signature, not
    only of the enrolment: the same key touched without its PIN, or answering a phishing site, signs nothing."""
    act = act_of_kind("not_held", world, casino)
    authenticator = authenticator_of(world, "directeur")
    for name, value in change.items():
        setattr(authenticator, name, value)
    _, response = two_steps(api, cash_staff["director"], act, 0, authenticator)
    assert (response.status_code, response.json()["code"]) == (400, "R28"), response.content
    assert message.lower() in response.json()["message"].lower()
    assert act.signatures() == 0 and not act.written(0)


def test_r28_failed_assertions_lock_nobody_out_while_failed_passwords_still_do(api, cash_staff, casino, world):
    """A refused assertion is no guess at a secret (R28): however many another person's key makes at a shared tablet,
    the signer still signs with their own key; a password typed wrong is still counted."""
    from axes.models import AccessAttempt

    act = act_of_kind("not_held", world, casino)
    intruder = authenticator_of(world, "chef")
    for _ in range(8):
        _, response = two_steps(api, cash_staff["director"], act, 0, intruder)
        assert (response.status_code, response.json()["code"]) == (403, "R28")
    assert not AccessAttempt.objects.exists()
    _, response = two_steps(api, cash_staff["director"], act, 0, authenticator_of(world, "directeur"))
    assert response.status_code == 200, response.content
