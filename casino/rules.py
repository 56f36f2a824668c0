"""The rules R1–R31 the product enforces, their articles, and the domain exceptions that carry them.

Articles are cited in the arrêté du 14 mai 2007 in force, with the number of the seed text (arrêté du 23 décembre
1959 as amended in 1997) in brackets where it differs, from the table of ../shared/DOMAIN.md. Every citation of the
product comes from here (refusals through `cite`, help texts and printed books through `article`).
"""

from django.core.exceptions import ValidationError

ARRETE_2007 = "l'arrêté du 14 mai 2007"

# rule -> (article of the 2007 arrêté, article of the 1959 seed or None where the 1959 text has none).
_SOURCES = {
    **{rule: ("art. 46", "art. 47") for rule in ["R1", "R6", "R7", "R8", "R9", "R10", "R11", "R12", "R13"]},
    **{rule: ("art. 45", "art. 46") for rule in ["R2", "R4", "R5"]},
    **{rule: ("art. 47", "art. 48") for rule in ["R3", "R14"]},
    "R15": ("arts. 43 et 49", "art. 44"),
    **{rule: ("art. 48", "art. 49") for rule in ["R16", "R17", "R18", "R19"]},
    "R20": ("art. 43", "art. 44"),
    "R21": ("art. 69", "art. 71"),
    **{rule: ("art. 72", None) for rule in ["R22", "R24"]},
    **{rule: ("arts. 69 et 80", None) for rule in ["R23", "R28"]},
    "R25": ("art. 75", None),
    "R26": ("art. 19", None),
    "R27": ("art. 92", None),
    "R29": ("art. 69", None),
    "R30": ("arts. 43 et 69", "art. 44"),
    "R31": ("arts. 43 et 45", "arts. 44 et 46"),
}


def article(rule):
    """The citation of a rule, e.g. "art. 46 de l'arrêté du 14 mai 2007, art. 47 de 1959"."""
    current, seed = _SOURCES[rule]
    return f"{current} de {ARRETE_2007}" + (f", {seed} de 1959" if seed else "")


ARTICLES = {rule: article(rule) for rule in _SOURCES}


def cite(rule, message):
    """Return the French message ending with the article of its rule, e.g. '… (art. 46 de l'arrêté …, art. 47 de 1959).'"""
    return f"{message.rstrip('.')} ({ARTICLES[rule]})."


def rule_error(rule, message, field=None):
    """A ValidationError whose code is the rule id, keyed by field when one is named."""
    error = ValidationError(cite(rule, message), code=rule)
    return ValidationError({field: error}) if field else error


def invalid(field, rule, message):
    """A 400 refusal on one field: with a rule, its id as the code and the article cited; else code "invalid"."""
    if rule:
        return rule_error(rule, message, field)
    return ValidationError({field: ValidationError(message, code="invalid")})


class DomainError(Exception):
    """A refusal of the domain that is not about invalid data."""

    status_code = 409

    def __init__(self, rule, message, details=None):
        self.rule = rule
        self.message = cite(rule, message) if rule in ARTICLES else message
        self.details = details or []
        super().__init__(self.message)


class InvalidTransition(DomainError):
    """The object's state forbids the action (HTTP 409)."""

    status_code = 409


class RoleForbidden(DomainError):
    """The person's role may not perform the action (HTTP 403)."""

    status_code = 403
