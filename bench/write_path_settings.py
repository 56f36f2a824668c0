"""Settings of bench/write_path.py only: the product's settings, with the bench's bare insert endpoint beside the
API and signer passwords hashed with MD5, so that what is measured is the write path, not PBKDF2 (600 ms by
design). Never used by the product."""

from casino.settings import *  # noqa: F403

ROOT_URLCONF = "bench.write_path_urls"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
