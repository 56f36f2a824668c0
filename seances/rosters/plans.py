"""A published roster as its timeline reads it: its members in order and its changes, loaded in a constant number
of queries (R4).

Imports only the models and the pure rotation, so that both the roster workflows (rosters.services) and the
inspector's statistics (spins.stats), which the workflows' compliance report uses, can read a roster.
"""

from seances.rosters import rotation


def rosters_with_everything(queryset):
    """Rosters with what their timelines need, in a constant number of queries."""
    return queryset.select_related(
        "seance__gaming_day__casino", "apparatus", "chef", "created_by", "signature__signer"
    ).prefetch_related(
        "members__user__employee",
        "members__tableau",
        "changes__member",
        "changes__replacement",
        "changes__recorded_by",
        "changes__signature__signer",
        "apparatus__tables",
    )


def published_order(roster):
    """User ids of the roster in their order (uses the prefetched members)."""
    return [member.user_id for member in sorted(roster.members.all(), key=lambda m: m.position)]


def roster_changes(roster):
    return [
        rotation.Change(at=c.at, kind=c.kind, member=c.member_id, replacement=c.replacement_id)
        for c in roster.changes.all()
    ]
