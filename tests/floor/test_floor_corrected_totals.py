"""The floor and the director's home show the figures as their corrections in red ink leave them (R20, R23): the
corrected count and the result it gives, never the amounts first written (issue 34)."""

from decimal import Decimal

import pytest

from cashbox.models import Advance, Correction, Count
from casino.web.formats import euros
from tests.helpers.cash_helpers import PASSWORD, chips_for, post_advance, post_final_count

pytestmark = pytest.mark.django_db


def correct(api, user, field, entry, chips, words):
    api.force_authenticate(user)
    return api.post(
        "/api/v1/corrections/",
        {
            field: entry.pk,
            "chips": chips,
            "reason": "Une colonne de jetons mal comptée",
            "approval_words": words,
            "signer": "directeur",
            "password": PASSWORD,
        },
        format="json",
    )


def card_of(page, number):
    start = page.index(f'data-tableau="{number}"')
    return page[start : page.index("</article>", start)]


@pytest.fixture
def corrected(api, cash_staff, open_day, boule_tableau):
    """A boule cash box whose advance (8 000 €) was corrected — its chips only: R15 fixes its amount for the day —
    and whose final count of 9 000 € was corrected to 9 100 €: a result of 1 100 €, not 1 000 €."""
    chef = cash_staff["chef"]
    assert post_advance(api, chef, boule_tableau, open_day).status_code == 201
    advance = Advance.objects.get()
    recount = correct(api, chef, "advance", advance, chips_for("8000", "1000.00"), "huit mille euros")
    assert recount.status_code == 201, recount.json()
    assert post_final_count(api, chef, boule_tableau, open_day, "9000").status_code == 201
    count = Count.objects.get(kind=Count.Kind.FINAL)
    fixed = correct(api, chef, "count", count, chips_for("9100"), "neuf mille cent euros")
    assert fixed.status_code == 201, fixed.json()
    assert Correction.objects.count() == 2
    # The entries as first written stay as they were (R23).
    assert (Advance.objects.get().amount, Count.objects.get(pk=count.pk).amount) == (Decimal("8000"), Decimal("9000"))
    return count


def test_r23_the_floor_shows_the_corrected_count_and_result(as_user, cash_staff, corrected, boule_tableau):
    response = as_user(cash_staff["chef"]).get("/caisse/plancher/")

    row = next(r for r in response.context["rows"] if r["tableau"] == boule_tableau)
    assert row["initial"]["amount"] == Decimal("8000.00")
    assert row["advances_total"] == Decimal("8000.00")
    assert row["last_count"]["amount"] == Decimal("9100.00")
    assert row["result"] == Decimal("1100.00")
    card = card_of(response.content.decode(), boule_tableau.number)
    assert euros(Decimal("9100")) in card and euros(Decimal("1100")) in card
    assert euros(Decimal("9000")) not in card and euros(Decimal("1000")) not in card


def test_r23_the_director_home_shows_the_corrected_count_and_result(as_user, cash_staff, corrected, boule_tableau):
    response = as_user(cash_staff["director"]).get("/")

    dashboard = response.context["dashboard"]
    row = next(r for r in dashboard["rows"] if r["tableau"] == boule_tableau)
    assert row["money"]["advances"] == Decimal("8000.00")
    assert row["money"]["last_count"] == Decimal("9100.00")
    assert row["money"]["result"] == dashboard["day_result"] == Decimal("1100.00")
    # The floor's own figures, read by the same page, agree.
    assert (row["last_count"]["amount"], row["result"]) == (Decimal("9100.00"), Decimal("1100.00"))
    page = response.content.decode()
    assert euros(Decimal("9100")) in page and euros(Decimal("1100")) in page
