"""The registre spécial d'observations: the police des jeux writes its visits and injunctions, signed, append-only;
the direction records the follow-up; alerts before and after the 8-day deadline (R27)."""

import datetime

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.utils import timezone

from books import services as book_services
from books.models import Observation, ObservationAction
from books.tasks import check_observations
from cashbox.models import Signature
from casino.models import Alert, JournalEntry, Membership, Role
from casino.rules import ARTICLES, RoleForbidden, cite
from tests.conftest import PASSWORD
from tests.helpers.books_helpers import staff_fixture  # noqa: F401
from tests.helpers.passkey_helpers import use_keys
from tests.helpers.personas import end_memberships

pytestmark = pytest.mark.django_db


def counts():
    return {m.__name__: m.objects.count() for m in (Observation, ObservationAction, Signature)}


def observe(api, user, casino, **body):
    api.force_authenticate(user)
    payload = {
        "casino": casino.pk,
        "visited_at": (timezone.now() - datetime.timedelta(hours=1)).isoformat(),
        "text": "Visite de la salle : tableaux conformes.",
        "injunction": "Afficher les limites à la table n° 5.",
        "password": PASSWORD,
        **body,
    }
    return api.post("/api/v1/observations/", payload, format="json")


def follow_up(api, user, observation_id, **body):
    api.force_authenticate(user)
    payload = {"text": "Affiche posée le jour même.", "signer": "directeur", "password": PASSWORD, **body}
    return api.post(f"/api/v1/observations/{observation_id}/follow-up/", payload, format="json")


def test_r27_the_regulator_records_a_signed_visit_and_injunction(api, regulator, casino):
    before = counts()
    response = observe(api, regulator, casino)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["written_by"] == "controleur" and body["signature"]["role"] == "controleur"
    assert body["deadline"] == (timezone.localdate() + datetime.timedelta(days=8)).isoformat()
    assert counts() == {**before, "Observation": 1, "Signature": 1}
    assert JournalEntry.objects.filter(action="books.observation.create").exists()


def test_r27_a_visit_without_injunction_has_no_deadline(api, regulator, casino):
    body = observe(api, regulator, casino, injunction="").json()
    assert body["deadline"] is None


@pytest.mark.parametrize(
    "body",
    [
        {"password": "wrong"},
        {"text": "  "},
        {"visited_at": (timezone.now() + datetime.timedelta(days=2)).isoformat()},
    ],
)
def test_r27_an_observation_unsigned_empty_or_dated_in_the_future_is_refused(api, regulator, casino, body):
    before = counts()
    response = observe(api, regulator, casino, **body)
    assert response.status_code == 400 and response.json()["code"] == "R27"
    assert ARTICLES["R27"] in response.json()["message"]
    assert counts() == before


def test_r27_only_the_police_des_jeux_writes_observations(api, staff, casino):
    before = counts()
    for user in (staff["director"], staff["codir"], staff["chef"]):
        assert observe(api, user, casino).status_code == 403
    assert counts() == before


def test_r27_a_regulator_writes_only_for_the_casinos_in_their_remit(api, regulator, other_casino):
    before = counts()
    assert observe(api, regulator, other_casino).status_code == 404
    assert counts() == before


def test_r27_the_direction_records_the_follow_up_and_the_regulator_cannot(api, staff, regulator, casino):
    observation = observe(api, regulator, casino).json()
    before = counts()
    assert follow_up(api, regulator, observation["id"], signer="controleur").status_code == 403
    empty = follow_up(api, staff["director"], observation["id"], text=" ")
    assert empty.status_code == 400 and empty.json()["code"] == "R27"
    by_chef = follow_up(api, staff["director"], observation["id"], signer="chef")
    assert by_chef.status_code == 403 and by_chef.json()["code"] == "R27"
    assert counts() == before
    done = follow_up(api, staff["director"], observation["id"])
    assert done.status_code == 201 and done.json()["signature"]["purpose"] == "observation_action"
    api.force_authenticate(regulator)
    read = api.get(f"/api/v1/observations/{observation['id']}/").json()
    assert [a["text"] for a in read["actions"]] == ["Affiche posée le jour même."]


def test_r27_entries_are_append_only(api, staff, regulator, casino):
    observation = observe(api, regulator, casino).json()
    url = f"/api/v1/observations/{observation['id']}/"
    for user in (regulator, staff["director"]):
        api.force_authenticate(user)
        assert api.patch(url, {"text": "Autre"}, format="json").status_code in (403, 405)
        assert api.delete(url).status_code in (403, 405)
    assert Observation.objects.get().text == "Visite de la salle : tableaux conformes."


def test_r27_through_the_pages_the_regulator_writes_and_the_director_follows_up(
    as_user, client, staff, regulator, casino
):
    page = as_user(regulator)
    visited = (timezone.localtime() - datetime.timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M")
    body = {
        "visited_at": visited,
        "text": "Contrôle des carnets.",
        "injunction": "Numéroter la caisse.",
        "password": PASSWORD,
    }
    assert page.post(f"/livres/observations/?casino={casino.pk}", {**body, "password": "wrong"}).status_code == 400
    assert page.post(f"/livres/observations/?casino={casino.pk}", body).status_code == 302
    observation = Observation.objects.get()
    listing = page.get(f"/livres/observations/?casino={casino.pk}").content.decode()
    assert "Contrôle des carnets." in listing and "aucune suite inscrite" in listing
    assert page.post(f"/livres/observations/{observation.pk}/", {"text": "x"}).status_code == 403
    director = as_user(staff["director"])
    assert director.post(f"/livres/observations/?casino={casino.pk}", body).status_code == 403
    answer = director.post(
        f"/livres/observations/{observation.pk}/",
        {"text": "Caisse renumérotée.", "signer": "directeur", "password": PASSWORD},
    )
    assert answer.status_code == 302
    assert "Caisse renumérotée." in director.get(f"/livres/observations/?casino={casino.pk}").content.decode()


def test_r27_alerts_two_days_before_and_after_the_deadline(api, staff, regulator, casino):
    with time_machine.travel(datetime.datetime(2026, 3, 2, 15, 0, tzinfo=datetime.UTC), tick=False):
        observation = observe(api, regulator, casino).json()
    assert observation["deadline"] == "2026-03-10"
    with time_machine.travel(datetime.datetime(2026, 3, 7, 15, 0, tzinfo=datetime.UTC), tick=False):
        assert check_observations() == 0
    with time_machine.travel(datetime.datetime(2026, 3, 8, 15, 0, tzinfo=datetime.UTC), tick=False):
        assert check_observations() == 1
        assert check_observations() == 0
    assert Alert.objects.get().key == f"observation-due:{observation['id']}"
    with time_machine.travel(datetime.datetime(2026, 3, 10, 15, 0, tzinfo=datetime.UTC), tick=False):
        assert check_observations() == 0
    with time_machine.travel(datetime.datetime(2026, 3, 11, 15, 0, tzinfo=datetime.UTC), tick=False):
        assert check_observations() == 1
    late = Alert.objects.get(key=f"observation-late:{observation['id']}")
    assert late.rule == "R27" and ARTICLES["R27"] in late.message


def test_r27_the_deadline_passes_at_midnight_in_the_casino_s_time_not_in_utc(api, staff, regulator, casino):
    """Deadline the 10th: at 00:30 in Paris on the 11th (23:30 UTC on the 10th) it has passed."""
    with time_machine.travel(datetime.datetime(2026, 3, 2, 15, 0, tzinfo=datetime.UTC), tick=False):
        observation = observe(api, regulator, casino).json()
    assert observation["deadline"] == "2026-03-10"
    with time_machine.travel(datetime.datetime(2026, 3, 10, 23, 30, tzinfo=datetime.UTC), tick=False):
        assert check_observations() == 1
    assert Alert.objects.get().key == f"observation-late:{observation['id']}"


def test_r27_no_alert_once_the_follow_up_is_recorded(api, staff, regulator, casino):
    with time_machine.travel(datetime.datetime(2026, 3, 2, 15, 0, tzinfo=datetime.UTC), tick=False):
        observation = observe(api, regulator, casino).json()
        follow_up(api, staff["director"], observation["id"])
    with time_machine.travel(datetime.datetime(2026, 3, 20, 15, 0, tzinfo=datetime.UTC), tick=False):
        assert check_observations() == 0
    assert not Alert.objects.exists()


# The service's refusals and what it writes, word for word (books.services) -------------------------------------

NOW = datetime.datetime(2026, 3, 2, 14, 30, tzinfo=datetime.UTC)


def refused_field(call, field):
    with pytest.raises(ValidationError) as refusal:
        call()
    (error,) = refusal.value.error_dict[field]
    return error.code, error.message


def test_r27_the_regulator_s_entry_is_written_as_signed_stripped_dated_and_with_its_deadline(regulator, casino):
    visited = NOW - datetime.timedelta(hours=3)
    with time_machine.travel(NOW, tick=False):
        observation = book_services.record_observation(
            regulator, casino, visited, "  Tableaux conformes.  ", "  Afficher les limites. ", PASSWORD
        )
    observation.refresh_from_db()
    assert (observation.casino, observation.written_by, observation.visited_at, observation.recorded_at) == (
        casino,
        regulator,
        visited,
        NOW,
    )
    assert (observation.text, observation.injunction) == ("Tableaux conformes.", "Afficher les limites.")
    assert observation.deadline == datetime.date(2026, 3, 10)
    signature = observation.signature
    assert (signature.signer, signature.role, signature.casino, signature.purpose) == (
        regulator,
        Role.CONTROLEUR,
        casino,
        Signature.Purpose.OBSERVATION,
    )
    assert signature.statement == (
        f"Observation de la visite du {timezone.localtime(visited):%d/%m/%Y %H:%M} — Tableaux conformes. — "
        "injonction : Afficher les limites."
    )


def test_r27_the_deadline_runs_from_the_day_the_injunction_is_entered_not_from_the_visit(regulator, casino):
    # A visit written up two days later: the direction has its 8 days from the entry it can read, not from the visit.
    visited = NOW - datetime.timedelta(days=2)
    with time_machine.travel(NOW, tick=False):
        observation = book_services.record_observation(
            regulator, casino, visited, "Tableaux conformes.", "Afficher les limites.", PASSWORD
        )
    assert timezone.localdate(NOW) == datetime.date(2026, 3, 2)
    assert observation.deadline == datetime.date(2026, 3, 10)


def test_r27_the_period_filter_reads_the_visit_not_the_day_it_was_written_up(api, regulator, casino):
    """A visit of 28 February written up on 2 March: asked for the visits of 28 February, the API lists it; asked for
    those of 2 March, it does not (the regulator looks visits up by the day he came)."""
    visited = NOW - datetime.timedelta(days=2)
    with time_machine.travel(NOW, tick=False):
        observation = book_services.record_observation(regulator, casino, visited, "Visite tardive.", "", PASSWORD)
    api.force_authenticate(regulator)

    def listed(day):
        answer = api.get("/api/v1/observations/", {"from": day.isoformat(), "to": day.isoformat()}).json()
        return [item["id"] for item in answer["results"]]

    assert listed(timezone.localdate(visited)) == [observation.pk]
    assert listed(timezone.localdate(NOW)) == []


def test_r27_a_visit_may_be_dated_the_moment_it_is_written_and_without_injunction(regulator, casino):
    with time_machine.travel(NOW, tick=False):
        observation = book_services.record_observation(regulator, casino, NOW, "Rien à signaler.", None, PASSWORD)
    assert (observation.injunction, observation.deadline) == ("", None)
    assert observation.signature.statement == (
        f"Observation de la visite du {timezone.localtime(NOW):%d/%m/%Y %H:%M} — Rien à signaler."
    )


@pytest.mark.parametrize(
    ("text", "visited_at", "field", "message"),
    [
        ("  ", NOW, "text", "Inscrivez les observations de la visite"),
        (None, NOW, "text", "Inscrivez les observations de la visite"),
        ("Visite.", None, "visited_at", "La visite est datée, et ne peut être postérieure à son inscription"),
        (
            "Visite.",
            NOW + datetime.timedelta(microseconds=1),
            "visited_at",
            "La visite est datée, et ne peut être postérieure à son inscription",
        ),
    ],
    ids=["blank", "no text", "undated", "after its entry"],
)
def test_r27_an_entry_without_text_or_dated_after_itself_is_refused_in_words(
    regulator, casino, text, visited_at, field, message
):
    before = counts()
    with time_machine.travel(NOW, tick=False):
        refusal = refused_field(
            lambda: book_services.record_observation(regulator, casino, visited_at, text, "", PASSWORD), field
        )
    assert refusal == ("R27", cite("R27", message))
    assert counts() == before


def test_r27_only_the_police_des_jeux_of_the_casino_s_district_writes_in_words(staff, regulator, other_casino):
    before = counts()
    with pytest.raises(RoleForbidden) as refusal:
        book_services.record_observation(staff["director"], other_casino, NOW, "Visite.", "", PASSWORD)
    assert (refusal.value.rule, refusal.value.message) == (
        "R27",
        cite("R27", "Seule la police des jeux inscrit ses observations au registre spécial"),
    )
    with pytest.raises(RoleForbidden) as refusal:
        book_services.record_observation(regulator, other_casino, NOW, "Visite.", "", PASSWORD)
    assert (refusal.value.rule, refusal.value.message) == (
        "R27",
        cite("R27", "Cet établissement n'est pas dans votre ressort"),
    )
    assert counts() == before


def test_r27_a_regulator_whose_remit_of_the_casino_ended_no_longer_writes_there(regulator, casino):
    # The regulator was scoped to the casino once: the membership ended, the casino left their district.
    end_memberships(Membership.objects.filter(employee=regulator.employee, casino=casino))
    before = counts()
    with time_machine.travel(NOW, tick=False), pytest.raises(RoleForbidden) as refusal:
        book_services.record_observation(regulator, casino, NOW, "Visite.", "", PASSWORD)
    assert (refusal.value.rule, refusal.value.message) == (
        "R27",
        cite("R27", "Cet établissement n'est pas dans votre ressort"),
    )
    assert counts() == before


@pytest.mark.parametrize("assertion", [None, {}, "clé"])
def test_r27_r28_where_the_casino_signs_with_keys_the_regulator_signs_with_theirs(regulator, casino, assertion):
    use_keys(casino)
    before = counts()
    refusal = refused_field(
        lambda: book_services.record_observation(
            regulator, casino, timezone.now(), "Visite.", "", PASSWORD, assertion=assertion
        ),
        "assertion",
    )
    assert refusal == (
        "R27",
        cite("R27", "Signature refusée : l'établissement signe avec les clés, signez avec votre clé"),
    )
    assert counts() == before


def test_r27_the_follow_up_is_written_stripped_and_signed_by_the_direction(staff, regulator, casino):
    with time_machine.travel(NOW, tick=False):
        observation = book_services.record_observation(regulator, casino, NOW, "Visite.", "Afficher.", PASSWORD)
        action = book_services.record_action(staff["codir"], observation, "  Affiche posée.  ", "directeur", PASSWORD)
    action.refresh_from_db()
    assert (action.casino, action.observation, action.text, action.recorded_by) == (
        casino,
        observation,
        "Affiche posée.",
        staff["codir"],
    )
    assert (action.signature.signer, action.signature.purpose) == (
        staff["director"],
        Signature.Purpose.OBSERVATION_ACTION,
    )
    assert action.signature.statement == f"Suite donnée à l'{observation} — Affiche posée."


@pytest.mark.parametrize(
    ("user", "text", "error", "message"),
    [
        ("chef", "Affiche posée.", RoleForbidden, "Seule la direction inscrit la suite donnée aux observations"),
        ("director", "  ", ValidationError, "Inscrivez la suite donnée à l'observation"),
        ("director", None, ValidationError, "Inscrivez la suite donnée à l'observation"),
    ],
)
def test_r27_a_follow_up_by_the_floor_or_without_text_is_refused_in_words(
    staff, regulator, casino, user, text, error, message
):
    observation = book_services.record_observation(regulator, casino, timezone.now(), "Visite.", "", PASSWORD)
    before = counts()
    with pytest.raises(error) as refusal:
        book_services.record_action(staff[user], observation, text, "directeur", PASSWORD)
    if error is RoleForbidden:
        assert (refusal.value.rule, refusal.value.message) == ("R27", cite("R27", message))
    else:
        (found,) = refusal.value.error_dict["text"]
        assert (found.code, found.message) == ("R27", cite("R27", message))
    assert counts() == before


def test_r27_the_register_lists_each_observation_under_its_visit_and_its_entry_apart(as_user, regulator, casino):
    """A visit of 28 February written up on 2 March: the register's first column is the visit, linked to the entry;
    the day it was written up follows, apart."""
    visited = NOW - datetime.timedelta(days=2)
    with time_machine.travel(NOW, tick=False):
        observation = book_services.record_observation(regulator, casino, visited, "Visite tardive.", "", PASSWORD)
    page = as_user(regulator).get(f"/livres/observations/?casino={casino.pk}").content.decode()
    assert f'href="/livres/observations/{observation.pk}/">28/02/2026 15:30</a>' in page
    assert "inscrite le 02/03/2026 15:30" in page
