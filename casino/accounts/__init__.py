"""Accounts: creation, proposed roles and approvals confirmed by the direction (R29), activation codes (R28)."""
