import json

from django import forms

from casino.models import Casino


class CasinoForm(forms.ModelForm):
    """The casino's settings: policy, not law (DOMAIN.md); the name and the arrêté stay as registered."""

    vingt_trois_colours = forms.CharField(
        label="couleurs corrigées des cases du vingt-trois (JSON)",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=Casino._meta.get_field("vingt_trois_colours").help_text,
    )

    class Meta:
        model = Casino
        fields = [
            "min_stake_boule",
            "min_stake_vingt_trois",
            "gaming_day_start",
            "short_interruption_minutes",
            "advance_multiple_boule",
            "advance_multiple_vingt_trois",
            "rotation_period_minutes",
            "launch_share_threshold",
            "consecutive_seances_max",
            "approval_warning_days",
            "vingt_trois_colours",
        ]

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.vingt_trois_colours and not self.is_bound:
            self.initial["vingt_trois_colours"] = json.dumps(self.instance.vingt_trois_colours, ensure_ascii=False)

    def clean_vingt_trois_colours(self):
        text = self.cleaned_data["vingt_trois_colours"].strip()
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError as error:
            raise forms.ValidationError('JSON invalide : {"12": ["rouge", "noir", "noir"]}.') from error
