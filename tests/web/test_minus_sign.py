"""Negative amounts carry a true minus sign (U+2212), as French typography writes them (issue 40: « -500,00 € »
was written with a hyphen).
"""

from decimal import Decimal

import pytest
from django.template import Context, Template

from casino.web.formats import euros, euros_number

MINUS = "\u2212"


@pytest.mark.parametrize(
    ("amount", "shown"),
    [
        (Decimal("-500"), f"{MINUS}500,00\u00a0€"),
        ("-0.01", f"{MINUS}0,01\u00a0€"),
        (Decimal("-1234567.8"), f"{MINUS}1\u202f234\u202f567,80\u00a0€"),
    ],
)
def test_a_negative_amount_is_written_with_a_minus_sign_not_a_hyphen(amount, shown):
    assert euros(amount) == shown and "-" not in euros(amount)


def test_zero_and_positive_amounts_have_no_sign():
    assert euros("-0.001") == "0,00\u00a0€" and euros(Decimal("500")) == "500,00\u00a0€"


def test_the_plain_form_and_the_template_filters_write_the_same_minus_sign():
    assert euros_number(Decimal("-300")) == f"{MINUS}300,00"
    rendered = Template("{% load money %}{{ a|euros }} / {{ a|euros_plain }}").render(Context({"a": Decimal("-300")}))
    assert rendered == f"{MINUS}300,00\u00a0€ / {MINUS}300,00"
