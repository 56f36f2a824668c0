"""The password hasher (R28): Argon2id, Django's recommended hasher, sized for the machine (docs/security.md)."""

from django.contrib.auth.hashers import Argon2PasswordHasher


class Argon2idPasswordHasher(Argon2PasswordHasher):
    """Argon2id with OWASP's first configuration: 46 MiB of memory, one pass, one lane. Measured on the 2-core
    reference machine: 45 ms of CPU per check, where PBKDF2 at 1 000 000 iterations took 233 ms; the memory cost is
    what makes a stolen hash expensive to guess on GPUs. A hash made with other parameters is checked with its own and
    re-made with these at the next successful login (Django's must_update)."""

    time_cost = 1
    memory_cost = 47104
    parallelism = 1
