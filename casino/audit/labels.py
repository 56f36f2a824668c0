"""The journal's actions as French sentences, for the pages: « Avance : création » for cashbox.advance.create."""

from django.apps import apps

VERBS = {"create": "création", "change": "modification", "delete": "suppression"}

# Actions that are not history rows (casino.audit.journal.record_event and the export workflow).
EVENTS = {
    "refusal": "Refus d'une action (règle non respectée)",
    "export.create": "Export demandé",
    "export.done": "Export terminé",
    "export.failed": "Export en échec",
    "account.created": "Compte créé",
    "account.role_proposed": "Rôle proposé",
    "account.role_confirmed": "Rôle confirmé par signature",
    "account.role_refused": "Rôle refusé",
    "account.approval_changed": "Agrément modifié",
    "account.membership_changed": "Appartenance modifiée",
    "account.activation_issued": "Code d'activation émis",
    "account.activation_used": "Code d'activation utilisé",
    "account.otp_enrolled": "Double authentification activée",
    "account.otp_reset": "Double authentification réinitialisée",
    "account.token_issued": "Jeton d'API émis",
    "account.token_revoked": "Jeton d'API révoqué",
    "account.lockout": "Compte verrouillé après des échecs répétés",
    "seal": "Sceau du journal",
}


def action_label(action):
    """The French sentence of a journal action; an unknown one is shown as stored."""
    if action in EVENTS:
        return EVENTS[action]
    parts = action.split(".")
    if len(parts) == 3 and parts[2] in VERBS:
        try:
            model = apps.get_model(parts[0], parts[1])
        except LookupError:
            return action
        return f"{str(model._meta.verbose_name).capitalize()} : {VERBS[parts[2]]}"
    if parts[0] == "account" and len(parts) == 2:
        return f"Compte : {parts[1].replace('_', ' ')}"
    return action
