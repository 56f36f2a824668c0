"""The rules R1–R23 the product enforces, their articles, and the domain exceptions that carry them.

Articles are cited in the numbering of the regulation text the product was commissioned from
(arrêté du 23 décembre 1959 as amended in 1997); the 2007 arrêté renumbers them one lower.
"""

from django.core.exceptions import ValidationError

ARTICLES = {
    "R1": "art. 47",
    "R2": "art. 46",
    "R3": "art. 48",
    "R4": "art. 46",
    "R5": "art. 46",
    "R6": "art. 47",
    "R7": "art. 47",
    "R8": "art. 47",
    "R9": "art. 47",
    "R10": "art. 47",
    "R11": "art. 47",
    "R12": "art. 47",
    "R13": "art. 47",
    "R14": "art. 48",
    "R15": "art. 49 de l'arrêté du 14 mai 2007",
    "R16": "art. 49",
    "R17": "art. 49",
    "R18": "art. 49",
    "R19": "art. 49",
    "R20": "art. 44",
    "R21": "art. 42 de l'arrêté du 14 mai 2007",
    "R22": "art. 43 de l'arrêté du 14 mai 2007",
    "R23": "art. 43 de l'arrêté du 14 mai 2007",
}


def cite(rule, message):
    """Return the French message ending with the article of its rule, e.g. '… (art. 47).'"""
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
