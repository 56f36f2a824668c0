"""The journal: canonical form, chain, append-only database, tamper detection (R23)."""

import datetime
from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction

from cashbox import services
from cashbox.models import Count
from casino.audit.journal import GENESIS, canonical, chain_hash
from casino.audit.verification import verify_chain
from casino.models import Alert, JournalEntry
from tests.conftest import PASSWORD, as_owner
from tests.helpers.cash_helpers import chips_for, post_advance, post_final_count
from tests.helpers.guard_helpers import drop_guard

pytestmark = pytest.mark.django_db


def test_r23_the_canonical_form_is_frozen_by_a_test_vector():
    document = {
        "casino": 1,
        "sequence": 1,
        "at": datetime.datetime(2026, 11, 29, 14, 30, 0, 123456, tzinfo=datetime.UTC),
        "actor": "directeur",
        "role": "directeur",
        "action": "cashbox.advance.create",
        "object_type": "cashbox.advance",
        "object_id": "7",
        "tableau": 3,
        "payload": {"amount": Decimal("8000.00"), "chips": {"100.00": 80}, "note": "été"},
    }
    expected = (
        '{"action":"cashbox.advance.create","actor":"directeur","at":"2026-11-29T14:30:00.123456Z","casino":1,'
        '"object_id":"7","object_type":"cashbox.advance","payload":{"amount":"8000.00","chips":{"100.00":80},'
        '"note":"été"},"role":"directeur","sequence":1,"tableau":3}'
    )
    assert canonical(document) == expected.encode()
    assert chain_hash(GENESIS, canonical(document)) == (
        "a5816cea9284537481f09c3191da79b8c5942277c3676115f50ad05e293b6471"
    )


def chain(casino):
    return list(
        JournalEntry.objects.filter(casino=casino)
        .order_by("sequence")
        .values_list("sequence", "previous_hash", "hash", "document")
    )


def test_r23_every_regulated_action_is_journaled_in_a_gapless_chain(api, cash_staff, open_day, boule_tableau, casino):
    post_advance(api, cash_staff["chef"], boule_tableau, open_day)
    actions = list(JournalEntry.objects.filter(casino=casino).values_list("action", flat=True))
    for action in (
        "tables.tableau.create",
        "seances.opening.create",
        "seances.seance.change",
        "cashbox.signature.create",
        "cashbox.advance.create",
    ):
        assert action in actions, action
    sequences = list(JournalEntry.objects.filter(casino=casino).order_by("sequence").values_list("sequence", flat=True))
    assert sequences == list(range(1, len(sequences) + 1))
    assert verify_chain(chain(casino)) == []
    advance_entry = JournalEntry.objects.get(casino=casino, action="cashbox.advance.create")
    assert advance_entry.actor.username == "chef" and advance_entry.tableau_number == 1
    assert '"amount":"8000.00"' in advance_entry.document


def test_r23_a_refused_attempt_is_journaled_with_its_rule(api, cash_staff, open_day, boule_tableau, casino):
    post_advance(api, cash_staff["chef"], boule_tableau, open_day)
    refused = post_advance(api, cash_staff["chef"], boule_tableau, open_day, kind="top_up", chips=chips_for("100"))
    assert refused.status_code == 400
    entry = JournalEntry.objects.filter(casino=casino, action="refusal").get()
    assert '"rule":"R15"' in entry.document and entry.actor.username == "chef"
    assert verify_chain(chain(casino)) == []


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE casino_journalentry SET action = 'x'",
        "DELETE FROM casino_journalentry",
        "UPDATE cashbox_count SET amount = 1",
        "DELETE FROM cashbox_count",
        "UPDATE cashbox_advance SET amount = 1",
        "DELETE FROM seances_opening",
    ],
)
def test_r23_the_database_refuses_to_change_or_delete_records(api, cash_staff, open_day, boule_tableau, statement):
    post_advance(api, cash_staff["chef"], boule_tableau, open_day)
    post_final_count(api, cash_staff["chef"], boule_tableau, open_day, "9000")
    assert Count.objects.exists()
    with pytest.raises(IntegrityError, match="r23_append_only"):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement)


def test_r23_postgresql_refuses_truncate(api, cash_staff, open_day, boule_tableau):
    if connection.vendor != "postgresql":
        pytest.skip("TRUNCATE exists only on PostgreSQL")
    with connection.cursor() as cursor:
        # Django's foreign keys are deferred: settle them, or PostgreSQL refuses TRUNCATE for that reason first.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    # As the owner (the application's role may not even truncate): the trigger is what refuses.
    with pytest.raises(IntegrityError, match="r23_append_only"), as_owner(connection):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("TRUNCATE casino_journalentry CASCADE")


def test_r23_editing_behind_the_databases_back_is_caught_at_the_exact_entry(
    api, cash_staff, open_day, boule_tableau, casino
):
    from casino.tasks import verify_casino_journal

    post_advance(api, cash_staff["chef"], boule_tableau, open_day)
    target = JournalEntry.objects.get(casino=casino, action="cashbox.advance.create")
    drop_guard("casino_journalentry")
    tampered = target.document.replace('"amount":"8000.00"', '"amount":"6000.00"')
    with connection.cursor() as cursor:
        cursor.execute("UPDATE casino_journalentry SET document = %s WHERE id = %s", [tampered, target.pk])
    problems = verify_chain(chain(casino))
    assert problems and problems[0][0] == target.sequence and "modifiée" in problems[0][1]
    assert verify_casino_journal(casino.pk) >= 1
    alert = Alert.objects.get(kind="journal")
    assert f"n° {target.sequence}" in alert.message


def test_r23_a_deleted_entry_is_named_by_its_sequence_number():
    entries = []
    previous = GENESIS
    for sequence in range(1, 6):
        body = canonical({"sequence": sequence})
        digest = chain_hash(previous, body)
        entries.append((sequence, previous, digest, body))
        previous = digest
    assert verify_chain(entries) == []
    deleted = entries[:2] + entries[3:]
    assert verify_chain(deleted)[0][0] == 3
    swapped = entries[:1] + [entries[2], entries[1]] + entries[3:]
    assert verify_chain(swapped)[0][0] == 2


@pytest.mark.usefixtures("seance_of_today")  # limits are fixed once a séance of the day is open (R30)
def test_r23_a_refused_form_is_journaled_with_its_rule(as_user, director, boule_tableau, casino):
    from seances.models import GamingDay
    from tests.helpers.openings import staff

    staff(boule_tableau)  # R31: the séance's roster serves the tableau
    url = f"/seances/tableaux/{boule_tableau.pk}/ouvrir/"
    data = {
        "gaming_day": GamingDay.date_at(casino).isoformat(),
        "minimum": "2.00",
        "max_plein": "201",
        "max_chances": "400",
    }
    assert as_user(director).post(url, data).status_code == 400
    entry = JournalEntry.objects.get(casino=casino, action="refusal")
    assert '"rule":"R12"' in entry.document and '"status":400' in entry.document


def test_r23_an_edit_of_a_filter_column_alone_is_named_at_its_entry(api, cash_staff, open_day, boule_tableau, casino):
    from casino.audit.verification import verify_casino

    post_advance(api, cash_staff["chef"], boule_tableau, open_day)
    assert verify_casino(casino)[1] == []
    target = JournalEntry.objects.get(casino=casino, action="cashbox.advance.create")
    drop_guard("casino_journalentry")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE casino_journalentry SET action = 'cashbox.advance.view' WHERE id = %s", [target.pk])
    problems = verify_casino(casino)[1]
    assert problems[0][0] == target.sequence and "action" in problems[0][1]


# The journal as a person reads it (issue 14).


def test_the_journal_page_names_actions_in_french_and_filters_by_them(
    as_user, regulator, cash_staff, api, open_day, boule_tableau
):
    from tests.helpers.cash_helpers import post_advance

    post_advance(api, cash_staff["chef"], boule_tableau, open_day)
    client = as_user(regulator)

    page = client.get("/journal/").content.decode()
    assert "Avance initiale enregistrée" in page and "heure de Paris (UTC+" in page
    assert '<option value="cashbox.advance.create">Avance : création</option>' in page

    filtered = client.get("/journal/?action=cashbox.advance.create")
    assert [entry.action for entry in filtered.context["page"]] == ["cashbox.advance.create"]


def test_the_journal_date_filter_takes_whole_days_in_paris_time(as_user, regulator, casino):
    import datetime

    from django.utils import timezone

    from casino.audit.journal import append

    # 23:30 in Paris on 1 March is 22:30 UTC the same day; 00:30 in Paris on 2 March is 23:30 UTC on 1 March.
    paris = timezone.get_default_timezone()
    late = datetime.datetime(2026, 3, 1, 23, 30, tzinfo=paris)
    after_midnight = datetime.datetime(2026, 3, 2, 0, 30, tzinfo=paris)
    append(casino.pk, "refusal", at=late)
    append(casino.pk, "refusal", at=after_midnight)

    response = as_user(regulator).get("/journal/?from=2026-03-01&to=2026-03-01")

    assert [entry.recorded_at for entry in response.context["page"]] == [late]


def test_the_journal_s_page_links_keep_the_filters_whatever_they_are_named(as_user, regulator, casino):
    from casino.audit.journal import append

    for _ in range(120):
        append(casino.pk, "refusal")
    client = as_user(regulator)
    first = client.get("/journal/", {"action": "refusal", "items": "x", "page": "1"}).content.decode()
    assert 'href="?action=refusal&amp;items=x&amp;page=2"' in first
    second = client.get("/journal/", {"action": "refusal", "items": "x", "page": "2"})
    assert second.status_code == 200
    assert 'href="?action=refusal&amp;items=x&amp;page=1"' in second.content.decode()
    assert len(second.context["page"]) == 20  # the 120 refusals, 100 a page
    assert 'href="?page=2"' in client.get("/journal/").content.decode()


def test_a_nul_byte_in_a_text_filter_of_the_journal_page_matches_nothing(as_user, regulator, casino):
    """PostgreSQL refuses a NUL byte in any text it is sent, and no stored text holds one: the page lists nothing."""
    client = as_user(regulator)
    for name in ("actor", "action"):
        response = client.get("/journal/", {name: "ré\x00fus"})
        assert response.status_code == 200 and len(response.context["page"]) == 0
    assert len(client.get("/journal/").context["page"]) > 0


def test_a_journal_filter_that_cannot_be_read_is_said_not_silently_dropped(as_user, regulator, casino):
    """An inspector who asked for 30 February, or tableau « dix », is told that this filter was not applied."""
    from casino.audit.journal import append

    append(casino.pk, "refusal")
    client = as_user(regulator)
    response = client.get("/journal/", {"from": "2026-02-30", "to": "hier", "tableau": "dix"})
    page = response.content.decode()
    assert response.status_code == 200 and len(response.context["page"]) > 0
    assert (
        "Filtre ignoré : « 2026-02-30 » n&#x27;est pas une date (du) ; « hier » n&#x27;est pas une date (au) ; "
        "« dix » n&#x27;est pas un numéro de tableau. Les entrées ci-dessous ne tiennent pas compte de ce filtre."
    ) in page
    assert "Filtre ignoré" not in client.get("/journal/", {"from": "2026-03-01", "tableau": "3"}).content.decode()
    # A value shown back is escaped like any other.
    assert "<script>" not in client.get("/journal/", {"to": "<script>"}).content.decode()


def test_r23_the_correction_of_a_count_is_filed_under_its_tableau(api, cash_staff, open_day, boule_tableau, casino):
    # The regulator reads the journal by tableau: a count's correction is the tableau's as much as the count.
    post_advance(api, cash_staff["chef"], boule_tableau, open_day)
    counted = post_final_count(api, cash_staff["chef"], boule_tableau, open_day, "9000")
    assert counted.status_code == 201, counted.json()
    count = Count.objects.get(kind="final")
    services.correct(
        cash_staff["chef"], count, chips_for("8900"), "Erreur", "huit mille neuf cents euros", "directeur", PASSWORD
    )
    entry = JournalEntry.objects.get(casino=casino, action="cashbox.correction.create")
    assert entry.tableau_number == boule_tableau.number
