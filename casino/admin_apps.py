"""django.contrib.admin's app, with the site of casino/admin_site.py (its own module: an AppConfig module is
imported before the models are ready)."""

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig

# Accounts, roles, secrets and tokens are managed through the product's pages, where R28 and R29 hold: the admin
# of django.contrib.auth would set passwords and groups (= roles), django-otp's would enrol a device for another
# person, the token admins would mint a token in another's name.
UNREGISTERED_APPS = {"auth", "authtoken", "knox", "otp_totp"}


class CasinoAdminConfig(AdminConfig):
    default_site = "casino.admin_site.CasinoAdminSite"

    def ready(self):
        super().ready()

        for model in list(admin.site._registry):
            if model._meta.app_label in UNREGISTERED_APPS:
                admin.site.unregister(model)
