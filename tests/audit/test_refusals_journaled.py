"""Every refused write attempt of a signed-in user is journaled with its rule, message, status, method and path,
in each of the user's casinos, and only those (R23); the rule of a refusal is read from its error."""

import json

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.test import RequestFactory

from casino.audit import journal
from casino.models import JournalEntry
from casino.rules import DomainError
from casino.web import middleware
from casino.web.middleware import (
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
