"""Where passwords remain (R28): Argon2id first, sized for the machine; older hashes still read, then re-made."""

from django.contrib.auth.hashers import check_password, get_hasher, identify_hasher, make_password

from casino.accounts.hashers import Argon2idPasswordHasher

PRODUCTION = [
    "casino.accounts.hashers.Argon2idPasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]


def test_r28_passwords_are_hashed_with_argon2id_sized_for_the_machine(settings):
    settings.PASSWORD_HASHERS = PRODUCTION
    encoded = make_password("correct-horse-battery-staple")
    assert encoded.startswith("argon2$argon2id$v=19$m=47104,t=1,p=1$")
    assert isinstance(identify_hasher(encoded), Argon2idPasswordHasher)
    assert check_password("correct-horse-battery-staple", encoded)
    assert not check_password("wrong", encoded)


def test_r28_a_pbkdf2_hash_still_checks_and_is_made_again_with_argon2id(settings):
    settings.PASSWORD_HASHERS = PRODUCTION
    old = get_hasher("pbkdf2_sha256").encode("correct-horse-battery-staple", "salt1234salt", iterations=1000)
    remade = []
    assert check_password("correct-horse-battery-staple", old, setter=remade.append)
    assert remade == ["correct-horse-battery-staple"]
