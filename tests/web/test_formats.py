"""Amounts the French way, through one function and one template filter (issue 14)."""

from decimal import Decimal

import pytest
from django.template import Context, Template

from casino.web.formats import euros, euros_number


@pytest.mark.parametrize(
    ("amount", "shown"),
    [
        (Decimal("16000"), "16\u202f000,00\u00a0€"),
        (Decimal("1"), "1,00\u00a0€"),
        (Decimal("999.5"), "999,50\u00a0€"),
        (Decimal("1234567.89"), "1\u202f234\u202f567,89\u00a0€"),
        (Decimal("-2500"), "\u22122\u202f500,00\u00a0€"),
        ("8000.00", "8\u202f000,00\u00a0€"),
        (None, ""),
        ("pas un nombre", ""),
    ],
)
def test_amounts_are_grouped_by_thousands_with_a_comma_for_cents(amount, shown):
    assert euros(amount) == shown


def test_the_plain_form_has_no_currency_sign():
    assert euros_number(Decimal("16000")) == "16\u202f000,00"


def test_the_template_filter_is_the_same_function():
    rendered = Template("{% load money %}{{ a|euros }} / {{ a|euros_plain }}").render(Context({"a": Decimal("4000")}))
    assert rendered == "4\u202f000,00\u00a0€ / 4\u202f000,00"
