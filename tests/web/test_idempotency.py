"""No duplicate: an Idempotency-Key is bound to its user, path and body; every writing POST accepts one; a page
form carries a one-time token; old keys are pruned by a command and a beat task."""

import datetime
import hashlib
import re
from types import SimpleNamespace

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.utils import timezone

from cashbox.models import Advance, Correction, Signature
from casino.models import IdempotentRequest
from casino.web.idempotency import body_hash
from seances.models import Opening, Roster, Seance
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import chips_for, post_advance, post_final_count
from tests.helpers.openings import staff as staff_tableau

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(director, codir, chef, croupier, croupier2, caissier):
    return {"director": director, "codir": codir, "chef": chef}


def key(value):
    return {"HTTP_IDEMPOTENCY_KEY": value}


def test_the_same_key_with_another_body_is_refused_with_422_naming_the_key(api, staff, open_day, boule_tableau):
    signatures = Signature.objects.count()  # the rotation orders published before the opening are signed (R4)
    first = post_advance(api, staff["chef"], boule_tableau, open_day, headers=key("tablette-3"))
    assert first.status_code == 201
    other = post_advance(
        api, staff["chef"], boule_tableau, open_day, kind="top_up", chips=chips_for("8000"), headers=key("tablette-3")
    )
    assert other.status_code == 422
    body = other.json()
    assert body["code"] == "idempotency"
    assert "« tablette-3 »" in body["message"] and "autre contenu" in body["message"]
    assert Advance.objects.count() == 1 and Signature.objects.count() == signatures + 1


@pytest.mark.parametrize("value", ["a\x00b", "clé\tde tablette", "\x7f"])
def test_a_key_holding_a_control_character_is_refused_and_nothing_is_written(
    api, staff, open_day, boule_tableau, value
):
    signatures = Signature.objects.count()
    response = post_advance(api, staff["chef"], boule_tableau, open_day, headers=key(value))
    assert response.status_code == 400
    assert response.json()["errors"] == {
        "Idempotency-Key": [
            {
                "code": "invalid",
                "message": "La clé d'idempotence contient un caractère de contrôle (octet nul, tabulation, saut de "
                "ligne…).",
            }
        ]
    }
    assert not IdempotentRequest.objects.exists() and not Advance.objects.exists()
    assert Signature.objects.count() == signatures
    # Printable keys, accents included, are keys.
    assert post_advance(api, staff["chef"], boule_tableau, open_day, headers=key("tablette-3 é")).status_code == 201


def reused_message(shown, what):
    return (
        f"La clé d'idempotence « {shown} » a déjà servi pour une autre requête ({what}) : rien n'a été inscrit. "
        "Utilisez une nouvelle clé pour une nouvelle requête."
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("t" * 60, "t" * 60),  # sixty characters are shown whole
        ("0123456789" * 6 + "X", "0123456789" * 5 + "0123456…"),  # beyond, the first 57 and an ellipsis
        ("k" * 200, "k" * 57 + "…"),  # the longest key accepted
    ],
)
def test_a_key_reused_with_another_body_is_named_word_for_word(api, staff, open_day, boule_tableau, value, shown):
    assert post_advance(api, staff["chef"], boule_tableau, open_day, headers=key(value)).status_code == 201
    other = post_advance(
        api, staff["chef"], boule_tableau, open_day, kind="top_up", chips=chips_for("8000"), headers=key(value)
    )
    assert other.status_code == 422
    assert other.json() == {
        "code": "idempotency",
        "message": reused_message(shown, "autre contenu"),
        "errors": [{"field": "Idempotency-Key", "key": shown}],
    }
    assert Advance.objects.count() == 1


def test_a_key_longer_than_200_characters_is_refused_and_nothing_is_written(api, staff, open_day, boule_tableau):
    response = post_advance(api, staff["chef"], boule_tableau, open_day, headers=key("k" * 201))
    assert response.status_code == 400
    assert response.json()["errors"] == {
        "Idempotency-Key": [{"code": "invalid", "message": "La clé d'idempotence dépasse 200 caractères."}]
    }
    assert not IdempotentRequest.objects.exists() and not Advance.objects.exists()


def test_the_same_key_and_body_in_another_order_replays_the_first_answer(api, staff, open_day, boule_tableau):
    first = post_advance(api, staff["chef"], boule_tableau, open_day, headers=key("k-1"))
    api.force_authenticate(staff["chef"])
    replay_body = dict(reversed(list(_advance_body(boule_tableau, open_day).items())))
    again = api.post("/api/v1/advances/", replay_body, format="json", **key("k-1"))
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json() and Advance.objects.count() == 1


def _advance_body(tableau, seance):
    from tests.helpers.cash_helpers import main_box

    return {
        "cashbox": main_box(tableau).pk,
        "seance": seance.pk,
        "kind": "initial",
        "chips": chips_for(tableau.casino.advance_amount(tableau.game)),
        "counted_by": "croupier1",
        "brought_by": "caissier",
        "signer": "directeur",
        "password": PASSWORD,
    }


def test_the_same_key_on_another_path_is_refused(api, staff, open_day, boule_tableau, casino):
    assert post_advance(api, staff["chef"], boule_tableau, open_day, headers=key("k-2")).status_code == 201
    api.force_authenticate(staff["director"])
    response = api.post("/api/v1/seances/", {"casino": casino.pk, "gaming_day": "2030-01-01"}, format="json")
    assert response.status_code in (200, 201)
    api.force_authenticate(staff["chef"])
    response = api.post(
        "/api/v1/counts/", {"cashbox": 1, "seance": open_day.pk, "chips": {}}, format="json", **key("k-2")
    )
    assert response.status_code == 422
    assert response.json()["message"] == reused_message("k-2", "autre adresse")


def test_the_same_key_and_the_same_body_on_another_path_is_refused_not_replayed(api, staff, open_day, boule_tableau):
    # The body alone does not identify a request: the advance's very body sent as a count must not be told that the
    # count succeeded with the advance's answer.
    first = post_advance(api, staff["chef"], boule_tableau, open_day, headers=key("k-same"))
    assert first.status_code == 201
    body = {
        "cashbox": first.json()["cashbox"],
        "seance": open_day.pk,
        "kind": "initial",
        "chips": chips_for(boule_tableau.casino.advance_amount(boule_tableau.game)),
        "counted_by": "croupier1",
        "brought_by": "caissier",
        "signer": "directeur",
        "password": PASSWORD,
    }
    assert IdempotentRequest.objects.get(key="k-same").body_hash == body_hash(SimpleNamespace(data=body))
    response = api.post("/api/v1/counts/", body, format="json", **key("k-same"))
    assert response.status_code == 422, response.json()
    assert response.json()["message"] == reused_message("k-same", "autre adresse")
    assert "Idempotent-Replayed" not in response.headers
    assert Advance.objects.count() == 1


def test_a_key_belongs_to_its_user(api, staff, open_day, boule_tableau):
    assert post_advance(api, staff["chef"], boule_tableau, open_day, headers=key("shared")).status_code == 201
    # Another user's same key is another request: here refused by R15 (the initial advance exists), not replayed.
    response = post_advance(api, staff["director"], boule_tableau, open_day, headers=key("shared"))
    assert response.status_code == 409 and response.json()["code"] == "R15"


def test_a_refused_request_does_not_burn_its_key(api, staff, open_day, boule_tableau):
    refused = post_advance(api, staff["chef"], boule_tableau, open_day, chips=chips_for("100"), headers=key("k-3"))
    assert refused.status_code == 400
    assert not IdempotentRequest.objects.filter(key="k-3").exists()


def test_openings_rosters_corrections_and_signatures_accept_a_key(api, staff, casino, open_day, boule_tableau):
    from tables.services import register_tableau

    api.force_authenticate(staff["director"])
    from tables.models import Apparatus, Table

    # A second boule, not rostered when the séance opened: its rotation order, published now, serves the tableau (R31).
    machine = Apparatus.objects.create(casino=casino, game=boule_tableau.game, name="Boule 2")
    tableau = register_tableau(Table.objects.create(apparatus=machine, name="Table 2"), 7)
    staff_tableau(tableau)
    body = {
        "tableau": tableau.pk,
        "gaming_day": open_day.gaming_day.date.isoformat(),
        "minimum": "2.00",
        "max_plein": "200.00",
        "max_chances": "1000.00",
    }
    first = api.post("/api/v1/openings/", body, format="json", **key("open-2"))
    again = api.post("/api/v1/openings/", body, format="json", **key("open-2"))
    assert first.status_code == 201 and again.headers.get("Idempotent-Replayed") == "true"
    changed = api.post("/api/v1/openings/", body | {"minimum": "3.00"}, format="json", **key("open-2"))
    assert changed.status_code == 422
    assert Opening.objects.filter(tableau=tableau).count() == 1

    # The open séance already has its rotation orders (R4): the roster is drawn up for the evening séance.
    evening = Seance.objects.filter(gaming_day=open_day.gaming_day).exclude(pk=open_day.pk).get()
    rosters = Roster.objects.count()
    roster_body = {
        "seance": evening.pk,
        "apparatus": boule_tableau.table.apparatus_id,
        "chef": "chef",
        "members": ["croupier1", "croupier2"],
    }
    created = api.post("/api/v1/rosters/", roster_body, format="json", **key("roster-1"))
    replay = api.post("/api/v1/rosters/", roster_body, format="json", **key("roster-1"))
    assert created.status_code == 201, created.json()
    assert replay.status_code == 201 and replay.headers.get("Idempotent-Replayed") == "true"
    assert Roster.objects.count() == rosters + 1

    assert post_advance(api, staff["chef"], boule_tableau, open_day).status_code == 201
    count = post_final_count(api, staff["chef"], boule_tableau, open_day, "9000").json()
    api.force_authenticate(staff["chef"])
    correction = {
        "count": count["id"],
        "chips": chips_for("9100"),
        "reason": "Erreur de lecture",
        "approval_words": "neuf mille cent euros",
        "signer": "directeur",
        "password": PASSWORD,
    }
    first = api.post("/api/v1/corrections/", correction, format="json", **key("corr-1"))
    again = api.post("/api/v1/corrections/", correction, format="json", **key("corr-1"))
    assert first.status_code == 201 and again.headers.get("Idempotent-Replayed") == "true"
    assert Correction.objects.count() == 1


# Page forms: a one-time token --------------------------------------------------------------------------------


def token_of(page):
    return re.search(r'name="form_token" value="([^"]+)"', page).group(1)


def test_a_double_submitted_top_up_form_writes_once(as_user, staff, open_day, boule_tableau, api):
    assert post_advance(api, staff["chef"], boule_tableau, open_day).status_code == 201
    client = as_user(staff["chef"])
    url = f"/caisse/tableaux/{boule_tableau.pk}/avance/?kind=top_up"
    token = token_of(client.get(url).content.decode())
    form = {
        "chips_100_00": "80",
        "counted_by": "croupier1",
        "brought_by": "caissier",
        "signer": "directeur",
        "password": PASSWORD,
        "form_token": token,
    }
    first = client.post(url, form)
    second = client.post(url, form)
    assert first.status_code == 302 and second.status_code == 302
    assert second["Location"] == first["Location"]
    assert Advance.objects.filter(kind="top_up").count() == 1
    page = client.get(second["Location"]).content.decode()
    assert "rien n&#x27;a été inscrit une seconde fois" in page or "rien n'a été inscrit une seconde fois" in page
    # A new rendering of the form carries a new token: a second top-up on purpose is written.
    third = client.post(url, form | {"form_token": token_of(client.get(url).content.decode())})
    assert third.status_code == 302 and Advance.objects.filter(kind="top_up").count() == 2


def test_a_refused_form_frees_its_token(as_user, staff, open_day, boule_tableau):
    client = as_user(staff["chef"])
    url = f"/caisse/tableaux/{boule_tableau.pk}/avance/"
    token = token_of(client.get(url).content.decode())
    form = {"chips_100_00": "79", "counted_by": "croupier1", "signer": "directeur", "password": PASSWORD}
    assert client.post(url, form | {"form_token": token}).status_code == 400
    assert client.post(url, form | {"form_token": token, "chips_100_00": "80"}).status_code == 302
    assert Advance.objects.count() == 1


# Pruning -----------------------------------------------------------------------------------------------------


def test_old_keys_are_pruned_by_the_command_and_the_beat_task(api, staff, open_day, boule_tableau):
    from casino.tasks import prune_idempotency_keys

    post_advance(api, staff["chef"], boule_tableau, open_day, headers=key("old"))
    IdempotentRequest.objects.filter(key="old").update(created_at=timezone.now() - datetime.timedelta(days=3))
    post_advance(api, staff["chef"], boule_tableau, open_day, kind="top_up", headers=key("recent"))
    call_command("prune_idempotency_keys")
    assert list(IdempotentRequest.objects.values_list("key", flat=True)) == ["recent"]
    IdempotentRequest.objects.update(created_at=timezone.now() - datetime.timedelta(days=3))
    assert prune_idempotency_keys() == 1
    schedule = settings.CELERY_BEAT_SCHEDULE
    assert any(entry["task"] == "casino.tasks.prune_idempotency_keys" for entry in schedule.values())


def test_a_decorated_action_of_a_viewset_with_the_mixin_runs_once_per_key(api, staff, open_day):
    # The not-held action carries @idempotent inside a viewset whose POSTs the mixin wraps: wrapped once, it answers
    # and replays its own answer (wrapped twice, the inner call would replay the outer call's empty placeholder).
    evening = Seance.objects.filter(gaming_day=open_day.gaming_day).exclude(pk=open_day.pk).get()
    api.force_authenticate(staff["director"])
    body = {"reason": "Grève du personnel", "signer": "directeur", "password": PASSWORD}
    first = api.post(f"/api/v1/seances/{evening.pk}/not-held/", body, format="json", **key("relâche"))
    assert first.status_code == 200 and first.json()["state"] == "not_held", first.content
    again = api.post(f"/api/v1/seances/{evening.pk}/not-held/", body, format="json", **key("relâche"))
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert IdempotentRequest.objects.get(key="relâche").status == 200


def test_a_form_encoded_body_differing_only_in_a_repeated_fields_first_value_is_another_body(api, staff, casino):
    api.force_authenticate(staff["director"])
    body = {"casino": casino.pk, "gaming_day": "2030-01-01"}
    first = api.post("/api/v1/seances/", body | {"note": ["a", "b"]}, format="multipart", **key("plan"))
    assert first.status_code in (200, 201), first.content
    other = api.post("/api/v1/seances/", body | {"note": ["c", "b"]}, format="multipart", **key("plan"))
    assert other.status_code == 422 and other.json()["message"] == reused_message("plan", "autre contenu")


def test_the_body_hash_kept_beside_a_key_is_the_sha256_of_the_canonical_json():
    # Stored with each key: a retry sent across a deploy must meet the same hash, whatever the order of the keys.
    request = SimpleNamespace(data={"b": ["é", 1, None], "a": {"z": "2", "y": True}})
    canonical = '{"a":{"y":true,"z":"2"},"b":["é",1,null]}'
    assert body_hash(request) == hashlib.sha256(canonical.encode()).hexdigest()


def test_a_form_body_carrying_a_file_is_hashed_not_refused_with_a_500(api, staff, casino):
    api.force_authenticate(staff["director"])
    body = {"casino": casino.pk, "gaming_day": "2030-01-01", "piece": SimpleUploadedFile("note.txt", b"x")}
    first = api.post("/api/v1/seances/", body, format="multipart", **key("fichier"))
    assert first.status_code in (200, 201), first.content
    assert IdempotentRequest.objects.get(key="fichier").status == first.status_code


def test_two_users_with_the_same_key_each_get_their_own_answer_again(api, staff, open_day, boule_tableau):
    initial = post_advance(api, staff["chef"], boule_tableau, open_day, headers=key("tablette"))
    top_up = post_advance(api, staff["director"], boule_tableau, open_day, kind="top_up", headers=key("tablette"))
    assert initial.status_code == 201 and top_up.status_code == 201
    for user, first, kind in ((staff["chef"], initial, "initial"), (staff["director"], top_up, "top_up")):
        again = post_advance(api, user, boule_tableau, open_day, kind=kind, headers=key("tablette"))
        assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
        assert again.json() == first.json()
    assert Advance.objects.count() == 2


def test_a_post_without_a_key_reaches_its_handler_with_the_records_id(api, chef, boule):
    # « Rien ne va plus » takes the apparatus's id as an argument of its handler, which the key's wrapper passes on
    # without a key too: with no séance open, the handler refuses by its own rule (R30), nothing is written.
    api.force_authenticate(chef)
    for headers in ({}, key("annonce")):
        response = api.post(f"/api/v1/apparatus/{boule.pk}/rien-ne-va-plus/", {}, format="json", **headers)
        assert response.status_code == 409 and response.json()["code"] == "R30", response.content
    assert not IdempotentRequest.objects.exists()


def test_a_post_with_a_key_on_a_route_that_takes_none_is_a_405(api, staff):
    api.force_authenticate(staff["director"])
    response = api.post("/api/v1/alerts/", {}, format="json", **key("alerte"))
    assert response.status_code == 405
    assert not IdempotentRequest.objects.exists()
