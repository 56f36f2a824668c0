"""Settings of bench/write_path.py's production-hasher line: bench/write_path_settings.py's, but the signers'
passwords checked with the product's own PASSWORD_HASHERS, as production pays them. Never used by the product."""

from casino.settings import *  # noqa: F403

ROOT_URLCONF = "bench.write_path_urls"
