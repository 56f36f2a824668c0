from django import template

from casino.web.formats import euros as format_euros
from casino.web.formats import euros_number

register = template.Library()


@register.filter
def euros(amount):
    """{{ amount|euros }} → « 16 000,00 € », the one way amounts are shown."""
    return format_euros(amount)


@register.filter
def euros_plain(amount):
    """{{ amount|euros_plain }} → « 16 000,00 », for a column already headed in euros."""
    return euros_number(amount)
