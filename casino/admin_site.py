"""/admin/ behind the second factor for everyone who enters it, superusers included, outside demo mode (R28)."""

from django.conf import settings
from django.contrib.admin.sites import AdminSite
from django_otp.admin import OTPAdminAuthenticationForm, OTPAdminSite


class CasinoAdminSite(OTPAdminSite):
    """django-otp's OTPAdminSite (a verified TOTP device for every staff user) unless REQUIRE_2FA is off (demo)."""

    def __init__(self, name="admin"):
        AdminSite.__init__(self, name)

    @property
    def login_form(self):
        return OTPAdminAuthenticationForm if settings.REQUIRE_2FA else None

    @property
    def login_template(self):
        return OTPAdminSite.login_template if settings.REQUIRE_2FA else None

    def has_permission(self, request):
        if settings.REQUIRE_2FA:
            return super().has_permission(request)
        return AdminSite.has_permission(self, request)
