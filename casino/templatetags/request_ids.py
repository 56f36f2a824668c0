from django import template

from casino.ops.request_id import NONE, current

register = template.Library()


@register.simple_tag
def request_id():
    """The id of the request being answered ("" outside one): the error pages print it for the operator's logs.

    Read from the request's context, not from the template's: Django renders the 500 page with an empty context."""
    value = current.get()
    return "" if value == NONE else value
