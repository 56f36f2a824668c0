"""The situation mensuelle (modèle 5): the previous month's results, séances held and not held, registers with their
signatures and rectificatifs, corrections, interruptions and alerts; signed by the director; an alert on the 3rd
when it is not (R26)."""

import datetime

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from books import services as book_services
from books.models import MonthlyStatement
from books.statements import content_hash, next_month, previous_month, statement, statement_of
from books.tasks import check_monthly_statements
from cashbox import services
from cashbox.models import ControlRegister, Count, Interruption, RegisterAmendment, Signature
from casino.models import Alert
from casino.rules import ARTICLES, InvalidTransition, RoleForbidden, cite
from seances.models import GamingDay, Seance
from tests.conftest import PASSWORD
from tests.helpers.books_helpers import day_of_play, rectified_day, signed_register, staff_fixture  # noqa: F401
from tests.helpers.cash_helpers import chips_for, main_box

pytestmark = pytest.mark.django_db

URL = "/api/v1/situations/2025/1/"


def at(day, hour=15):
    return time_machine.travel(datetime.datetime(2025, *day, hour, 0, tzinfo=datetime.UTC), tick=False)


@pytest.fixture
def january(staff, casino, boule_tableau, vingt_trois_tableau):
    """15 January 2025: the afternoon played (results 1 000 and 0), the evening not held; the register signed, then
    corrected by a rectificatif signed too; an alert raised that day."""
    with at((1, 16)):
        day = day_of_play(
            staff,
            casino,
            datetime.date(2025, 1, 15),
            {"apres_midi": [(boule_tableau, "9000"), (vingt_trois_tableau, "10000")]},
            ["soiree"],
        )
        rectified_day(staff, day, "8900", "huit mille neuf cents euros")
        Alert.objects.create(casino=casino, rule="R18", kind="test", key="k", message="Interruption trop longue")
    return day


def second_rectificatif(staff):
    """January's vingt-trois final count corrected to 10 100 €, and the rectificatif n° 2 that follows signed by two."""
    count = Count.objects.get(kind="final", cashbox__tableau__game="vingt_trois")
    services.correct(staff["chef"], count, chips_for("10100"), "Plaque", "dix mille cent euros", "directeur", PASSWORD)
    amendment = RegisterAmendment.objects.get(number=2)
    services.sign_amendment(amendment, "directeur", PASSWORD)
    services.sign_amendment(amendment, "codir", PASSWORD)


def sign(api, user, signer="directeur", password=PASSWORD):
    api.force_authenticate(user)
    return api.post(URL, {"signer": signer, "password": password}, format="json")


def test_r26_the_statement_of_the_previous_month_carries_every_book(api, staff, january):
    with at((2, 2)):
        api.force_authenticate(staff["director"])
        body = api.get(URL).json()
    document = body["statement"]
    assert document["results"] == [
        {"date": "2025-01-15", "games": {"boule": "900.00", "vingt_trois": "0.00"}, "total": "900.00"}
    ]
    assert document["month_total"] == "900.00"
    held = {(s["kind"], s["held"], s["not_held_reason"]) for s in document["seances"]}
    assert ("Séance de la soirée", False, "Fermeture exceptionnelle") in held
    (register,) = document["registers"]
    assert register["rectified"] and register["carried"] == "rectificatif n° 1"
    assert register["first_signature"]["signer"] and register["rectificatifs"][0]["difference"] == "-100.00"
    assert document["corrections"][0]["reason"] == "Erreur"
    assert [a["message"] for a in document["alerts"]] == ["Interruption trop longue"]
    assert body["signed"] is False and len(body["content_hash"]) == 64


def test_r26_the_director_signs_the_hash_of_the_content(api, staff, january):
    with at((2, 3)):
        response = sign(api, staff["director"])
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["signed"] is True and body["signatures"][0]["matches"] is True
    stored = MonthlyStatement.objects.get()
    assert stored.content_hash == body["content_hash"]
    assert body["content_hash"] in Signature.objects.get(purpose="monthly_statement").statement


def test_r26_not_before_the_first_of_the_next_month(api, staff, january):
    with at((1, 31)):
        before = MonthlyStatement.objects.count()
        response = sign(api, staff["director"])
    assert response.status_code == 409 and response.json()["code"] == "R26"
    assert ARTICLES["R26"] in response.json()["message"]
    assert MonthlyStatement.objects.count() == before


def test_r26_only_the_director_signs(api, staff, january):
    with at((2, 3)):
        by_codir = sign(api, staff["director"], signer="codir")
        assert by_codir.status_code == 403 and by_codir.json()["code"] == "R26"
        assert sign(api, staff["codir"], signer="codir").status_code == 403
        wrong = sign(api, staff["director"], password="wrong")
        assert wrong.status_code == 400 and wrong.json()["code"] == "R26"
    assert not MonthlyStatement.objects.exists()


def test_r26_a_signed_statement_is_signed_again_only_when_its_content_changed(api, staff, january):
    with at((2, 3)):
        assert sign(api, staff["director"]).status_code == 201
        again = sign(api, staff["director"])
        assert again.status_code == 409 and again.json()["code"] == "R26"
        second_rectificatif(staff)
        api.force_authenticate(staff["director"])
        changed = api.get(URL).json()
        assert changed["signed"] is False and changed["signatures"][0]["matches"] is False
        assert changed["statement"]["month_total"] == "1000.00"
        assert sign(api, staff["director"]).status_code == 201
        # Both signed at the same instant: the later one, on the new content, comes first and the statement is signed.
        again = api.get(URL).json()
        assert again["signed"] is True and [s["matches"] for s in again["signatures"]] == [True, False]
    assert MonthlyStatement.objects.count() == 2


def test_r26_the_month_after_and_the_month_before_across_the_new_year():
    assert [next_month(2024, 12), next_month(2025, 1), next_month(2025, 11)] == [(2025, 1), (2025, 2), (2025, 12)]
    assert [
        previous_month(datetime.date(*day)) for day in ((2025, 1, 1), (2025, 1, 31), (2025, 3, 1), (2025, 12, 31))
    ] == [
        (2024, 12),
        (2024, 12),
        (2025, 2),
        (2025, 11),
    ]


def test_r26_a_statement_lists_the_signatures_of_its_casino_and_month_only(api, staff, casino, other_casino, january):
    with at((2, 3)):
        assert sign(api, staff["director"]).status_code == 201
    signed = statement(casino, 2025, 1)
    assert (signed["label"], signed["signed"], len(signed["signatures"])) == ("janvier 2025", True, 1)
    for elsewhere, year, month, label in (
        (casino, 2025, 2, "février 2025"),
        (casino, 2024, 1, "janvier 2024"),
        (casino, 2024, 12, "décembre 2024"),
        (other_casino, 2025, 1, "janvier 2025"),
    ):
        other = statement(elsewhere, year, month)
        assert (other["label"], other["signed"], other["signatures"]) == (label, False, [])


def test_r26_the_list_of_statements_shows_a_month_signed_only_in_the_casino_that_signed_it(
    api, as_user, staff, casino, other_casino, outsider, january
):
    with at((2, 3)):
        assert sign(api, staff["director"]).status_code == 201
        ours = as_user(staff["director"]).get(f"/livres/situations/?casino={casino.pk}")
        theirs = as_user(outsider).get(f"/livres/situations/?casino={other_casino.pk}")

    january_2025 = {"year": 2025, "month": 1, "label": "janvier 2025"}
    assert ours.context["months"][0] == {**january_2025, "signed": True}
    assert theirs.context["months"][0] == {**january_2025, "signed": False}
    assert 'janvier 2025</a> — <span class="red">non signée</span>' in theirs.content.decode()


def test_r26_an_alert_on_the_3rd_when_the_statement_is_not_signed(api, staff, casino, january):
    with at((2, 2)):
        assert check_monthly_statements() == 0
    with at((2, 3)):
        assert check_monthly_statements() == 1
        assert check_monthly_statements() == 0
    alert = Alert.objects.get(kind="statement_unsigned")
    assert alert.rule == "R26" and ARTICLES["R26"] in alert.message and "avant le 5" in alert.message


def test_r26_no_alert_for_a_month_whose_gaming_days_held_no_seance(casino):
    """A day the floor's pages read is recorded without séances: a month of such days has nothing to state."""
    GamingDay.objects.create(casino=casino, date=datetime.date(2025, 1, 20))
    with at((2, 3)):
        assert check_monthly_statements() == 0
    assert not Alert.objects.exists()


def test_r26_another_casino_s_signed_statement_does_not_silence_this_casino_s_alert(
    staff, casino, other_casino, outsider, january
):
    """Each casino signs its own statement (R26): the group's other casino signing its January is no answer here."""
    with at((2, 1)):
        book_services.sign_statement(outsider, other_casino, 2025, 1, "directeur2", PASSWORD)
    assert MonthlyStatement.objects.filter(casino=other_casino, year=2025, month=1).exists()
    with at((2, 3)):
        assert check_monthly_statements() == 1
    alert = Alert.objects.get(kind="statement_unsigned")
    assert (alert.casino, alert.key) == (casino, "statement-unsigned:2025-01")


def test_r26_no_alert_when_the_statement_is_signed_in_time(api, staff, january):
    with at((2, 1)):
        assert sign(api, staff["director"]).status_code == 201
    with at((2, 4)):
        assert check_monthly_statements() == 0


def test_r26_the_statement_through_the_pages(as_user, staff, regulator, casino, january):
    with at((2, 3)):
        page = as_user(regulator).get(f"/livres/situations/2025/1/?casino={casino.pk}")
        assert page.status_code == 200 and "Fermeture exceptionnelle" in page.content.decode()
        assert as_user(regulator).post("/livres/situations/2025/1/", {}).status_code == 403
        client = as_user(staff["director"])
        assert "janvier 2025" in client.get("/livres/situations/").content.decode()
        refused = client.post("/livres/situations/2025/1/", {"signer": "directeur", "password": "wrong"})
        assert refused.status_code == 400
        signed = client.post("/livres/situations/2025/1/", {"signer": "directeur", "password": PASSWORD})
        assert signed.status_code == 302
        assert "Non signée" not in client.get("/livres/situations/2025/1/").content.decode()
    assert timezone.now().year >= 2026


# The service's refusals and what it writes, word for word (books.services) -------------------------------------


def test_r26_the_signed_statement_names_its_month_its_casino_and_its_content_s_hash(staff, casino, january):
    with at((2, 1)):
        statement = book_services.sign_statement(staff["codir"], casino, 2025, 1, "directeur", PASSWORD)
    statement.refresh_from_db()
    digest = content_hash(statement_of(casino, 2025, 1))
    assert (statement.casino, statement.year, statement.month, statement.content_hash) == (casino, 2025, 1, digest)
    assert statement.signed_by == staff["director"] == statement.signature.signer
    assert statement.signature.purpose == Signature.Purpose.MONTHLY_STATEMENT
    assert statement.signature.statement == (
        f"Situation mensuelle de 01/2025 — {casino.name} — contenu SHA-256 {digest}"
    )


def assert_unchanged_refusal(refusal):
    assert (refusal.value.rule, refusal.value.message) == (
        "R26",
        cite("R26", "La situation de 01/2025 est déjà signée, et inchangée depuis"),
    )


def test_r26_an_unchanged_statement_is_not_signed_twice_in_words(staff, casino, january):
    with at((2, 3)):
        book_services.sign_statement(staff["director"], casino, 2025, 1, "directeur", PASSWORD)
        before = Signature.objects.count()
        with pytest.raises(InvalidTransition) as refusal:
            book_services.sign_statement(staff["director"], casino, 2025, 1, "directeur", PASSWORD)
    assert_unchanged_refusal(refusal)
    assert MonthlyStatement.objects.count() == 1 and Signature.objects.count() == before


def test_r26_a_statement_signed_again_on_its_new_content_is_not_signed_a_third_time(staff, casino, january):
    # The latest signature decides whether the content is unchanged, not the first one (on the content before).
    with at((2, 3)):
        first = book_services.sign_statement(staff["director"], casino, 2025, 1, "directeur", PASSWORD)
        second_rectificatif(staff)
    with at((2, 4)):
        second = book_services.sign_statement(staff["director"], casino, 2025, 1, "directeur", PASSWORD)
        assert second.content_hash != first.content_hash
        before = Signature.objects.count()
        with pytest.raises(InvalidTransition) as refusal:
            book_services.sign_statement(staff["director"], casino, 2025, 1, "directeur", PASSWORD)
    assert_unchanged_refusal(refusal)
    assert MonthlyStatement.objects.count() == 2 and Signature.objects.count() == before


def test_r26_a_month_is_signed_from_the_first_of_the_next_in_paris_and_by_the_direction_only_in_words(staff, casino):
    before = Signature.objects.count()
    # 31 January 2025 at 22:00 UTC is 23:00 in Paris: January is not over, December is.
    with at((1, 31), hour=22):
        with pytest.raises(InvalidTransition) as refusal:
            book_services.sign_statement(staff["director"], casino, 2025, 1, "directeur", PASSWORD)
        assert (refusal.value.rule, refusal.value.message) == (
            "R26",
            cite("R26", "La situation de 01/2025 se signe à partir du 01/02/2025, le mois écoulé"),
        )
        book_services.sign_statement(staff["director"], casino, 2024, 12, "directeur", PASSWORD)
    # Midnight in Paris: 1 February, January's statement is signed, by the direction only.
    with at((1, 31), hour=23):
        with pytest.raises(RoleForbidden) as refusal:
            book_services.sign_statement(staff["chef"], casino, 2025, 1, "directeur", PASSWORD)
        assert (refusal.value.rule, refusal.value.message) == (
            "R26",
            cite("R26", "Seule la direction présente la situation mensuelle à la signature"),
        )
        with pytest.raises(ValidationError) as unknown:
            book_services.sign_statement(staff["director"], casino, 2025, 13, "directeur", PASSWORD)
        assert [(e.code, e.message) for e in unknown.value.error_dict["month"]] == [
            ("R26", cite("R26", "Mois inconnu"))
        ]
        book_services.sign_statement(staff["director"], casino, 2025, 1, "directeur", PASSWORD)
    assert [(s.year, s.month) for s in MonthlyStatement.objects.order_by("year", "month")] == [(2024, 12), (2025, 1)]
    assert Signature.objects.count() == before + 2


def test_r26_the_statement_carries_the_alerts_of_its_months_first_and_last_day_and_no_others(casino):
    # In Paris time: 31 December 23:50 and 1 February 00:30 are not January's; 1 January 00:10 and 31 January 23:30 are.
    # Recorded out of order (the last day's first): the statement lists them in the order they were raised.
    for moment, message in [
        ((2025, 1, 31, 22, 30), "31 janvier"),
        ((2024, 12, 31, 22, 50), "31 décembre"),
        ((2024, 12, 31, 23, 10), "1er janvier"),
        ((2025, 1, 31, 23, 30), "1er février"),
    ]:
        with time_machine.travel(datetime.datetime(*moment, tzinfo=datetime.UTC), tick=False):
            Alert.objects.create(casino=casino, rule="R18", kind="test", key=message, message=message)
    assert [alert["message"] for alert in statement_of(casino, 2025, 1)["alerts"]] == ["1er janvier", "31 janvier"]


def test_r26_a_seance_open_or_still_planned_is_not_held(casino, open_day):
    # Today's afternoon séance is open, the evening one planned: neither is held (yet); the statement says so.
    date = open_day.gaming_day.date
    seances = {s["kind"]: (s["state"], s["held"]) for s in statement_of(casino, date.year, date.month)["seances"]}
    assert seances == {"Séance de l'après-midi": ("Ouverte", False), "Séance de la soirée": ("Prévue", False)}


def full_interruption(tableau, seance, by, **times):
    """An interruption with its count of nothing, written as the books read it (`times`: started_at, resumed_at)."""
    count = Count.objects.create(
        cashbox=main_box(tableau),
        seance=seance,
        kind="interruption",
        chips={},
        amount=0,
        advances_total=0,
        counted_by=by,
        recorded_by=by,
    )
    return Interruption.objects.create(
        tableau=tableau, seance=seance, kind=Interruption.Kind.FULL, count=count, logged_by=by, **times
    )


def test_r26_the_statement_carries_nothing_of_another_casino(casino, open_day, elsewhere, outsider, other_casino):
    # The other casino's séance of the same day is interrupted and raises an alert: neither is in our statement.
    theirs = Seance.objects.filter(gaming_day__casino=other_casino).order_by("planned_start").first()
    full_interruption(elsewhere, theirs, outsider)
    Alert.objects.create(casino=other_casino, rule="R18", kind="test", key="ailleurs", message="Ailleurs")
    date = open_day.gaming_day.date
    ours = statement_of(casino, date.year, date.month)
    assert (ours["interruptions"], ours["alerts"], len(ours["seances"])) == ([], [], 2)
    other = statement_of(other_casino, date.year, date.month)
    assert [i["tableau"] for i in other["interruptions"]] == [elsewhere.number]
    assert [a["message"] for a in other["alerts"]] == ["Ailleurs"]


def test_r26_the_statement_s_content_word_for_word(staff, casino, january):
    """Every field of modèle 5 for January 2025: the content the director signs the hash of (times in Paris)."""
    signed = "2025-01-16T16:00:00+01:00"
    director = {"signer": "Directeur", "role": "Directeur responsable", "signed_at": signed}
    codir = {"signer": "Codir", "role": "Membre du comité de direction", "signed_at": signed}
    assert statement_of(casino, 2025, 1) == {
        "casino": "Casino Test",
        "month": "2025-01",
        "results": [{"date": "2025-01-15", "games": {"boule": "900.00", "vingt_trois": "0.00"}, "total": "900.00"}],
        "month_total": "900.00",
        "seances": [
            {
                "date": "2025-01-15",
                "kind": "Séance de l'après-midi",
                "state": "Close",
                "held": True,
                "not_held_reason": "",
            },
            {
                "date": "2025-01-15",
                "kind": "Séance de la soirée",
                "state": "Non tenue",
                "held": False,
                "not_held_reason": "Fermeture exceptionnelle",
            },
        ],
        "registers": [
            {
                "date": "2025-01-15",
                "total": "1000.00",
                "total_in_words": "mille euros",
                "first_signature": director,
                "second_signature": codir,
                "rectified": True,
                "rectificatifs": [
                    {
                        "number": 1,
                        "total": "900.00",
                        "total_in_words": "neuf cents euros",
                        "first_signature": director,
                        "second_signature": codir,
                        "difference": "-100.00",
                        "reason": "Erreur",
                    }
                ],
                "carried": "rectificatif n° 1",
            }
        ],
        "corrections": [
            {
                "recorded_at": signed,
                "original": "Comptage de fin de séance — caisse n° 1",
                "previous_amount": "9000.00",
                "amount": "8900.00",
                "reason": "Erreur",
                "approved_by": "Directeur",
            }
        ],
        "interruptions": [],
        "alerts": [{"raised_at": signed, "rule": "R18", "message": "Interruption trop longue", "acknowledged": False}],
    }


def test_r26_the_interruptions_in_the_statement_word_for_word(
    casino, open_day, boule_tableau, vingt_trois_tableau, chef
):
    """One interruption resumed and one still going, in the order they began (not as recorded), times in Paris."""
    date = open_day.gaming_day.date
    start = timezone.make_aware(datetime.datetime.combine(date, datetime.time(15, 5)))
    for tableau, minutes, resumed in ((vingt_trois_tableau, 30, None), (boule_tableau, 0, 20)):
        began = start + datetime.timedelta(minutes=minutes)
        resumed_at = None if resumed is None else began + datetime.timedelta(minutes=resumed)
        full_interruption(tableau, open_day, chef, started_at=began, resumed_at=resumed_at)
    day = date.isoformat()
    assert statement_of(casino, *previous_month(date))["interruptions"] == []
    assert statement_of(casino, date.year, date.month)["interruptions"] == [
        {
            "date": day,
            "tableau": boule_tableau.number,
            "kind": "Interruption avec comptage",
            "started_at": f"{day}T15:05:00+01:00",
            "resumed_at": f"{day}T15:25:00+01:00",
        },
        {
            "date": day,
            "tableau": vingt_trois_tableau.number,
            "kind": "Interruption avec comptage",
            "started_at": f"{day}T15:35:00+01:00",
            "resumed_at": None,
        },
    ]


def test_r26_the_statement_carries_the_registers_of_its_casino_only(staff, casino, other_casino, outsider, january):
    ControlRegister.objects.create(
        gaming_day=GamingDay.objects.create(casino=other_casino, date=datetime.date(2025, 1, 20)),
        total="500.00",
        total_in_words="cinq cents euros",
        drawn_up_by=outsider,
    )
    assert [register["date"] for register in statement_of(casino, 2025, 1)["registers"]] == ["2025-01-15"]
    assert [register["date"] for register in statement_of(other_casino, 2025, 1)["registers"]] == ["2025-01-20"]


def test_r26_the_statement_is_read_in_as_many_queries_whatever_its_registers_and_rectificatifs(
    staff, casino, boule_tableau, vingt_trois_tableau, january, django_assert_num_queries
):
    with CaptureQueriesContext(connection) as one_register:
        statement_of(casino, 2025, 1)
    with at((1, 21)):
        day = day_of_play(
            staff,
            casino,
            datetime.date(2025, 1, 20),
            {"apres_midi": [(boule_tableau, "9000"), (vingt_trois_tableau, "10000")]},
            ["soiree"],
        )
        rectified_day(staff, day, "8800", "huit mille huit cents euros")
    with django_assert_num_queries(len(one_register)):
        document = statement_of(casino, 2025, 1)
    assert [register["carried"] for register in document["registers"]] == ["rectificatif n° 1", "rectificatif n° 1"]


@pytest.mark.parametrize(("year", "month"), [(2000, 1), (2100, 12)])
def test_r26_a_statement_is_of_a_month_of_2000_to_2100(casino, year, month):
    assert statement_of(casino, year, month)["month"] == f"{year}-{month:02d}"


@pytest.mark.parametrize(("year", "month"), [(1999, 12), (2101, 1), (2025, 0), (2025, 13)])
def test_r26_a_month_outside_2000_to_2100_is_refused_word_for_word(casino, year, month):
    with pytest.raises(ValidationError) as refusal:
        statement_of(casino, year, month)
    assert [(e.code, e.message) for e in refusal.value.error_dict["month"]] == [("R26", cite("R26", "Mois inconnu"))]


def test_r26_the_statement_names_its_month_as_aaaa_mm_with_the_leading_zero(api, staff, casino):
    with at((2, 2)):
        api.force_authenticate(staff["director"])
        january = api.get(URL).json()
        september = api.get("/api/v1/situations/2024/9/").json()
    assert (january["month"], september["month"]) == ("2025-01", "2024-09")
