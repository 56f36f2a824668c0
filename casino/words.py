"""Amounts written out in French words, as the books want them (« arrêté à la somme de … »)."""

from decimal import ROUND_HALF_UP, Decimal

UNITS = [
    "zéro",
    "un",
    "deux",
    "trois",
    "quatre",
    "cinq",
    "six",
    "sept",
    "huit",
    "neuf",
    "dix",
    "onze",
    "douze",
    "treize",
    "quatorze",
    "quinze",
    "seize",
    "dix-sept",
    "dix-huit",
    "dix-neuf",
]
TENS = {2: "vingt", 3: "trente", 4: "quarante", 5: "cinquante", 6: "soixante"}


def _below_100(n):
    if n < 20:
        return UNITS[n]
    tens, unit = divmod(n, 10)
    if tens in (7, 9):
        base = "soixante" if tens == 7 else "quatre-vingt"
        if tens == 7 and unit == 1:
            return "soixante et onze"
        return f"{base}-{UNITS[10 + unit]}"
    if tens == 8:
        return "quatre-vingts" if unit == 0 else f"quatre-vingt-{UNITS[unit]}"
    if unit == 0:
        return TENS[tens]
    if unit == 1:
        return f"{TENS[tens]} et un"
    return f"{TENS[tens]}-{UNITS[unit]}"


def _below_1000(n):
    hundreds, rest = divmod(n, 100)
    if hundreds == 0:
        return _below_100(rest)
    head = "cent" if hundreds == 1 else f"{UNITS[hundreds]} cents"
    if rest == 0:
        return head
    return f"{head.removesuffix('s')} {_below_100(rest)}"


def _invariable(words):
    """Before « mille », « cents » and « quatre-vingts » lose their s."""
    if words.endswith("cents") or words.endswith("quatre-vingts"):
        return words[:-1]
    return words


def integer_in_words(n):
    """A whole number in French words, e.g. 1234 → « mille deux cent trente-quatre »."""
    if n < 0:
        return f"moins {integer_in_words(-n)}"
    if n < 1000:
        return _below_1000(n)
    parts = []
    for size, singular, plural in ((10**9, "milliard", "milliards"), (10**6, "million", "millions")):
        count, n = divmod(n, size)
        if count:
            parts.append(f"{integer_in_words(count)} {singular if count == 1 else plural}")
    thousands, n = divmod(n, 1000)
    if thousands:
        parts.append("mille" if thousands == 1 else f"{_invariable(_below_1000(thousands))} mille")
    if n:
        parts.append(_below_1000(n))
    return " ".join(parts)


def amount_in_words(amount):
    """An amount in euros in French words, e.g. Decimal('1234.50') → « mille deux cent trente-quatre euros et
    cinquante centimes »."""
    amount = Decimal(amount).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    sign = "moins " if amount < 0 else ""
    amount = abs(amount)
    euros_part = int(amount)
    cents = int((amount - euros_part) * 100)
    words = integer_in_words(euros_part)
    if euros_part in (0, 1):
        unit = "euro"
    elif euros_part % 1_000_000 == 0:
        unit = "d'euros"
    else:
        unit = "euros"
    text = f"{words} {unit}"
    if cents:
        text += f" et {integer_in_words(cents)} centime{'s' if cents > 1 else ''}"
    return sign + text
