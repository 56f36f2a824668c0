from django import template
from django.utils.html import format_html

from casino.web.form_tokens import FIELD, new_token

register = template.Library()


@register.simple_tag
def form_token():
    """A hidden one-time token: the form it sits in is written once, however often it is submitted."""
    return format_html('<input type="hidden" name="{}" value="{}">', FIELD, new_token())
