"""The second factor turned on for a person, as in production, and the code their device shows now (R28)."""


def totp_code(settings, user):
    """Turn the second factor on (as in production) for `user`, and the code their device shows now."""
    from django_otp.oath import totp
    from django_otp.plugins.otp_totp.models import TOTPDevice

    settings.REQUIRE_2FA = True
    device = TOTPDevice.objects.create(user=user, name="t", confirmed=True)
    return f"{totp(device.bin_key, device.step, device.t0, device.digits, device.drift):06d}"
