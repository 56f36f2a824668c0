"""The signer's TOTP field only where the signer's role has a code (R28, issue 40): folded away where the key holder
may be a chef, shown where the direction signs, absent where nobody who signs has one."""

import pytest
from django import forms

from cashbox.forms import AdvanceForm, ShortInterruptionForm, otp_field
from casino.models import Role

pytestmark = pytest.mark.django_db


def test_the_direction_signing_an_advance_is_asked_its_code_in_plain_view(casino, cash_staff):
    form = AdvanceForm(casino=casino)
    assert "otp" in form.fields and not form.otp_folded
    assert "directeur ou du membre du comité de direction" in form.fields["otp"].help_text


def test_the_key_holder_of_a_short_interruption_may_be_a_chef_so_the_code_is_folded_away(casino, cash_staff):
    form = ShortInterruptionForm(casino=casino)
    assert form.otp_folded
    assert form.fields["otp"].help_text.startswith("Seulement si le détenteur de la clé est directeur")


def test_no_code_field_when_nobody_who_may_sign_has_one():
    form = forms.Form()
    otp_field(form, {Role.CHEF, Role.CAISSIER})
    assert "otp" not in form.fields
