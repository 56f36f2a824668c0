"""Amounts the French way: « 16 000,00 € », digits grouped by a narrow no-break space (U+202F)."""

from decimal import Decimal, InvalidOperation

NARROW_NBSP = "\u202f"
MINUS = "\u2212"  # the typographic minus sign: « −500,00 € », not the hyphen of « -500,00 € »
CENT = Decimal("0.01")


def euros_number(amount):
    """'16 000,00' for Decimal('16000'); a negative amount has a true minus sign in front; None or junk gives ''."""
    if amount is None or amount == "":
        return ""
    try:
        value = Decimal(str(amount)).quantize(CENT)
    except (InvalidOperation, ValueError):
        return ""
    sign = MINUS if value < 0 else ""
    units, cents = f"{abs(value):.2f}".split(".")
    groups = []
    while len(units) > 3:
        groups.insert(0, units[-3:])
        units = units[:-3]
    groups.insert(0, units)
    return f"{sign}{NARROW_NBSP.join(groups)},{cents}"


def euros(amount):
    """'16 000,00 €' (a no-break space before the sign), or '' when there is no amount."""
    number = euros_number(amount)
    return f"{number}\u00a0€" if number else ""


def chips_text(chips):
    """'9 × 20,00 € ; 76 × 100,00 €' for {'20.00': 9, '100.00': 76}: what a signed statement says of a count."""
    if not chips:
        return "aucun jeton"
    parts = []
    for denomination, quantity in sorted(chips.items(), key=lambda item: Decimal(str(item[0]))):
        parts.append(f"{quantity} × {euros(denomination)}")
    return " ; ".join(parts)


# The placeholder of a select where nobody or nothing is chosen in advance (Django writes « --------- »).
CHOOSE = ("", "— choisir —")
