"""The cash of every tableau: advances, counts, interruptions, corrections and the control register (R14–R23).

One function per workflow, called alike by the web pages, the API and the management commands. Each runs in
one transaction and locks the row that serialises it, so that a refusal writes nothing and two tablets cannot
double an entry.
"""

from decimal import Decimal, InvalidOperation

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from cashbox.models import (
    Advance,
    ControlRegister,
    ControlRegisterLine,
    Correction,
    Count,
    Deputy,
    Interruption,
    RegisterAmendment,
    RegisterAmendmentLine,
    Signature,
)
from cashbox.signatures import (
    DIRECTING,
    act_of,
    check_signer,
    is_director_or_deputy,
    key_signing_options,
    people_of,
    put_signature,
    require_keys,
    sign,
    signs_with_key,
    staff_member,
    staff_members,
)
from cashbox.state import (
    cash_state,
    cashbox_advances_total,
    effective_amount,
    effective_result,
    final_count_of,
    main_cashbox,
    require_open_seance,
    require_open_state,
    with_result,
)
from casino import rows
from casino.accounts.passkeys import signing_options
from casino.accounts.roles import role_of
from casino.accounts.security import signer_among
from casino.audit.actors import actor_named
from casino.audit.relations import write_relation
from casino.models import Role
from casino.rules import DomainError, InvalidTransition, RoleForbidden, cite, invalid
from casino.web.formats import chips_text
from casino.web.transactions import write_block
from casino.words import amount_in_words
from seances.models import GamingDay, Seance
from seances.rosters.services import tableau_staff
from tables.games.rules import Game, euros
from tables.models import Cashbox, Tableau

# Money columns hold 14 digits with 2 decimals: an amount stays below 10^12 €; a quantity of chips below 10^9.
MAX_AMOUNT = Decimal(10) ** 12
MAX_CHIPS = 10**9
KEY_HOLDERS = {Role.DIRECTOR, Role.CODIR, Role.CHEF}


# Chips --------------------------------------------------------------------------------------------------------


def parse_chips(casino, chips, field="chips", rule=None):
    """Normalise a count by denomination: the casino's denominations, whole non-negative quantities.

    Returns (chips as {"10.00": 3, …}, total amount). Money only enters the table (R14): no negative quantity.
    """
    if not isinstance(chips, dict) or not chips:
        raise invalid(field, rule, 'Indiquez le nombre de jetons par valeur (ex. {"10.00": 5})')
    allowed = {Decimal(value) for value in casino.chip_denominations}
    normalised, total = {}, Decimal("0.00")
    if len(chips) > len(allowed):
        raise invalid(field, rule, "Plus de valeurs de jetons que l'établissement n'en a")
    for value, quantity in chips.items():
        text = str(value)
        shown = text[:20]
        try:
            # A longer text is no chip value: read on its first 40 characters, « 10.000…01 » would pass for 10 €.
            denomination = Decimal(text) if len(text) <= 40 else None
        except InvalidOperation:
            denomination = None
        # A NaN (« sNaN » cannot even be compared) or an infinity is no chip value.
        if denomination is None or not denomination.is_finite() or denomination not in allowed:
            raise invalid(field, rule, f"Valeur de jeton inconnue de l'établissement : {shown}")
        if isinstance(quantity, bool) or not isinstance(quantity, int):
            if isinstance(quantity, str) and quantity.strip().isdecimal() and len(quantity.strip()) <= 12:
                quantity = int(quantity)
            else:
                raise invalid(field, rule, f"Le nombre de jetons de {shown} € doit être un entier")
        if quantity < 0:
            raise invalid(field, "R14", "Aucune somme ne peut être distraite de la table : quantité négative refusée")
        if quantity > MAX_CHIPS:
            raise invalid(
                field,
                rule,
                f"Le nombre de jetons de {shown} € dépasse {MAX_CHIPS:,} : vérifiez le comptage".replace(",", " "),
            )
        if quantity:
            key = f"{denomination:.2f}"
            normalised[key] = normalised.get(key, 0) + quantity
            total += denomination * quantity
    if total >= MAX_AMOUNT:
        raise invalid(field, rule, "Le montant compté atteint 1 000 milliards d'euros : vérifiez le comptage")
    return dict(sorted(normalised.items(), key=lambda item: Decimal(item[0]))), total


# Locks --------------------------------------------------------------------------------------------------------


def lock_cashbox(cashbox):
    # Every money entry of a cash box locks it first, and only it (of=("self",): not its tableau, nor the casino,
    # which every other cash box shares): two tablets cannot both enter the initial advance, or a top-up beside
    # a final count, while the other cash boxes of the casino go on. SQLite has no row locks: the scope of each lock
    # of this module (`of=`, marked « no mutate ») is tested on PostgreSQL by tests/cash/test_lock_scope.py.
    # Read by casino.rows (hand-written SQL, the reason there): the ORM's compiling cost more than the query.
    return rows.instance(
        Cashbox,
        cashbox.pk,
        ("tableau__casino", "tableau__table"),
        lock=True,  # pragma: no mutate (test_lock_scope.py)
    )


def _known(queryset, rows):
    """A queryset whose rows are already known, as prefetch_related leaves it: reading it costs no query."""
    queryset._result_cache = list(rows)
    # Equivalent mutant False: Django reads _prefetch_done only for a queryset with prefetch lookups, and these have
    # none; it is set as prefetch_related sets it.
    queryset._prefetch_done = True  # pragma: no mutate
    return queryset


def _newly_written(entry, **relations):
    # What the response shows of a row just inserted, known without asking the database again: a new entry has
    # no correction yet (R23), and its witnesses are those just written.
    entry._prefetched_objects_cache = {"corrections": _known(Correction.objects.none(), []), **relations}
    return entry


# Advances (R14, R15) ------------------------------------------------------------------------------------------


def record_advance(
    user, cashbox, seance, kind, chips, counted_by, signer, password, brought_by=None, otp=None, assertion=None
):
    """Enter an advance at once, counted by the croupier and signed by the director or a CoDir member (R15).

    The people and the signer's secrets are checked first, without any lock; then the cash box is locked (it
    serialises its entries) and its state read; the journal's head is locked last, by the inserts (casino.audit.journal).
    """
    with actor_named(user), write_block():
        if kind not in Advance.Kind.values:
            raise DomainError(
                "R14",
                "Pendant la partie, aucune somme ne peut être distraite de la table : seules des avances y entrent",
            )
        day = seance.gaming_day
        wanted = [(counted_by, {Role.CROUPIER}, "counted_by", "R15", "Celui qui compte l'avance")]
        if brought_by:
            wanted.append((brought_by, {Role.CAISSIER}, "brought_by", "R15", "Celui qui apporte l'avance"))
        people = people_of(day.casino_id, [counted_by, brought_by, signer])
        counter, *carrier = staff_members(wanted, people)
        signer = check_signer(people, signer, password, DIRECTING, "R15", otp=otp, assertion=assertion, by_key=True)
        cashbox = lock_cashbox(cashbox)
        tableau, casino = cashbox.tableau, cashbox.tableau.casino
        if day.casino_id != casino.pk:
            raise invalid("seance", "R15", "La séance n'est pas celle de l'établissement de la caisse.")
        state = cash_state(cashbox, seance)
        require_open_state(state["seance_state"])
        if cashbox.kind == Cashbox.Kind.INTERRUPTION_BOX:
            raise invalid("cashbox", "R3", "La boîte spéciale d'interruption ne reçoit pas d'avance")
        if not state["opened"]:
            raise DomainError("R10", f"Le tableau n° {tableau.number} n'est pas ouvert : fixez d'abord ses limites")
        if not state["staffed"]:
            raise InvalidTransition(
                "R31",
                f"Le tableau n° {tableau.number} n'est pas ouvert pour cette séance : l'ordre de roulement publié n'y "
                "affecte aucun croupier, personne ne pourrait en compter l'encaisse à la fin de la séance",
            )
        if state["counted"]:
            raise InvalidTransition("R20", "L'encaisse finale est comptée : plus aucune avance pour cette séance")
        if kind == Advance.Kind.INITIAL and state["initial"]:
            raise InvalidTransition("R15", "L'avance initiale de cette caisse est déjà inscrite pour la séance")
        if kind == Advance.Kind.TOP_UP and not state["initial"]:
            raise InvalidTransition("R15", "Une avance complémentaire suit l'avance initiale, inscrite d'abord")
        if state["interruption"]:
            raise InvalidTransition("R17", "Le tableau est interrompu : reprenez la partie avant toute avance")
        chips, amount = parse_chips(casino, chips, rule="R15")
        # R15: the day's advance, fixed and stored at the game's first opening of the day; a settings change made
        # since applies from the next gaming day only.
        day.casino = casino
        expected = day.advance_amount(tableau.game)
        if amount != expected:
            what = (
                "L'avance complémentaire est égale à l'avance initiale"
                if kind == Advance.Kind.TOP_UP
                else ("L'avance est la même pour toutes les caisses du jeu ce jour")
            )
            raise invalid("chips", "R15", f"{what} : {euros(expected)} attendus, {euros(amount)} comptés")
        label = Advance.Kind(kind).label
        statement = (
            f"{label} de {euros(amount)} — caisse n° {tableau.number} — {seance} — comptée par {counter.username} — "
            f"{chips_text(chips)}"
        )
        act = advance_act(
            casino, cashbox, seance, kind, chips, amount, counter, carrier[0] if carrier else None, signer
        )
        signature = put_signature(casino, signer, Signature.Purpose.ADVANCE, statement, act)
        advance = Advance.objects.create(
            cashbox=cashbox,
            seance=seance,
            kind=kind,
            chips=chips,
            amount=amount,
            counted_by=counter,
            brought_by=carrier[0] if carrier else None,
            signature=signature,
            recorded_by=user,
        )
        return _newly_written(advance)


# The statements a key signs (R28) -----------------------------------------------------------------------------


def _name(person):
    return getattr(person, "username", person) or None


def advance_act(casino, cashbox, seance, kind, chips, amount, counted_by, brought_by, signer):
    """The canonical statement of an advance (R15, R28), as advances.csv lets the regulator rebuild it."""
    figures = {
        "cashbox": cashbox.pk,
        "seance": seance.pk,
        "kind": kind,
        "chips": chips,
        "amount": amount,
        "counted_by": _name(counted_by),
        "brought_by": _name(brought_by),
    }
    return act_of("cashbox.advance", Signature.Purpose.ADVANCE.value, casino.pk, signer, figures)


def final_count_act(
    casino,
    cashbox,
    seance,
    chips,
    amount,
    advances_total,
    counted_by,
    caissier,
    witnesses,
    signer,
    purpose=Signature.Purpose.FINAL_COUNT,
):
    """The canonical statement of a final count certified « exact » (R20, R28), as counts.csv and
    count_witnesses.csv let the regulator rebuild it: its figures, its result and everyone present. The croupier who
    counted and the caissier present sign the same figures, each named as the signer under their own `purpose`."""
    figures = {
        "cashbox": cashbox.pk,
        "seance": seance.pk,
        "chips": chips,
        "amount": amount,
        "advances_total": advances_total,
        "result": amount - advances_total,
        "counted_by": _name(counted_by),
        "caissier": _name(caissier),
        "witnesses": sorted({_name(person) for person in witnesses if _name(person)}),
    }
    return act_of("cashbox.count", Signature.Purpose(purpose).value, casino.pk, signer, figures)


def advance_act_as_entered(cashbox, seance, data):
    """The statement of the advance a request describes, for the signer's key to sign (R28): read, nothing locked."""
    casino = cashbox.tableau.casino
    chips, amount = parse_chips(casino, data["chips"], rule="R15")
    return advance_act(
        casino,
        cashbox,
        seance,
        data["kind"],
        chips,
        amount,
        data["counted_by"],
        data.get("brought_by") or None,
        data["signer"],
    )


# Who signs a final count with a key, in the order they touch their keys on the tablet (R20, R28): the request's
# field naming the person, the field carrying their assertion, the purpose of their signature, who they are.
FINAL_COUNT_SIGNERS = (
    ("counted_by", "counted_by_assertion", Signature.Purpose.FINAL_COUNT_COUNTED, "Le croupier qui a compté"),
    ("caissier", "caissier_assertion", Signature.Purpose.FINAL_COUNT_WITNESSED, "Le caissier présent"),
    ("signer", "assertion", Signature.Purpose.FINAL_COUNT, "Le signataire qui certifie « exact »"),
)


def final_count_signers_as_entered(cashbox, seance, data):
    """Each signature of the final count a request describes, in the order the keys are touched (R20, R28):
    [(assertion field, purpose, who, username, act)], the same figures with the signer named in each act."""
    act = final_count_act_as_entered(cashbox, seance, data)
    signers = []
    for field, assertion_field, purpose, who in FINAL_COUNT_SIGNERS:
        own = {**act, "signer": data[field], "purpose": purpose.value}
        signers.append((assertion_field, purpose, who, data[field], own))
    return signers


def final_count_signing_options(cashbox, seance, data):
    """The first step of a final count signed with keys (R20, R28): one challenge per person who signs, in the order
    they touch their keys (`signatures`: each with the request's field for their assertion, who they are, the act
    naming them); the certifying signer's, last, is also given at the top, as for an act one person signs. Only the
    single-use challenges are written."""
    casino = cashbox.tableau.casino
    signers = final_count_signers_as_entered(cashbox, seance, data)
    people = people_of(casino, [username for *_, username, _act in signers])
    steps = []
    for field, purpose, who, username, act in signers:
        options = signing_options(casino, signer_among(people, username, "R28"), act)
        steps.append({**options, "field": field, "signer": username, "who": who, "purpose": purpose.value})
    return {**steps[-1], "signatures": steps}


def final_count_act_as_entered(cashbox, seance, data):
    """The statement of the final count a request describes, with the advances the cash box holds now (R20, R28)."""
    casino = cashbox.tableau.casino
    chips, amount = parse_chips(casino, data["chips"], rule="R20") if data["chips"] else ({}, Decimal("0.00"))
    advances_total = cash_state(cashbox, seance, advances_total=True)["advances_total"]
    present = {data["counted_by"], data["caissier"], data["signer"], *(data.get("witnesses") or [])}
    return final_count_act(
        casino,
        cashbox,
        seance,
        chips,
        amount,
        advances_total,
        data["counted_by"],
        data["caissier"],
        present,
        data["signer"],
    )


# Counts (R17, R20) --------------------------------------------------------------------------------------------


# Who may be present at a count at interruption: the casino's people, never the regulator, the administrator or
# the results display's service account (a screen is not a person present).
PRESENT_AT_A_COUNT = set(Role) - {Role.CONTROLEUR, Role.ADMIN, Role.AFFICHEUR}


def _count_people(casino, counted_by, witnesses):
    """The counter and the people present at a count at interruption (R17)."""
    counter = staff_member(casino, counted_by, {Role.CROUPIER}, "counted_by", "R17", "Celui qui compte l'encaisse")
    present = [counter]
    for username in witnesses or []:
        present.append(
            staff_member(casino, username, PRESENT_AT_A_COUNT, "witnesses", "R17", "Chaque personne présente")
        )
    return counter, present


def _table_employees(seance, tableau, witnesses, people=None):
    """R20: the employees of the table present at the final count, at least one, all serving the tableau in the
    séance's published roster (R4). `people`: the witnesses read by people_of with `serving`, which spares reading
    the tableau's staff when each of them is found serving."""
    usernames = [u for u in dict.fromkeys(witnesses or []) if u]
    if not usernames:
        raise invalid("witnesses", "R20", "Indiquez au moins un employé de la table présent au comptage")
    if people is not None:
        found = [people.get(username) for username in usernames]
        if all(user is not None and (user.assigned or user.relieving or user.chef_of_table) for user in found):
            return found
    staff = {user.username: user for user in tableau_staff(seance, tableau)}
    strangers = [u for u in usernames if u not in staff]
    if strangers:
        known = ", ".join(sorted(staff)) or "aucun : l'ordre de roulement n'affecte personne à ce tableau"
        raise invalid(
            "witnesses",
            "R20",
            f"{', '.join(strangers)} ne sert pas le tableau n° {tableau.number} à cette séance "
            f"(employés de la table selon l'ordre de roulement : {known})",
        )
    return [staff[u] for u in usernames]


def record_advance_as_entered(user, cashbox, seance, kind, chips, data):
    """record_advance with the people and secrets as a page's form or the API's serializer cleaned them (`data`)."""
    return record_advance(
        user,
        cashbox,
        seance,
        kind,
        chips,
        data["counted_by"],
        data["signer"],
        data.get("password"),
        data.get("brought_by") or None,
        otp=data.get("otp"),
        assertion=data.get("assertion"),
    )


def record_final_count(
    user,
    cashbox,
    seance,
    chips,
    counted_by,
    witnesses,
    caissier,
    signer,
    password,
    otp=None,
    assertion=None,
    cosigned=None,
):
    """Count the encaisse at the end of the séance, certified « exact » and signed (R16, R19, R20).

    The result = final encaisse − (initial advance + top-ups); the cash box is then empty until the next séance.
    As record_advance: people and secrets first, without a lock; then the cash box's lock and its state.

    Where the casino signs with keys, each person present signs with their own key (R20, R28): the croupier who
    counted and the caissier present too, their assertions in `cosigned` ({"counted_by_assertion": …,
    "caissier_assertion": …}), over the same figures; with passwords the signer's signature alone, as before.
    """
    with actor_named(user), write_block():
        day = seance.gaming_day
        people = people_of(
            day.casino_id, [counted_by, caissier, signer, *(witnesses or [])], serving=(seance, cashbox.tableau_id)
        )
        counter, cashier = staff_members(
            [
                (counted_by, {Role.CROUPIER}, "counted_by", "R20", "Celui qui compte l'encaisse"),
                (caissier, {Role.CAISSIER}, "caissier", "R20", "Le caissier présent"),
            ],
            people,
        )
        signer = check_signer(people, signer, password, DIRECTING, "R20", otp=otp, assertion=assertion, by_key=True)
        cosigners = _final_count_cosigners(people, signer, counter, cashier, cosigned or {})
        cashbox = lock_cashbox(cashbox)
        tableau, casino = cashbox.tableau, cashbox.tableau.casino
        if day.casino_id != casino.pk:
            raise invalid("seance", "R20", "La séance n'est pas celle de l'établissement de la caisse.")
        state = cash_state(cashbox, seance, advances_total=True)
        require_open_state(state["seance_state"])
        if not state["initial"]:
            raise InvalidTransition("R20", "Cette caisse n'a pas reçu d'avance initiale pendant la séance")
        if state["counted"]:
            raise InvalidTransition("R20", "L'encaisse finale de cette caisse est déjà comptée et certifiée")
        if state["interruption"] == Interruption.Kind.SHORT:
            raise InvalidTransition(
                "R18", "Le tableau est interrompu, l'encaisse sous clé : reprenez d'abord la partie"
            )
        if state["interruption"]:
            raise InvalidTransition("R17", "Le tableau est interrompu : reprenez d'abord la partie")
        chips, amount = parse_chips(casino, chips, rule="R20") if chips else ({}, Decimal("0.00"))
        present = [counter, *_table_employees(seance, tableau, witnesses, people)]
        advances_total = state["advances_total"]
        result = amount - advances_total
        statement = (
            f"Encaisse finale certifiée exacte : {euros(amount)} — caisse n° {tableau.number} — {seance} — "
            f"avances {euros(advances_total)} — résultat {euros(result)} — {chips_text(chips)}"
        )
        # Every person present, as the count's witnesses keep them: the counter, the table's employees, the caissier
        # and the signer.
        witnesses = sorted({*present, cashier, signer}, key=lambda person: person.username)
        # The croupier and the caissier sign first, as they touch their keys on the tablet; the certification last.
        cosignatures = {}
        for column, person, purpose in cosigners:
            act = final_count_act(
                casino, cashbox, seance, chips, amount, advances_total, counter, cashier, witnesses, person, purpose
            )
            own = f"{Signature.Purpose(purpose).label} ({person.username}) — {statement}"
            cosignatures[column] = put_signature(casino, person, purpose, own, act)
        act = final_count_act(
            casino, cashbox, seance, chips, amount, advances_total, counter, cashier, witnesses, signer
        )
        signature = put_signature(casino, signer, Signature.Purpose.FINAL_COUNT, statement, act)
        count = Count.objects.create(
            **cosignatures,
            cashbox=cashbox,
            seance=seance,
            kind=Count.Kind.FINAL,
            chips=chips,
            amount=amount,
            advances_total=advances_total,
            result=result,
            counted_by=counter,
            caissier=cashier,
            signature=signature,
            recorded_by=user,
        )
        # A new count has no witness yet: inserted in one statement, and journaled with what is known (R23).
        write_relation(count, "witnesses", witnesses)
        return _newly_written(count, witnesses=_known(count.witnesses.all(), witnesses))


def record_final_count_as_entered(user, cashbox, seance, chips, data):
    """record_final_count with the people and secrets as a page's form or the API's serializer cleaned them."""
    return record_final_count(
        user,
        cashbox,
        seance,
        chips,
        data["counted_by"],
        data.get("witnesses"),
        data["caissier"],
        data["signer"],
        data.get("password"),
        otp=data.get("otp"),
        assertion=data.get("assertion"),
        cosigned={field: data.get(field) for _, field, _, _ in FINAL_COUNT_SIGNERS[:2]},
    )


def _final_count_cosigners(people, signer, counter, cashier, cosigned):
    """The croupier who counted and the caissier present, who sign the final count with their own keys where the
    casino signs with keys (R20, R28): [(Count column, user, purpose)], checked as any signer before any lock; none
    where the casino signs with passwords (the certification alone, as before keys)."""
    if not signs_with_key(signer):
        return []
    cosigners = []
    for (field, assertion_field, purpose, who), person, column in zip(
        FINAL_COUNT_SIGNERS[:2], (counter, cashier), ("counter_signature", "caissier_signature"), strict=True
    ):
        assertion = cosigned.get(assertion_field)
        if not isinstance(assertion, dict) or not assertion:
            raise invalid(
                assertion_field,
                "R28",
                f"Signature refusée : l'établissement signe avec les clés ; {who.lower()} ({person.username}) "
                "signe aussi le comptage avec sa clé",
            )
        roles = {Role.CROUPIER} if field == "counted_by" else {Role.CAISSIER}
        person = check_signer(
            people, person.username, None, roles, "R20", field=field, assertion=assertion, by_key=True
        )
        cosigners.append((column, person, purpose))
    return cosigners


# Interruptions (R17, R18, R19) --------------------------------------------------------------------------------


def _require_playing(tableau, seance):
    cashbox = main_cashbox(tableau)
    # kind="initial" is what is meant; a top-up is refused before an initial advance, so any advance would do.
    initial = Advance.objects.filter(cashbox=cashbox, seance=seance, kind="initial")  # pragma: no mutate
    if cashbox is None or not initial.exists():
        raise InvalidTransition("R17", f"Le tableau n° {tableau.number} n'est pas en jeu pendant cette séance")
    if final_count_of(cashbox, seance):
        raise InvalidTransition("R20", f"Le tableau n° {tableau.number} est déjà compté pour la séance")
    return cashbox


def interrupt_with_count(user, tableau, seance, chips, counted_by, witnesses=()):
    """Interrupt play: the encaisse is counted and entered in the carnet at once (R17)."""
    with actor_named(user), transaction.atomic():
        require_floor_role(user, "R17", "interrompre la partie")
        # of=("self",): the tableau serialises its interruptions; the casino row stays free for every other write.
        tableau = (
            Tableau.objects.select_for_update(of=("self",))  # pragma: no mutate (test_lock_scope.py)
            .select_related("casino")
            .get(pk=tableau.pk)
        )
        # Lock the séance too: a close must not slip in while the interruption is being logged.
        seance = Seance.objects.select_for_update().get(pk=seance.pk)
        require_open_seance(seance)
        cashbox = _require_playing(tableau, seance)
        if Interruption.objects.ongoing().filter(tableau=tableau).exists():
            raise InvalidTransition("R17", f"Le tableau n° {tableau.number} est déjà interrompu")
        chips, amount = parse_chips(tableau.casino, chips, rule="R17")
        counter, present = _count_people(tableau.casino, counted_by, witnesses)
        advances_total = cashbox_advances_total(cashbox, seance)
        count = Count.objects.create(
            cashbox=cashbox,
            seance=seance,
            kind=Count.Kind.INTERRUPTION,
            chips=chips,
            amount=amount,
            advances_total=advances_total,
            counted_by=counter,
            recorded_by=user,
        )
        write_relation(count, "witnesses", present)
        return Interruption.objects.create(
            tableau=tableau, seance=seance, kind=Interruption.Kind.FULL, logged_by=user, count=count
        )


def short_interruption_act(tableau, seance, box, attests, key_holder):
    """The canonical statement of a short interruption's attestation (R18, R28), as interruptions.csv lets the
    regulator rebuild it: the tableau, the séance, the box locked and the three conditions the key holder attests."""
    figures = {
        "seance": seance.pk,
        "tableau": tableau.number,
        "locked_box": getattr(box, "pk", None),
        "attests": dict(zip(("short", "boxes_at_table", "staff_at_post"), attests, strict=True)),
    }
    purpose = Signature.Purpose.SHORT_INTERRUPTION.value
    return act_of("cashbox.interruption", purpose, tableau.casino_id, key_holder, figures)


def _interruption_box(tableau):
    box_kind = Cashbox.Kind.INTERRUPTION_BOX if tableau.game == Game.BOULE else Cashbox.Kind.BUILT_IN
    return tableau.cashboxes.filter(kind=box_kind).first()


def short_interruption_options(tableau, seance, data):
    """The first step of a short interruption attested with the key holder's key: the challenge of the attestation
    the request describes (R18, R28); only the single-use challenge is written."""
    casino = tableau.casino
    require_keys(casino)
    holder = data.get("key_holder") or ""
    attests = tuple(data.get(field) is True for field in ("short", "boxes_at_table", "staff_at_post"))
    act = short_interruption_act(tableau, seance, _interruption_box(tableau), attests, holder)
    return key_signing_options(casino, holder, act, field="key_holder")


def interrupt_short(
    user, tableau, seance, key_holder, password, short, boxes_at_table, staff_at_post, otp=None, assertion=None
):
    """Lock the whole encaisse in the box R3 prescribes instead of counting it (R18).

    The key holder (directeur responsable, CoDir member or chef de partie) attests each of the three
    conditions with their password, or with their key where the casino signs with keys (R28); a missing one is
    refused.
    """
    with actor_named(user), transaction.atomic():
        require_floor_role(user, "R18", "interrompre la partie")
        # of=("self",): the tableau serialises its interruptions; the casino row stays free for every other write.
        tableau = (
            Tableau.objects.select_for_update(of=("self",))  # pragma: no mutate (test_lock_scope.py)
            .select_related("casino")
            .get(pk=tableau.pk)
        )
        # Lock the séance too: a close must not slip in while the interruption is being logged.
        seance = Seance.objects.select_for_update().get(pk=seance.pk)
        require_open_seance(seance)
        _require_playing(tableau, seance)
        if Interruption.objects.ongoing().filter(tableau=tableau).exists():
            raise InvalidTransition("R17", f"Le tableau n° {tableau.number} est déjà interrompu")
        conditions = [
            ("short", short, "l'interruption doit être de courte durée (par exemple pendant un entracte)"),
            ("boxes_at_table", boxes_at_table, "les boîtes ou caisses doivent demeurer à la table"),
            ("staff_at_post", staff_at_post, "l'appareil n'est pas recouvert et les employés restent à leur poste"),
        ]
        errors = {
            field: ValidationError(cite("R18", f"Condition non attestée : {text}"), code="R18")
            for field, attested, text in conditions
            if attested is not True
        }
        if errors:
            raise ValidationError(errors)
        box = _interruption_box(tableau)
        if box is None:
            raise InvalidTransition(
                "R18", f"Le tableau n° {tableau.number} n'a pas de boîte spéciale fermant à clé : comptez l'encaisse"
            )
        statement = (
            f"Interruption momentanée du tableau n° {tableau.number} — {seance} — encaisse sous clé dans : "
            f"{box.get_kind_display()} — j'atteste : courte durée, boîtes à la table, appareil non recouvert et "
            "employés à leur poste — je garde l'unique clé"
        )
        attestation = sign(
            tableau.casino,
            key_holder,
            password,
            Signature.Purpose.SHORT_INTERRUPTION,
            statement,
            KEY_HOLDERS,
            "R18",
            otp=otp,
            field="key_holder",
            act=short_interruption_act(tableau, seance, box, (True, True, True), key_holder),
            assertion=assertion,
        )
        return Interruption.objects.create(
            tableau=tableau,
            seance=seance,
            kind=Interruption.Kind.SHORT,
            logged_by=user,
            locked_box=box,
            key_holder=attestation.signer,
            attests_short=True,
            attests_boxes_at_table=True,
            attests_staff_at_post=True,
            attestation=attestation,
        )


def resumption_act(interruption, lids_off, key_holder):
    """The canonical statement of the reopening of a short interruption's box by its key holder (R18, R19, R28), as
    interruptions.csv lets the regulator rebuild it: the interruption, its séance, tableau and box locked, and at la
    boule the lids attested removed."""
    figures = {
        "interruption": interruption.pk,
        "seance": interruption.seance_id,
        "tableau": interruption.tableau.number,
        "locked_box": interruption.locked_box_id,
        "lids_off": lids_off if interruption.tableau.game == Game.BOULE else None,
    }
    purpose = Signature.Purpose.RESUMPTION.value
    return act_of("cashbox.interruption", purpose, interruption.tableau.casino_id, key_holder, figures)


def resumption_options(interruption, data):
    """The first step of a reopening signed with the key holder's key: the challenge of the resumption the request
    describes (R18, R28); only the single-use challenge is written."""
    casino = interruption.tableau.casino
    require_keys(casino)
    if interruption.kind != Interruption.Kind.SHORT:
        raise InvalidTransition(
            "R18", "Seule la reprise d'une interruption momentanée est signée, par le détenteur de la clé"
        )
    holder = data.get("unlocked_by") or ""
    lids_off = data.get("lids_off") is True
    return key_signing_options(
        casino, holder, lambda: resumption_act(interruption, lids_off, holder), field="unlocked_by"
    )


def resume(user, interruption, lids_off=None, unlocked_by=None, password=None, otp=None, assertion=None):
    """Resume play; a locked box is opened by its key holder, who signs its reopening with their password, or with
    their key where the casino signs with keys (R18, R28); at boule the lids come off (R19)."""
    with actor_named(user), transaction.atomic():
        require_floor_role(user, "R17", "reprendre la partie")
        # Lock the interruption: two taps on « reprise » must not resume it twice.
        interruption = (
            Interruption.objects.select_for_update(of=("self",))  # pragma: no mutate (test_lock_scope.py)
            .select_related("tableau__casino", "seance", "locked_box")
            .get(pk=interruption.pk)
        )
        if not interruption.ongoing:
            raise InvalidTransition("R17", "Cette interruption est déjà terminée")
        boule = interruption.tableau.game == Game.BOULE
        if boule and lids_off is not True:
            raise invalid(
                "lids_off",
                "R19",
                "À la boule, les couvercles ne peuvent être maintenus sur les boîtes "
                "pendant la partie : attestez qu'ils sont retirés",
            )
        opener = user
        if interruption.kind == Interruption.Kind.SHORT:
            # The same checks as a signature: a member of the casino, then the one key holder, then their secrets.
            casino = interruption.tableau.casino
            people = people_of(casino, [unlocked_by])
            holder = signer_among(people, unlocked_by, "R18", "unlocked_by")
            if holder.pk != interruption.key_holder_id:
                raise RoleForbidden("R18", "Seul le détenteur de l'unique clé rouvre la boîte à la reprise")
            opener = check_signer(
                people,
                unlocked_by,
                password,
                KEY_HOLDERS,
                "R18",
                otp=otp,
                field="unlocked_by",
                assertion=assertion,
                by_key=True,
            )
            statement = (
                f"Reprise du tableau n° {interruption.tableau.number} — {interruption.seance} — j'ouvre, seul "
                f"détenteur de la clé : {interruption.locked_box.get_kind_display()}"
                + (" — couvercles retirés des boîtes" if boule else "")
            )
            act = resumption_act(interruption, True if boule else None, opener.username)
            interruption.resumption = put_signature(casino, opener, Signature.Purpose.RESUMPTION, statement, act)
        interruption.resumed_at = timezone.now()
        interruption.resumed_by = opener
        interruption.lids_off = lids_off if boule else None
        interruption.save()
        return interruption


def require_floor_role(user, rule, action):
    role = role_of(user)
    if role not in KEY_HOLDERS:
        raise RoleForbidden(rule, f"Seul le chef de partie ou la direction peut {action}")
    return role


# End of séance (R16, R19, R20) ---------------------------------------------------------------------------------


# Corrections (R23) -------------------------------------------------------------------------------------------


LABEL_PUNCTUATION = " «»\"'."  # around the words, after the label's colon


def words_match(words, approval_words):
    """The approval is the whole amount in words, optionally after a label (« Approuvé : … »): a mere substring
    would let « vingt et un euros » approve one euro, or « sept mille cent euros » approve a hundred."""
    if not approval_words:
        return False
    text = " ".join(approval_words.lower().replace("’", "'").split())
    return text.rpartition(":")[2].strip(LABEL_PUNCTUATION) == words.lower()


def correction_act(casino, original, chips, amount, previous, reason, approval_words, signer):
    """The canonical statement of a correction's approval (R23, R28), as corrections.csv lets the regulator rebuild
    it: the entry corrected, the amount it had and the one it gets, the chips, the reason and the words."""
    figures = {
        "advance": original.pk if isinstance(original, Advance) else None,
        "count": original.pk if isinstance(original, Count) else None,
        "chips": chips,
        "previous_amount": previous,
        "amount": amount,
        "reason": (reason or "").strip(),
        "approval_words": (approval_words or "").strip(),
    }
    return act_of("cashbox.correction", Signature.Purpose.CORRECTION.value, casino.pk, signer, figures)


def correction_options(original, chips, reason, approval_words, signer):
    """The first step of a correction approved with the director's key: the challenge of the correction the request
    describes, with the amount the entry has now (R23, R28); only the single-use challenge is written."""
    casino = original.cashbox.tableau.casino
    require_keys(casino)
    chips, amount = parse_chips(casino, chips, rule="R23")
    act = correction_act(casino, original, chips, amount, effective_amount(original), reason, approval_words, signer)
    return key_signing_options(casino, signer, act)


def correct(user, original, chips, reason, approval_words, signer, password, otp=None, assertion=None):
    """Correct an advance or a count by a new entry in red ink, approved in words by the director (R23): with their
    password, or with their key where the casino signs with keys (R28)."""
    with actor_named(user), transaction.atomic():
        require_floor_role(user, "R23", "inscrire une correction")
        model = type(original)
        # Lock the gaming day first, the row draw_up_register locks: a register drawn up at the same moment either
        # sees this correction committed or makes it refused; it can never miss it (R22, R23).
        day_id = model.objects.filter(pk=original.pk).values_list("seance__gaming_day_id", flat=True).get()
        day = GamingDay.objects.select_for_update().get(pk=day_id)
        # of=("self",): lock the entry only; the day is locked above, explicitly, as the register's lock.
        original = (
            model.objects.select_for_update(of=("self",))  # pragma: no mutate (test_lock_scope.py)
            .select_related("cashbox__tableau__casino", "seance__gaming_day")
            .get(pk=original.pk)
        )
        casino = original.cashbox.tableau.casino
        # Lock the register too: two corrections of the same day must not both amend the same signed version (R24).
        register = (
            ControlRegister.objects.select_for_update(of=("self",))  # pragma: no mutate (test_lock_scope.py)
            .filter(gaming_day=day)
            .first()
        )
        if register is not None:
            pending = register.pending()
            if pending is not None:
                raise InvalidTransition(
                    "R24",
                    f"{pending} attend ses deux signatures : signez-le d'abord ; la correction fera l'objet d'un "
                    "rectificatif",
                )
        if not (reason or "").strip():
            raise invalid("reason", "R23", "Indiquez le motif de la correction")
        chips, amount = parse_chips(casino, chips, rule="R23")
        if model is Advance:
            fixed = day.advance_amount(original.cashbox.tableau.game)
            if amount != fixed:
                # R15: the advance is the same for every cash box of the game all day; a correction can only fix how
                # it was counted (the chips), never make it another amount.
                raise invalid(
                    "chips",
                    "R15",
                    f"L'avance du jeu est fixée à {euros(fixed)} pour la journée : une correction ne peut en faire "
                    f"{euros(amount)}",
                )
        previous = effective_amount(original)
        if amount == previous and chips == (original.corrections.order_by("-pk").first() or original).chips:
            raise invalid("chips", "R23", "La correction ne change rien à l'inscription")
        words = amount_in_words(amount)
        if not words_match(words, approval_words):
            raise invalid(
                "approval_words",
                "R23",
                f"Le directeur approuve en écrivant le montant corrigé en toutes lettres : « {words} »",
            )
        statement = (
            f"Correction à l'encre rouge : {original} — {euros(previous)} → {euros(amount)} — motif : {reason} — "
            f"approuvé : {approval_words}"
        )
        approval = sign(
            casino,
            signer,
            password,
            Signature.Purpose.CORRECTION,
            statement,
            {Role.DIRECTOR},
            "R23",
            otp=otp,
            act=correction_act(casino, original, chips, amount, previous, reason, approval_words, signer),
            assertion=assertion,
        )
        correction = Correction.objects.create(
            casino=casino,
            advance=original if model is Advance else None,
            count=original if model is Count else None,
            chips=chips,
            amount=amount,
            previous_amount=previous,
            reason=reason.strip(),
            approval_words=approval_words.strip(),
            approval=approval,
            recorded_by=user,
        )
        if register is not None:
            draw_up_amendment(user, register, correction)
        return correction


# Control register (R21, R22) ---------------------------------------------------------------------------------


def draw_up_register(user, gaming_day):
    """Carry every certified final count of the day into its control register, totalled and in words (R22)."""
    with actor_named(user), transaction.atomic():
        if role_of(user) not in DIRECTING:
            raise RoleForbidden("R22", "Seule la direction établit le registre de contrôle")
        # Lock the day: two directors drawing up the register at once would otherwise write it twice.
        gaming_day = GamingDay.objects.select_for_update().get(pk=gaming_day.pk)
        existing = ControlRegister.objects.filter(gaming_day=gaming_day).first()
        if existing:
            return existing, False
        seances = list(gaming_day.seances.all())
        if not seances:
            raise InvalidTransition("R22", "Aucune séance pour cette journée de jeu")
        # A séance declared « non tenue » is not waited for (R24).
        open_ones = [s for s in seances if s.state not in (Seance.State.CLOSED, Seance.State.NOT_HELD)]
        if open_ones:
            # R30: the register follows the day's last séance, never precedes it.
            raise InvalidTransition(
                "R30", "Toutes les séances de la journée doivent être closes : " + ", ".join(str(s) for s in open_ones)
            )
        lines = day_lines(gaming_day)
        # Decimal("0.00") for a day whose séances were all « non tenue » (R24): saved, it reads the same as 0.
        total = sum((result for _, result in lines), Decimal("0.00"))  # pragma: no mutate
        register = ControlRegister.objects.create(
            gaming_day=gaming_day, total=total, total_in_words=amount_in_words(total), drawn_up_by=user
        )
        for count, result in lines:
            ControlRegisterLine.objects.create(
                register=register, seance=count.seance, cashbox=count.cashbox, count=count, result=result
            )
        return register, True


def day_lines(gaming_day):
    """(count, result) of every certified final count of the day, its corrections applied (R21, R23)."""
    counts = with_result(
        Count.objects.filter(seance__gaming_day=gaming_day, kind=Count.Kind.FINAL)
        .select_related("cashbox__tableau", "seance")
        .order_by("seance__planned_start", "cashbox__tableau__number")
    )
    return [(count, effective_result(count)) for count in counts]


def draw_up_amendment(user, register, correction):
    """The rectificatif a correction after the register brings: every line with its corrected figure, the new total
    in words and the difference with the version it amends, to be signed by two again (R24).

    Called inside correct(), which holds the register's lock and checked that its latest version is signed.
    """
    previous = register.latest_signed()
    previous_results = {line.count_id: line.result for line in previous.lines.all()}
    lines = day_lines(register.gaming_day)
    # A day with a register has at least one final count: the start only types an empty sum.
    total = sum((result for _, result in lines), Decimal("0.00"))  # pragma: no mutate
    amendment = RegisterAmendment.objects.create(
        register=register,
        number=register.amendments.count() + 1,
        correction=correction,
        previous_total=previous.total,
        total=total,
        difference=total - previous.total,
        total_in_words=amount_in_words(total),
        drawn_up_by=user,
    )
    for count, result in lines:
        RegisterAmendmentLine.objects.create(
            amendment=amendment,
            seance=count.seance,
            cashbox=count.cashbox,
            count=count,
            # Every final count is in the version amended (none comes after the séances close): the default is a guard.
            previous_result=previous_results.get(count.pk, result),  # pragma: no mutate
            result=result,
        )
    return amendment


def _sign_twice(book, gaming_day, signer, password, purpose, statement, otp=None, act=None, assertion=None):
    """Put a signature on a register or a rectificatif: the directeur responsable (or his deputy recorded that day)
    and another CoDir member, two different people (R22)."""
    if book.signed:
        raise InvalidTransition("R22", f"{book} porte déjà ses deux signatures")
    first = book.first_signature
    if Deputy.objects.filter(gaming_day=gaming_day, deputy__username=signer).exists():
        statement += " — en qualité de suppléant du directeur responsable"
    signature = sign(
        gaming_day.casino,
        signer,
        password,
        purpose,
        statement,
        DIRECTING,
        "R22",
        not_by=[first.signer] if first else [],
        otp=otp,
        act=act,
        assertion=assertion,
    )
    if first is not None and not (
        is_director_or_deputy(first, gaming_day) or is_director_or_deputy(signature, gaming_day)
    ):
        # The transaction rolls back: the signature just made is not kept.
        raise RoleForbidden(
            "R22",
            "L'une des deux signatures est celle du directeur responsable, ou du membre du comité de direction "
            "enregistré comme son suppléant ce jour : deux autres membres du comité ne suffisent pas",
        )
    if first is None:
        book.first_signature = signature
    else:
        book.second_signature = signature
    book.save()
    return book


def register_act(register, signer):
    """The canonical statement of a control register signed (R22, R28), as control_registers.csv and
    control_register_lines.csv let the regulator rebuild it: its day, its total in figures and words, its lines."""
    lines = sorted(
        [line.seance_id, line.cashbox_id, line.count_id, line.result]
        for line in ControlRegisterLine.objects.filter(register=register)
    )
    figures = {
        "register": register.pk,
        "date": register.gaming_day.date,
        "total": register.total,
        "total_in_words": register.total_in_words,
        "lines": lines,
    }
    return act_of(
        "cashbox.controlregister", Signature.Purpose.REGISTER.value, register.gaming_day.casino_id, signer, figures
    )


def sign_register(register, signer, password, otp=None, assertion=None):
    """Sign the register: the directeur responsable (or his deputy) and another CoDir member (R22)."""
    with transaction.atomic():
        # Lock the register: two simultaneous signatures must not both take the first place.
        register = (
            ControlRegister.objects.select_for_update(of=("self",))  # pragma: no mutate (test_lock_scope.py)
            .select_related("gaming_day__casino")
            .get(pk=register.pk)
        )
        statement = (
            f"{register} — arrêté à la somme de {register.total_in_words} ({euros(register.total)}) — "
            f"{register.lines.count()} ligne(s)"
        )
        return _sign_twice(
            register,
            register.gaming_day,
            signer,
            password,
            Signature.Purpose.REGISTER,
            statement,
            otp=otp,
            act=register_act(register, signer),
            assertion=assertion,
        )


def amendment_act(amendment, signer):
    """The canonical statement of a rectificatif signed (R22, R24, R28), as rectificatifs.json lets the regulator
    rebuild it: its register, number, correction and reason, totals in figures and words, its lines."""
    lines = sorted(
        (
            [line.seance_id, line.cashbox_id, line.count_id, line.previous_result, line.result]
            for line in RegisterAmendmentLine.objects.filter(amendment=amendment)
        ),
        # The order tools/verify_export.py rebuilds: by séance, cash box and count.
        key=lambda line: (line[0], line[1], line[2] or 0),
    )
    figures = {
        "amendment": amendment.pk,
        "register": amendment.register_id,
        "number": amendment.number,
        "correction": amendment.correction_id,
        "reason": amendment.correction.reason,
        "previous_total": amendment.previous_total,
        "total": amendment.total,
        "difference": amendment.difference,
        "total_in_words": amendment.total_in_words,
        "lines": lines,
    }
    casino_id = amendment.register.gaming_day.casino_id
    return act_of("cashbox.registeramendment", Signature.Purpose.REGISTER_AMENDMENT.value, casino_id, signer, figures)


def sign_amendment(amendment, signer, password, otp=None, assertion=None):
    """Sign a rectificatif, as the register is signed: by two again (R22, R24), each with their key in a casino that
    signs with keys (R28)."""
    with transaction.atomic():
        # Lock the rectificatif: two simultaneous signatures must not both take the first place.
        amendment = (
            RegisterAmendment.objects.select_for_update(of=("self",))  # pragma: no mutate (test_lock_scope.py)
            .select_related("register__gaming_day__casino", "correction")
            .get(pk=amendment.pk)
        )
        statement = (
            f"{amendment} — rectifie le registre établi le {amendment.register.drawn_up_at:%d/%m/%Y} — "
            f"arrêté à la somme de {amendment.total_in_words} ({euros(amendment.total)}) — différence "
            f"{euros(amendment.difference)} — motif : {amendment.correction.reason}"
        )
        gaming_day = amendment.register.gaming_day
        return _sign_twice(
            amendment,
            gaming_day,
            signer,
            password,
            Signature.Purpose.REGISTER_AMENDMENT,
            statement,
            otp=otp,
            act=amendment_act(amendment, signer),
            assertion=assertion,
        )
