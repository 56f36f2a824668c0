from casino.accounts.roles import role_of


def role(request):
    user = getattr(request, "user", None)
    return {"current_role": role_of(user) if user is not None else None}
