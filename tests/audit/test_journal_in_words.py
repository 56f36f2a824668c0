"""The inspector's journal in words (issue 40, item 4): every entry a French sentence naming its object, refusals
with their rule, article, person and tableau, the raw codes only in the « détail technique » fold, times labelled
with their zone."""

import json
import re
from html import unescape

import pytest

from casino.accounts.security import journal
from casino.audit.labels import PARTICIPLES, agreed, noun_of
from casino.audit.views import describe
from casino.models import Employee, JournalEntry
from casino.rules import ARTICLES
from tests.accounts.test_authorization_matrix import demo  # noqa: F401
from tests.helpers.cash_helpers import post_advance, post_final_count, post_short_interruption
from tests.helpers.spin_helpers import play

pytestmark = pytest.mark.django_db

FOLD = re.compile(r'<details class="technical">.*?</details>', re.S)
FILTERS = re.compile(r'<form method="get" class="filters">.*?</form>', re.S)


def visible_rows(html):
    """The journal table's text as read without opening any fold: tags, the folds and the filter form removed."""
    table = html[html.index('<table id="journal">') : html.index("</table>")]
    return [unescape(re.sub(r"<[^>]+>", " ", FOLD.sub("", row))) for row in re.split(r"<tr[^>]*>", table)[2:]]


@pytest.fixture
def season_day(api, cash_staff, director, chef, open_day, boule_tableau, vingt_trois_tableau):
    """A day of every kind of entry: records of the floor, an account event, a refusal at a tableau."""
    assert post_advance(api, chef, boule_tableau, open_day).status_code == 201
    assert post_final_count(api, chef, boule_tableau, open_day, "500.00").status_code == 201
    assert post_short_interruption(api, chef, vingt_trois_tableau, open_day, short=False).status_code in (400, 403, 409)
    journal(Employee.objects.get(user=chef), "role_granted", director, before="", role="chef")
    return open_day


def test_no_raw_code_shows_outside_the_technical_fold_for_any_kind_of_entry(as_user, regulator, season_day):
    html = as_user(regulator).get("/journal/").content.decode()
    entries = list(JournalEntry.objects.order_by("-sequence")[:100])
    kinds = {entry.action for entry in entries}
    # The test data makes each kind the issue names: records of the floor, the join of an employee, an account
    # event, a refusal.
    assert {"cashbox.count.create", "casino.employee.join", "account.role_granted", "refusal"} <= kinds
    rows = visible_rows(html)
    assert len(rows) == len(entries)
    for entry, row in zip(entries, rows, strict=True):
        assert entry.action not in row, row
        if entry.object_type:
            assert entry.object_type not in row, row
        assert not re.search(r"#\d", row), row
        assert not re.search(r"\b[a-z]+_[a-z_]+\b", row), row  # role_granted, apres_midi, top_up…
        assert "heure de Paris (UTC+" in row
    # …and each is still there for the inspector who opens the fold.
    assert html.count('<details class="technical">') == len(entries)
    assert "<code>cashbox.count.create</code>" in html


def test_a_count_names_its_kind_tableau_and_seance_in_words(as_user, regulator, season_day):
    html = as_user(regulator).get("/journal/").content.decode()
    row = next(row for row in visible_rows(html) if "Comptage final" in row)
    assert "Comptage final enregistré" in row
    assert "tableau n° 1" in row
    assert re.search(r"séance de l'après-midi du \d{1,2} \w+", row), row


def test_a_refusal_row_shows_its_rule_article_person_and_tableau(as_user, regulator, season_day, vingt_trois_tableau):
    refusal = JournalEntry.objects.filter(action="refusal").latest("sequence")
    rule = json.loads(refusal.document)["payload"]["rule"]
    assert rule in ARTICLES
    html = as_user(regulator).get("/journal/").content.decode()
    row = next(row for row in visible_rows(html) if "Refusé" in row)
    assert f"au titre de {rule}" in row and ARTICLES[rule] in row
    assert "Refusé à Chef" in row
    # The tableau the chef tried to interrupt, in its own column too.
    assert refusal.tableau_number == vingt_trois_tableau.number
    assert f"n° {vingt_trois_tableau.number}" in row


def test_an_account_event_names_the_person_and_the_role_in_words(as_user, regulator, season_day):
    html = as_user(regulator).get("/journal/").content.decode()
    rows = visible_rows(html)
    assert any("Rôle « Chef de partie » attribué à Chef" in row for row in rows)
    assert any("rattaché·e à l'établissement" in row for row in rows)


def test_a_spin_names_its_number_apparatus_and_the_number_drawn(as_user, regulator, chef, open_day, boule):
    boule.name = "Boule principale"
    boule.save(update_fields=["name"])
    play(chef, open_day, boule, "croupier1", number=7)
    html = as_user(regulator).get("/journal/").content.decode()
    rows = visible_rows(html)
    assert any(
        "Coup n° 1 de la Boule principale enregistré — numéro sorti : 7, séance de l'après-midi" in r for r in rows
    )
    assert any("Annonce « Rien ne va plus » à la Boule principale enregistrée" in row for row in rows)


def test_every_kind_of_entry_of_a_full_day_names_its_object(demo):  # noqa: F811
    # The authorization matrix's day: séances, rosters, spins, announcements, a pushed-back stake, advances, counts,
    # a correction, a register and its rectificatif, an observation, a proposal, a key, an export, an alert, a seal.
    first = {}
    for entry in describe(JournalEntry.objects.order_by("sequence")):
        first.setdefault(entry.action, entry)
    assert len(first) >= 35
    bare = []
    for action, entry in first.items():
        assert action not in entry.sentence and entry.sentence != "Événement du compte", (action, entry.sentence)
        label, _, verb = action.rpartition(".")
        if verb in PARTICIPLES:
            # A record names its object: more than its noun and what happened to it.
            noun, gender = noun_of(label, entry.payload)
            if entry.sentence == f"{noun} {agreed(PARTICIPLES[verb], gender)}":
                bare.append(entry.sentence)
    assert bare == []
    sentences = {action: entry.sentence for action, entry in first.items()}
    assert sentences["seances.spin.create"].startswith("Coup n° 1 du Vingt-trois enregistré — numéro sorti : 3")
    assert sentences["casino.passkey.create"] == "Clé d'accès enregistrée — Croupier1"
    assert sentences["account.passkey_enrolled"] == "Clé d'accès de Croupier1 enregistrée"
    assert sentences["casino.accountchange.create"] == "Proposition de rôle ou d'agrément enregistrée — Caissier"
    assert sentences["casino.daysettings.create"] == "Réglages de la journée enregistrés — en vigueur dès l'origine"
    assert re.fullmatch(
        r"Export demandé — journal et registres du \d+ \w+ \d{4} au \d+ \w+ \d{4}", sentences["export.create"]
    )
