"""The journal's entries as French sentences, for the pages: « Comptage final enregistré — tableau n° 3, séance de
l'après-midi du 5 décembre » for a `cashbox.count.create` entry. The raw codes stay in the API and in the page's
« détail technique » fold."""

import datetime
import json

from django.apps import apps
from django.utils import dateformat, timezone

from casino.models import Role
from casino.rules import ARTICLES

VERBS = {"create": "création", "change": "modification", "delete": "suppression"}
# What happened to a record, agreed with its noun: (masculine, feminine) singular; the plural adds an s.
PARTICIPLES = {
    "create": ("enregistré", "enregistrée"),
    "change": ("modifié", "modifiée"),
    "delete": ("supprimé", "supprimée"),
}

# Actions that are not history rows (casino.audit.journal.record_event and the export workflow).
EVENTS = {
    "refusal": "Refus d'une action (règle non respectée)",
    "export.create": "Export demandé",
    "cashbox.count_witnesses.set": "Présents d'un comptage inscrits",
    "export.done": "Export terminé",
    "export.failed": "Export en échec",
    "account.created": "Compte créé",
    "account.activated": "Compte activé",
    "account.deactivated": "Compte désactivé",
    "account.role_granted": "Rôle attribué",
    "account.role_proposed": "Rôle proposé",
    "account.role_confirmed": "Rôle confirmé par signature",
    "account.role_refused": "Rôle refusé",
    "account.change_confirmed": "Changement de compte confirmé par signature",
    "account.change_refused": "Changement de compte refusé",
    "account.approval_changed": "Agrément modifié",
    "account.membership_changed": "Appartenance modifiée",
    "account.activation_issued": "Code d'activation émis",
    "account.activation_code_issued": "Code d'activation émis",
    "account.activation_used": "Code d'activation utilisé",
    "account.activation_code_used": "Code d'activation utilisé",
    "account.passkey_enrolled": "Clé d'accès enregistrée",
    "account.passkey_confirmed": "Clé d'accès confirmée par signature",
    "account.passkey_revoked": "Clé d'accès révoquée",
    "account.second_factor_enrolled": "Double authentification activée",
    "account.otp_enrolled": "Double authentification activée",
    "account.otp_reset": "Double authentification réinitialisée",
    "account.second_factor_reset": "Double authentification réinitialisée",
    "account.second_factor_reset_proposed": "Réinitialisation de la double authentification proposée",
    "account.password_reset_proposed": "Réinitialisation du mot de passe proposée",
    "account.deactivation_proposed": "Désactivation proposée",
    "account.token_issued": "Jeton d'API émis",
    "account.token_revoked": "Jeton d'API révoqué",
    "account.lockout": "Compte verrouillé après des échecs répétés",
    "casino.employee.join": "Employé rattaché à l'établissement",
    "seal": "Sceau du journal",
    "seal.signed": "Journal scellé (tête signée par la clé de l'établissement)",
    "key.added": "Clé de signature mise en service",
    "key.retired": "Clé de signature retirée",
}

# The sentences of the events about one person's account: {who} is that person's name.
ACCOUNT_SENTENCES = {
    "account.created": "Compte créé pour {who}",
    "account.activated": "Compte de {who} activé",
    "account.deactivated": "Compte de {who} désactivé",
    "account.role_granted": "Rôle « {role} » attribué à {who}",
    "account.role_proposed": "Rôle proposé pour {who}",
    "account.role_confirmed": "Rôle de {who} confirmé par signature",
    "account.role_refused": "Rôle proposé pour {who} refusé",
    "account.change_confirmed": "Changement du compte de {who} confirmé par signature",
    "account.change_refused": "Changement du compte de {who} refusé",
    "account.approval_changed": "Agrément de {who} modifié",
    "account.membership_changed": "Rattachement de {who} à l'établissement modifié",
    "account.activation_issued": "Code d'activation émis pour {who}",
    "account.activation_code_issued": "Code d'activation émis pour {who}",
    "account.activation_used": "Code d'activation utilisé par {who}",
    "account.activation_code_used": "Code d'activation utilisé par {who}",
    "account.passkey_enrolled": "Clé d'accès de {who} enregistrée",
    "account.passkey_confirmed": "Clé d'accès de {who} confirmée par signature",
    "account.passkey_revoked": "Clé d'accès de {who} révoquée",
    "account.second_factor_enrolled": "Double authentification activée par {who}",
    "account.otp_enrolled": "Double authentification activée par {who}",
    "account.otp_reset": "Double authentification de {who} réinitialisée",
    "account.second_factor_reset": "Double authentification de {who} réinitialisée",
    "account.second_factor_reset_proposed": "Réinitialisation de la double authentification de {who} proposée",
    "account.password_reset_proposed": "Réinitialisation du mot de passe de {who} proposée",
    "account.deactivation_proposed": "Désactivation du compte de {who} proposée",
    "account.token_issued": "Jeton d'API émis pour {who}",
    "account.token_revoked": "Jeton d'API de {who} révoqué",
    "account.lockout": "Compte de {who} verrouillé après des échecs répétés",
    "casino.employee.join": "{who} rattaché·e à l'établissement",
}

# The records' nouns as a sentence starts with them, with their gender and number; by kind where the kind names it.
FEMININE, PLURAL = "f", "p"
NOUNS = {
    "cashbox.advance": {"initial": ("Avance initiale", FEMININE), "top_up": ("Avance complémentaire", FEMININE)},
    "cashbox.count": {"final": ("Comptage final", ""), "interruption": ("Comptage d'interruption", "")},
    "cashbox.interruption": {
        "short": ("Interruption momentanée", FEMININE),
        "full": ("Interruption avec comptage", FEMININE),
    },
    "cashbox.correction": ("Correction à l'encre rouge", FEMININE),
    "cashbox.signature": ("Signature", FEMININE),
    "cashbox.controlregister": ("Registre de contrôle", ""),
    "cashbox.controlregisterline": ("Ligne du registre de contrôle", FEMININE),
    "cashbox.deputy": ("Suppléant du directeur responsable", ""),
    "cashbox.registeramendment": ("Rectificatif du registre de contrôle", ""),
    "cashbox.registeramendmentline": ("Ligne de rectificatif", FEMININE),
    "casino.casino": ("Établissement", ""),
    "casino.daysettings": ("Réglages de la journée", PLURAL),
    "casino.employee": ("Fiche de l'employé", FEMININE),
    "casino.membership": ("Rattachement à l'établissement", ""),
    "casino.accountchange": ("Proposition de rôle ou d'agrément", FEMININE),
    "casino.accountdecision": ("Décision sur un rôle ou un agrément", FEMININE),
    "casino.alert": ("Alerte", FEMININE),
    "casino.passkey": ("Clé d'accès", FEMININE),
    "tables.apparatus": ("Appareil", ""),
    "tables.table": ("Table", FEMININE),
    "tables.tableau": ("Tableau", ""),
    "tables.cashbox": ("Caisse", FEMININE),
    "seances.gamingday": ("Journée de jeu", FEMININE),
    "seances.seance": ("Séance", FEMININE),
    "seances.opening": ("Ouverture du tableau", FEMININE),
    "seances.roster": ("Ordre de roulement", ""),
    "seances.rostermember": ("Lanceur de l'ordre de roulement", ""),
    "seances.rosterchange": ("Changement de l'ordre de roulement", ""),
    "seances.spin": ("Coup", ""),
    "seances.announcement": ("Annonce « Rien ne va plus »", FEMININE),
    "seances.pushedbackstake": ("Mise repoussée", FEMININE),
    "books.observation": ("Observation", FEMININE),
    "books.observationaction": ("Suite donnée à une observation", FEMININE),
    "books.levyschedule": ("Barème de prélèvement", ""),
    "books.levybracket": ("Tranche de barème", FEMININE),
    "books.monthlystatement": ("Signature de la situation mensuelle", FEMININE),
}

SEANCE_PHRASES = {"apres_midi": "séance de l'après-midi", "soiree": "séance du soir"}


def action_label(action):
    """The French name of a journal action, for the filter; an unknown one is shown as stored."""
    if action in EVENTS:
        return EVENTS[action]
    parts = action.split(".")
    if len(parts) == 3 and parts[2] in VERBS:
        model = model_of(parts[0], parts[1])
        if model is None:
            return action
        return f"{str(model._meta.verbose_name).capitalize()} : {VERBS[parts[2]]}"
    if parts[0] == "account":
        return "Événement du compte"
    return action


def model_of(app_label, model_name):
    # Found by name: the journal sits below the apps whose records it names and imports none of them.
    try:
        return apps.get_model(app_label, model_name)
    except LookupError:
        return None


def payload_of(entry):
    try:
        return json.loads(entry.document).get("payload") or {}
    except (ValueError, AttributeError):
        return {}


def day_words(date):
    """« 5 décembre » (the year is in the entry's own date)."""
    return dateformat.format(date, "j F")


def seance_words(seance):
    """« séance de l'après-midi du 5 décembre »."""
    return f"{SEANCE_PHRASES.get(seance.kind, 'séance')} du {day_words(seance.gaming_day.date)}"


def apparatus_words(apparatus):
    """« la Boule principale », « le Vingt-trois n° 2 », or « l'appareil « Roulette 1 » »: how a sentence names it."""
    name = apparatus.name
    if name[:5].lower() == "boule":
        return f"la {name}"
    if name[:11].lower() == "vingt-trois":
        return f"le {name}"
    return f"l'appareil « {name} »"


def of_the(phrase):
    """« de la Boule principale », « du Vingt-trois », « de l'appareil … »."""
    return "du " + phrase[3:] if phrase.startswith("le ") else "de " + phrase


def at_the(phrase):
    """« à la Boule principale », « au Vingt-trois », « à l'appareil … »."""
    return "au " + phrase[3:] if phrase.startswith("le ") else "à " + phrase


def person(user):
    return user.get_full_name() or user.username


def role_words(value):
    try:
        return Role(value).label
    except ValueError:
        return value


def agreed(participle, gender):
    masculine, feminine = participle
    word = feminine if FEMININE in gender else masculine
    return word + ("s" if PLURAL in gender else "")


def noun_of(label, payload):
    noun = NOUNS.get(label)
    if isinstance(noun, dict):
        noun = noun.get(payload.get("kind"))
    if noun is None:
        model = model_of(*label.split(".", 1)) if "." in label else None
        noun = (str(model._meta.verbose_name).capitalize() if model else "Enregistrement", "")
    return noun


def choice_words(label, name, value):
    """The French label of a record's choice (its state), or nothing."""
    model = model_of(*label.split(".", 1))
    try:
        field = model._meta.get_field(name) if model else None
    except LookupError:
        field = None
    return dict(field.choices or ()).get(value, "") if field is not None and field.choices else ""


def refusal_sentence(entry, payload):
    """« Refusé à Jean Chef au titre de R18 (art. 29 de l'arrêté …) : le message »."""
    rule = payload.get("rule") or ""
    message = (payload.get("message") or "").strip()
    who = person(entry.actor) if entry.actor else "un utilisateur"
    article = ARTICLES.get(rule, "")
    if article and article in message:
        article = ""  # the message already cites it
    cited = f"au titre de {rule} ({article})" if rule and article else f"au titre de {rule}" if rule else ""
    return f"Refusé à {who}{' ' + cited if cited else ''} : {message or 'refus sans message'}"


def record_sentence(entry, payload, seances, days, users, apparatuses=None):
    label, verb = entry.action.rsplit(".", 1)
    apparatus = (apparatuses or {}).get(payload.get("apparatus_id"))
    if label == "seances.seance" and entry.object_id.isdecimal() and int(entry.object_id) in seances:
        noun, gender = seance_words(seances[int(entry.object_id)]).capitalize(), FEMININE
    else:
        noun, gender = noun_of(label, payload)
    if label == "seances.spin" and isinstance(payload.get("sequence"), int):
        # « Coup n° 12 de la Boule principale » ; a correction is its own spin, at the original's number (R23).
        spin = f"coup n° {payload['sequence']}" + (f" {of_the(apparatus_words(apparatus))}" if apparatus else "")
        noun, gender = (f"Correction du {spin}", FEMININE) if payload.get("corrects_id") else ("C" + spin[1:], "")
    elif label in ("seances.announcement", "seances.pushedbackstake") and apparatus:
        noun = f"{noun} {at_the(apparatus_words(apparatus))}"
    words = [f"{noun} {agreed(PARTICIPLES[verb], gender)}"]
    context = []
    if label == "seances.spin" and payload.get("number") is not None:
        context.append(f"numéro sorti : {payload['number']}")
    if label in ("casino.employee", "seances.rostermember", "casino.passkey") and payload.get("user_id") in users:
        context.append(person(users[payload["user_id"]]))
    if label in ("casino.membership", "casino.accountchange") and ("employee", payload.get("employee_id")) in users:
        context.append(person(users["employee", payload["employee_id"]]))
    if label == "casino.daysettings" and isinstance(payload.get("effective_from"), str):
        start = datetime.date.fromisoformat(payload["effective_from"][:10])
        context.append(
            "en vigueur dès l'origine" if start.year == 1 else f"en vigueur à partir du {day_words(start)} {start.year}"
        )
    if label in ("casino.casino", "tables.apparatus", "tables.table") and isinstance(payload.get("name"), str):
        words[0] = f"{noun} « {payload['name']} » {agreed(PARTICIPLES[verb], gender)}"
    if label == "casino.alert" and payload.get("message"):
        context.append(f"« {payload['message']} »")
    if label == "books.observation" and isinstance(payload.get("visited_at"), str):
        visited = datetime.datetime.fromisoformat(payload["visited_at"].replace("Z", "+00:00"))
        words[0] = (
            f"{noun} de la visite du {day_words(timezone.localtime(visited))} {agreed(PARTICIPLES[verb], gender)}"
        )
    if label == "cashbox.registeramendment" and payload.get("number"):
        words[0] = f"{noun} n° {payload['number']} {agreed(PARTICIPLES[verb], gender)}"
    if label == "cashbox.signature" and payload.get("signer_id") in users:
        words[0] = f"{noun} de {person(users[payload['signer_id']])} {agreed(PARTICIPLES[verb], gender)}"
    if label == "seances.gamingday" and isinstance(payload.get("date"), str):
        day = day_words(datetime.date.fromisoformat(payload["date"][:10]))
        words[0] = f"{noun} du {day} {agreed(PARTICIPLES[verb], gender)}"
    if entry.tableau_number and label != "tables.tableau":
        context.append(f"tableau n° {entry.tableau_number}")
    elif label == "tables.tableau" and payload.get("number"):
        context.append(f"n° {payload['number']}")
    if label != "seances.seance" and payload.get("seance_id") in seances:
        context.append(seance_words(seances[payload["seance_id"]]))
    elif payload.get("gaming_day_id") in days:
        context.append(f"journée du {day_words(days[payload['gaming_day_id']].date)}")
    state = choice_words(label, "state", payload.get("state")) if "state" in payload else ""
    if state:
        context.append(f"état : {str(state).lower()}")
    if payload.get("_reason"):
        context.append(f"motif : {payload['_reason']}")
    return words[0] + (" — " + ", ".join(context) if context else "")


def account_sentence(entry, payload, users):
    user = None
    if "username" in payload:
        user = users.get(payload["username"])
    elif payload.get("user_id") in users:
        user = users[payload["user_id"]]
    who = person(user) if user else payload.get("username") or "un employé"
    sentence = ACCOUNT_SENTENCES[entry.action].format(who=who, role=role_words(payload.get("role", "")))
    return sentence[:1].upper() + sentence[1:]


def sentence(entry, payload, seances, days, users, apparatuses=None):
    """The French sentence of one entry, its objects named from the lookups given (no query here)."""
    if entry.action == "refusal":
        return refusal_sentence(entry, payload)
    if entry.action.startswith("export.") and isinstance(payload.get("period"), list) and len(payload["period"]) == 2:
        first, last = (datetime.date.fromisoformat(day[:10]) for day in payload["period"])
        period = f"du {day_words(first)} {first.year} au {day_words(last)} {last.year}"
        return f"{action_label(entry.action)} — journal et registres {period}"
    if entry.action in ACCOUNT_SENTENCES:
        return account_sentence(entry, payload, users)
    parts = entry.action.split(".")
    if len(parts) == 3 and parts[2] in PARTICIPLES:
        return record_sentence(entry, payload, seances, days, users, apparatuses)
    return action_label(entry.action)


def referenced(entries):
    """The séances, gaming days, apparatuses and people the entries' payloads point at: {kind: set of keys}."""
    wanted = {
        "seances": set(),
        "days": set(),
        "user_ids": set(),
        "usernames": set(),
        "apparatuses": set(),
        "employee_ids": set(),
    }
    for entry in entries:
        payload = entry.payload
        if isinstance(payload.get("seance_id"), int):
            wanted["seances"].add(payload["seance_id"])
        if entry.action.startswith("seances.seance.") and entry.object_id.isdecimal():
            wanted["seances"].add(int(entry.object_id))
        if isinstance(payload.get("apparatus_id"), int):
            wanted["apparatuses"].add(payload["apparatus_id"])
        if isinstance(payload.get("gaming_day_id"), int):
            wanted["days"].add(payload["gaming_day_id"])
        if isinstance(payload.get("employee_id"), int):
            wanted["employee_ids"].add(payload["employee_id"])
        for name in ("user_id", "signer_id"):
            if isinstance(payload.get(name), int):
                wanted["user_ids"].add(payload[name])
        if isinstance(payload.get("username"), str):
            wanted["usernames"].add(payload["username"])
    return wanted
