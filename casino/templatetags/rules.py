from django import template

from casino.rules import article as rule_article

register = template.Library()


@register.simple_tag
def article(rule):
    """The citation of a rule for printed books and pages, from casino.rules only."""
    return rule_article(rule)
