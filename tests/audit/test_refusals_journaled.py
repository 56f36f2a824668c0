"""Every refused write attempt of a signed-in user is journaled with its rule, message, status, method and path,
in each of the user's casinos, and only those (R23); the rule of a refusal is read from its error. The refusals the
pages' middleware makes itself name their rule: a page form dated by the client (R30), a page's write that meets a
journal head off its chain (R23)."""

import json

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.http import HttpResponse
from django.test import RequestFactory
from django.utils.html import escape

from casino.audit import journal
from casino.models import JournalEntry
from casino.rules import DomainError, cite
from casino.web import middleware
from casino.web.middleware import (
    ActTimeMiddleware,
    RefusalJournalMiddleware,
    mark_form_refusal,
    mark_refusal,
    refusal_of,
)
from tests.helpers.journal_helpers import refusals

pytestmark = pytest.mark.django_db


# Journaling refusals --------------------------------------------------------------------------------------------


def answered(status, data=None, mark=None):
    def view(request):
        response = HttpResponse(status=status)
        if data is not None:
            response.data = data
        if mark:
            mark_refusal(response, *mark)
        return response

    return RefusalJournalMiddleware(view)


def request_of(user, method="post", path="/seances/planifier/"):
    request = getattr(RequestFactory(), method)(path)
    request.user = user
    return request


@pytest.mark.parametrize("status", [400, 403, 405, 409])
@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_every_refused_write_of_a_signed_in_user_is_journaled_with_its_status_and_method(
    director, casino, status, method
):
    response = answered(status, mark=("R12", "Plafond dépassé"))(request_of(director, method))
    assert response.status_code == status
    assert refusals() == [
        {
            "rule": "R12",
            "message": "Plafond dépassé",
            "status": status,
            "method": method.upper(),
            "path": "/seances/planifier/",
        }
    ]


@pytest.mark.parametrize(
    ("status", "method", "anonymous"),
    [(200, "post", False), (201, "post", False), (302, "post", False), (404, "post", False), (500, "post", False)]
    + [(403, "get", False), (400, "head", False), (405, "options", False), (403, "post", True)],
)
def test_no_other_answer_is_journaled(director, casino, status, method, anonymous):
    user = AnonymousUser() if anonymous else director
    answered(status, mark=("R12", "x"))(request_of(user, method))
    assert refusals() == []


def test_an_api_refusal_is_journaled_with_its_code_and_message(director, casino):
    answered(409, data={"code": "R19", "message": "Séance close", "errors": {}})(request_of(director))
    answered(400, data=["not", "a", "dict"])(request_of(director))
    answered(400, data={"detail": "sans code"})(request_of(director))
    answered(403)(request_of(director))  # no data, no mark
    assert [(found["rule"], found["message"]) for found in refusals()] == [
        ("R19", "Séance close"),
        ("", ""),
        ("", ""),
        ("", ""),
    ]


def test_a_refusal_is_journaled_in_every_casino_of_the_user(director, casino, other_casino):
    director.employee.memberships.create(casino=other_casino)
    answered(400, mark=("R10", "x"))(request_of(director))
    assert sorted(JournalEntry.objects.filter(action="refusal").values_list("casino_id", flat=True)) == sorted(
        [casino.pk, other_casino.pk]
    )


def test_the_refusal_reaches_the_user_even_when_journaling_fails(director, casino, monkeypatch, caplog):
    def broken(*args, **kwargs):
        raise RuntimeError("journal indisponible")

    monkeypatch.setattr(middleware, "record_refusal", broken)
    response = answered(409, mark=("R19", "x"))(request_of(director))
    assert response.status_code == 409
    logged = [record for record in caplog.records if record.name == "casino.web.middleware"]
    assert [record.getMessage() for record in logged] == ["could not journal a refusal"]
    assert "journal indisponible" in caplog.text


def test_what_a_refusal_leaves_behind_is_recorded_after_it_even_when_one_of_them_fails(director, casino, caplog):
    """A refusal's transaction rolls back: what it must leave behind all the same (a cloned key's alert, R28) is
    recorded after it, each action in its own transaction; one that fails is logged, the others and the refusal
    itself still happen."""
    done = []

    def broken():
        raise RuntimeError("alerte impossible")

    def view(request):
        request._after_refusal = [lambda: done.append("alerte"), broken, lambda: done.append("compteur")]
        return mark_refusal(HttpResponse(status=409), "R28", "Clé clonée")

    response = RefusalJournalMiddleware(view)(request_of(director))
    assert response.status_code == 409
    assert done == ["alerte", "compteur"]
    logged = [record for record in caplog.records if record.name == "casino.web.middleware"]
    assert [record.getMessage() for record in logged] == ["could not record what a refusal leaves behind"]
    assert "alerte impossible" in caplog.text
    assert [(found["rule"], found["message"]) for found in refusals()] == [("R28", "Clé clonée")]


# The refusals the pages' middleware makes itself ------------------------------------------------------------------

NOW = "2026-11-30T15:00:00+01:00"


def r30_refusal(name):
    return cite(
        "R30",
        f"« {name} » : l'heure d'un acte est celle du serveur, jamais celle d'un client ; rien n'a été enregistré "
        "(une correction porte l'heure corrigée comme donnée)",
    )


def test_r30_a_page_form_dated_by_the_client_is_refused_before_the_view_and_journaled_with_r30(
    client, director, casino
):
    client.force_login(director)
    body = {"casino": casino.pk, "date": "2026-12-20", "signed_at": NOW, "recorded_at": NOW}
    response = client.post("/seances/planifier/", body)
    assert response.status_code == 400
    message = r30_refusal("recorded_at")  # the first name sent, in alphabetical order
    page = response.content.decode()
    assert f'<p class="lead">{escape(message)}</p>' in page
    assert '<p class="error-code">Erreur 400</p>' in page and '<h1 id="error-title">Heure refusée</h1>' in page
    assert f">{director.get_full_name() or director.username}</span>" in page  # the page of a signed-in user
    assert response.journal_refusal == {"rule": "R30", "message": message}
    assert not casino.gaming_days.exists()
    assert refusals() == [
        {"rule": "R30", "message": message, "status": 400, "method": "POST", "path": "/seances/planifier/"}
    ]


def test_r30_only_unsafe_page_requests_are_searched_for_an_act_s_time_and_the_api_is_left_to_its_parsers():
    reached = []

    def view(request):
        reached.append(request.path)
        return HttpResponse("vue")

    check = ActTimeMiddleware(view)
    factory = RequestFactory()
    assert check(factory.get("/journal/", {"recorded_at": NOW})).content == b"vue"
    assert check(factory.post("/api/v1/advances/", {"recorded_at": NOW})).content == b"vue"
    assert check(factory.post("/seances/planifier/", {"date": "2026-12-20"})).content == b"vue"
    assert reached == ["/journal/", "/api/v1/advances/", "/seances/planifier/"]
    for method in ("post", "put", "patch", "delete"):
        request = getattr(factory, method)("/seances/planifier/")
        request.POST = factory.post("/", {"launched_at": NOW}).POST  # what a form body of that method would carry
        request.user = AnonymousUser()
        response = check(request)
        assert response.status_code == 400, method
        assert response.journal_refusal == {"rule": "R30", "message": r30_refusal("launched_at")}, method
    assert len(reached) == 3


HEAD_OFF_ITS_CHAIN = cite(
    "R23",
    "Refusé : la tête du journal ne correspond plus à sa dernière entrée (R23), rien n'est inscrit tant qu'elle "
    "n'est pas libérée ; l'exploitant l'examine (python manage.py verify_journal) puis la libère (python manage.py "
    "verify_journal --casino <n°> --release-head)",
)


@pytest.mark.parametrize(
    "error",
    [
        "UNIQUE constraint failed: casino_journalentry.casino_id, casino_journalentry.sequence",
        'duplicate key value violates unique constraint "r23_journal_chain_unique"',
    ],
)
def test_r23_a_page_write_meeting_a_journal_head_off_its_chain_answers_409_naming_it_and_its_release(
    director, casino, error
):
    response = RefusalJournalMiddleware(None).process_exception(request_of(director), IntegrityError(error))
    assert response.status_code == 409
    page = response.content.decode()
    assert f'<p class="lead">{escape(HEAD_OFF_ITS_CHAIN)}</p>' in page
    assert '<p class="error-code">Erreur 409</p>' in page and '<h1 id="error-title">Journal bloqué</h1>' in page
    assert f">{director.get_full_name() or director.username}</span>" in page  # the page of a signed-in user
    assert response.journal_refusal == {"rule": "R23", "message": HEAD_OFF_ITS_CHAIN}


def test_r23_any_other_exception_of_a_page_is_left_to_django(director, casino):
    journaling = RefusalJournalMiddleware(None)
    request = request_of(director)
    assert journaling.process_exception(request, IntegrityError("UNIQUE constraint failed: tables_table.name")) is None
    # The head's constraint named by an error that is not the database's refusal is no refusal either.
    assert journaling.process_exception(request, ValueError("r23_journal_sequence_unique")) is None


# The rule of a refusal ------------------------------------------------------------------------------------------


def test_the_rule_of_a_domain_error_is_its_own():
    error = DomainError("R15", "Avance différente")
    assert refusal_of(error) == ("R15", error.message) and error.message.startswith("Avance différente (")


def test_the_rule_of_a_validation_error_is_the_first_code_that_names_a_rule():
    by_field = ValidationError(
        {
            "minimum": [ValidationError("Trop bas", code="min_value")],
            "max_plein": [ValidationError("Au-delà du plafond", code="R12"), ValidationError("Encore", code="R11")],
        }
    )
    assert refusal_of(by_field) == ("R12", "Au-delà du plafond")
    listed = ValidationError(
        [
            ValidationError("Rien", code="Rx"),
            ValidationError("Pas plus", code="Rx1"),
            ValidationError("Séance", code="R19"),
        ]
    )
    assert refusal_of(listed) == ("R19", "Séance")
    assert refusal_of(ValidationError("Refus simple", code="R")) == ("", "Refus simple")
    assert refusal_of(ValidationError(["Un", "Deux"])) == ("", "Un Deux")
    assert refusal_of(ValueError("autre")) == ("", "autre")


def test_a_refused_form_is_marked_with_the_first_rule_its_errors_name():
    class Form:
        def __init__(self, errors):
            self.errors = ValidationError(errors)

    form = Form({"a": [ValidationError("x", code="invalid")], "b": [ValidationError("Trop haut", code="R12")]})
    form.errors.as_data = lambda: form.errors.error_dict
    response = mark_form_refusal(HttpResponse(status=400), form)
    assert response.journal_refusal == {"rule": "R12", "message": "Trop haut"}
    plain = Form(
        {
            "a": [ValidationError("x", code="R1x"), ValidationError("z", code="Rx1")],
            "b": [ValidationError("y", code=None)],
        }
    )
    plain.errors.as_data = lambda: plain.errors.error_dict
    assert not hasattr(mark_form_refusal(HttpResponse(status=400), plain), "journal_refusal")


# A refused attempt (record_refusal) and an account event (record_event) -------------------------------------------


def refused_request(user):
    from django.contrib.auth.models import AnonymousUser
    from django.test import RequestFactory

    request = RequestFactory().post("/api/v1/counts/")
    request.user = user or AnonymousUser()
    return request


@pytest.mark.parametrize("who", ["chef", "anonymous"])
def test_r23_a_refused_attempt_is_journaled_with_its_author_role_rule_and_request(casino, other_casino, chef, who):
    user = chef if who == "chef" else None
    journal.record_refusal(refused_request(user), [casino.pk, other_casino.pk], "R20", "Refusé (art. 43).", 400)
    entries = JournalEntry.objects.filter(action="refusal").order_by("casino_id")
    assert [entry.casino_id for entry in entries] == sorted([casino.pk, other_casino.pk])
    for entry in entries:
        assert entry.actor == user
        assert entry.actor_role == ("chef" if user else "")
        assert (entry.object_type, entry.object_id) == ("", "")
        document = json.loads(entry.document)
        assert document["payload"] == {
            "rule": "R20",
            "message": "Refusé (art. 43).",
            "status": 400,
            "method": "POST",
            "path": "/api/v1/counts/",
        }
        assert (document["actor"], document["role"]) == ("chef" if user else "", entry.actor_role)
