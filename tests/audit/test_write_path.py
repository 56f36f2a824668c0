"""The write path (issue 15): what a signed cash write and a spin cost, and the journal's chain under concurrent
appends (R23). On PostgreSQL only: the query counts are those of production (the journal appends in one
statement there) and the races need real row locks; skipped elsewhere, a failure when CI_REQUIRE_SERVICES=1."""

import json
import threading

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from casino.audit import journal, verification
from casino.models import Casino, JournalEntry
from seances.spins import services as spins
from tests.conftest import PASSWORD, require_postgres
from tests.helpers.cash_helpers import main_box, post_advance
from tests.helpers.passkey_helpers import enrolled_keys, use_keys

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

# Measured on PostgreSQL, as production runs a request (its own transaction, ATOMIC_REQUESTS), authentication aside
# (an API token costs one query more: the token, its user, their employee and permissions). BEGIN and COMMIT count;
# the service joins the request's transaction, without a savepoint (casino.web.transactions). A top-up: the request's cash
# box and séance (with its day), the people and the signer with the lockout of their signature (one query), the
# cash box's lock, its state,
# the signature, the advance and their history rows, both journal entries (one statement). The count reads its
# advances with its state and its witnesses' places on the roster with the people (R4, R20), and adds the insert of
# its witnesses. The spin: the request's apparatus and séance, the roster's lock, the séance and day,
# the interruptions, the launcher with their place on the roster, the launcher the order designates now (R4: one
# query for a roster without changes, seances.rosters.services.designated_launcher), the last spin, the spin, its
# history row, its journal entry.
TOP_UP_QUERIES = 12
COUNT_QUERIES = 13
SPIN_QUERIES = 13
# Signed with keys (R28), issue 39: the first step reads the request's cash box (with its tableau and casino) and
# séance, the people, the signer's keys and inserts the challenge, one for each person who signs; the write then
# consumes each challenge and locks its key in one statement, saves the key's counter with its history row, and
# writes the signature and its history row, for each person who signs (a final count: the croupier, the caissier
# and the director, R20), in place of the password's lockout.
TOP_UP_KEY_OPTIONS_QUERIES = 7
TOP_UP_KEY_QUERIES = 15
COUNT_KEY_OPTIONS_QUERIES = 12
COUNT_KEY_QUERIES = 26


@pytest.fixture(autouse=True)
def postgres_only():
    require_postgres()


def chain_problems(casino_id):
    rows = JournalEntry.objects.filter(casino_id=casino_id).order_by("sequence")
    return verification.verify_chain(rows.values_list("sequence", "previous_hash", "hash", "document"))


def within_budget(budget, call):
    """Run the request, print and check the queries it cost."""
    with CaptureQueriesContext(connection) as captured:
        response = call()
    spent = len(captured.captured_queries)
    print(f"queries: {spent}")
    listing = "\n".join(query["sql"][:150] for query in captured.captured_queries)
    assert spent <= budget, f"{spent} queries, budget {budget}:\n{listing}"
    return response


def advance_body(tableau, seance, kind):
    chips = {"100.00": int(tableau.casino.advance_amount(tableau.game) // 100)}
    return {
        "cashbox": main_box(tableau).pk,
        "seance": seance.pk,
        "kind": kind,
        "chips": chips,
        "counted_by": "croupier1",
        "brought_by": "caissier",
        "signer": "directeur",
        "password": PASSWORD,
    }


def test_a_top_up_through_the_api_stays_within_its_query_budget(cash_staff, open_day, boule_tableau):
    api = APIClient()
    api.force_authenticate(cash_staff["chef"])
    assert (
        api.post("/api/v1/advances/", advance_body(boule_tableau, open_day, "initial"), format="json").status_code
        == 201
    )
    body = advance_body(boule_tableau, open_day, "top_up")
    response = within_budget(TOP_UP_QUERIES, lambda: api.post("/api/v1/advances/", body, format="json"))
    assert response.status_code == 201, response.json()
    assert response.json()["corrections"] == []


def test_a_final_count_through_the_api_stays_within_its_query_budget(cash_staff, open_day, boule_tableau):
    api = APIClient()
    api.force_authenticate(cash_staff["chef"])
    assert (
        api.post("/api/v1/advances/", advance_body(boule_tableau, open_day, "initial"), format="json").status_code
        == 201
    )
    body = {
        "cashbox": main_box(boule_tableau).pk,
        "seance": open_day.pk,
        "chips": {"100.00": 90},
        "counted_by": "croupier1",
        "witnesses": ["croupier2"],
        "caissier": "caissier",
        "signer": "directeur",
        "password": PASSWORD,
    }
    response = within_budget(COUNT_QUERIES, lambda: api.post("/api/v1/counts/", body, format="json"))
    assert response.status_code == 201, response.json()
    assert response.json()["result"] == "1000.00"


def signed_with_keys(api, url, body, authenticators, options_budget, budget):
    """The two steps of a write signed with keys, each within its budget; returns the write's response."""
    options = within_budget(options_budget, lambda: api.post(f"{url}sign/options/", body, format="json"))
    assert options.status_code == 200, options.json()
    steps = options.json().get("signatures") or [{**options.json(), "field": "assertion", "signer": body["signer"]}]
    assertions = {step["field"]: authenticators[step["signer"]].assertion(step) for step in steps}
    return within_budget(budget, lambda: api.post(url, {**body, **assertions}, format="json"))


def test_a_top_up_and_a_final_count_signed_with_keys_stay_within_their_query_budgets(
    cash_staff, open_day, boule_tableau
):
    casino = boule_tableau.casino
    people = {user.username: user for user in (cash_staff["director"], cash_staff["croupier"], cash_staff["caissier"])}
    authenticators = enrolled_keys(casino, people, confirmed_by=cash_staff["codir"])
    api = APIClient()
    api.force_authenticate(cash_staff["chef"])
    assert (
        api.post("/api/v1/advances/", advance_body(boule_tableau, open_day, "initial"), format="json").status_code
        == 201
    )
    use_keys(casino)
    body = {k: v for k, v in advance_body(boule_tableau, open_day, "top_up").items() if k != "password"}
    url = "/api/v1/advances/"
    response = signed_with_keys(api, url, body, authenticators, TOP_UP_KEY_OPTIONS_QUERIES, TOP_UP_KEY_QUERIES)
    assert response.status_code == 201, response.json()
    assert response.json()["signature"]["signer"] == "directeur"
    body = {
        "cashbox": main_box(boule_tableau).pk,
        "seance": open_day.pk,
        "chips": {"100.00": 90},
        "counted_by": "croupier1",
        "witnesses": ["croupier2"],
        "caissier": "caissier",
        "signer": "directeur",
    }
    url = "/api/v1/counts/"
    response = signed_with_keys(api, url, body, authenticators, COUNT_KEY_OPTIONS_QUERIES, COUNT_KEY_QUERIES)
    assert response.status_code == 201, response.json()
    answer = response.json()
    assert answer["result"] == "-7000.00"  # 9 000 € counted, two advances of 8 000 €
    signers = [answer[column]["signer"] for column in ("counter_signature", "caissier_signature", "signature")]
    assert signers == ["croupier1", "caissier", "directeur"]


def test_a_spin_through_the_api_stays_within_its_query_budget(cash_staff, open_day, boule, monkeypatch):
    from seances import tasks

    queued = []
    # The launcher and bias checks run after the commit, off the request (a Celery task): not the spin's cost.
    monkeypatch.setattr(tasks.check_spin, "delay", queued.append)
    api = APIClient()
    api.force_authenticate(cash_staff["chef"])
    body = {"apparatus": boule.pk, "seance": open_day.pk, "launcher": "croupier1", "number": 4}
    # « Rien ne va plus » is an act of its own, before each spin (R9): not the spin's cost.
    spins.announce(cash_staff["chef"], open_day, boule)
    assert api.post("/api/v1/spins/", body, format="json").status_code == 201
    spins.announce(cash_staff["chef"], open_day, boule)
    response = within_budget(SPIN_QUERIES, lambda: api.post("/api/v1/spins/", {**body, "number": 5}, format="json"))
    assert response.status_code == 201, response.json()
    assert response.json()["sequence"] == 2 and len(queued) == 2


def test_r23_a_spin_journals_the_same_canonical_entry_as_the_frozen_form(cash_staff, open_day, boule):
    """The entry PostgreSQL hashed is the canonical document, and its hash is SHA-256(previous, LF, document)."""
    api = APIClient()
    api.force_authenticate(cash_staff["chef"])
    body = {"apparatus": boule.pk, "seance": open_day.pk, "launcher": "croupier1", "number": 4}
    spins.announce(cash_staff["chef"], open_day, boule)
    assert api.post("/api/v1/spins/", body, format="json").status_code == 201
    entry = JournalEntry.objects.filter(action="seances.spin.create").get()
    document = json.loads(entry.document)
    assert document["sequence"] == entry.sequence and document["tableau"] is None
    assert journal.canonical(document).decode() == entry.document
    assert journal.chain_hash(entry.previous_hash, entry.document.encode()) == entry.hash
    assert chain_problems(open_day.gaming_day.casino_id) == []


def at_once(calls):
    barrier = threading.Barrier(len(calls))
    errors = []

    def run(call):
        try:
            barrier.wait(timeout=10)
            call()
        except Exception as error:  # noqa: BLE001 - reported by the test
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "an append hung: deadlock?"
    assert not errors, errors


def test_r23_concurrent_appends_of_two_casinos_keep_both_chains_gap_free(casino, other_casino):
    casinos = [casino.pk, other_casino.pk]
    before = {pk: JournalEntry.objects.filter(casino_id=pk).count() for pk in casinos}

    def appender(casino_id, name):
        def call():
            for n in range(15):
                with transaction.atomic():
                    journal.append(casino_id, "bench.append", object_type="test", object_id=f"{name}-{n}")

        return call

    at_once([appender(pk, f"{pk}-{i}") for pk in casinos for i in range(2)])
    for pk in casinos:
        assert JournalEntry.objects.filter(casino_id=pk).count() == before[pk] + 30
        sequences = list(
            JournalEntry.objects.filter(casino_id=pk).order_by("sequence").values_list("sequence", flat=True)
        )
        assert sequences == list(range(1, len(sequences) + 1))
        assert chain_problems(pk) == []
        head = Casino.objects.get(pk=pk).journal_head
        last = JournalEntry.objects.filter(casino_id=pk).order_by("-sequence").first()
        assert (head.sequence, head.hash) == (last.sequence, last.hash)


def test_r23_concurrent_top_ups_of_two_cash_boxes_of_one_casino_are_both_entered_and_chained(
    cash_staff, open_day, boule_tableau, vingt_trois_tableau
):
    chef = cash_staff["chef"]
    for tableau in (boule_tableau, vingt_trois_tableau):
        assert post_advance(APIClient(), chef, tableau, open_day).status_code == 201
    answers = []

    def top_up(tableau):
        def call():
            for _ in range(3):
                answers.append(post_advance(APIClient(), chef, tableau, open_day, kind="top_up").status_code)

        return call

    at_once([top_up(boule_tableau), top_up(vingt_trois_tableau)])
    assert answers == [201] * 6
    assert chain_problems(open_day.gaming_day.casino_id) == []


def test_a_top_up_with_an_api_token_costs_one_query_more_and_its_role_still_decides(
    cash_staff, open_day, boule_tableau, regulator
):
    """The token, its user, their employee and their permissions come in one query (casino.accounts.authentication); the
    permissions it brings are the user's: a regulator's token is refused the top-up (403), a chef's is not."""
    import datetime

    from knox.models import AuthToken

    api = APIClient()
    api.force_authenticate(cash_staff["chef"])
    assert (
        api.post("/api/v1/advances/", advance_body(boule_tableau, open_day, "initial"), format="json").status_code
        == 201
    )
    body = advance_body(boule_tableau, open_day, "top_up")
    _, regulator_token = AuthToken.objects.create(regulator)
    refused = APIClient().post("/api/v1/advances/", body, format="json", HTTP_AUTHORIZATION=f"Token {regulator_token}")
    assert refused.status_code == 403, refused.json()
    # Another token of the chef, expired: swept at the chef's next authentication, as knox does.
    stale, _ = AuthToken.objects.create(cash_staff["chef"], expiry=datetime.timedelta(seconds=-1))
    _, chef_token = AuthToken.objects.create(cash_staff["chef"])
    token_api = APIClient()
    token_api.credentials(HTTP_AUTHORIZATION=f"Token {chef_token}")
    assert token_api.get("/api/v1/advances/").status_code == 200
    assert not AuthToken.objects.filter(digest=stale.digest).exists()
    response = within_budget(TOP_UP_QUERIES + 1, lambda: token_api.post("/api/v1/advances/", body, format="json"))
    assert response.status_code == 201, response.json()
