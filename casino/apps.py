from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.db import connections
from django.db.models.signals import m2m_changed, post_migrate
from simple_history.signals import post_create_historical_record

from casino import regulated
from casino.audit.append_only import install
from casino.celery import app as celery_app


class CasinoConfig(regulated.RegulatedAppConfig):
    name = "casino"
    verbose_name = "Établissement"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Signal receivers: these modules import models (ours, axes'), which exist only once the apps are loaded.
        from axes.signals import user_locked_out

        from casino.accounts import authentication, security
        from casino.accounts.roles import ensure_groups
        from casino.audit.history import keep_history_managers
        from casino.audit.journal import on_historical_record
        from casino.audit.relations import on_relation_changed

        # Sent once per app: the last app's signal comes after every app's tables and permissions exist.
        last = self.apps.get_app_config("cashbox")
        # The groups take permissions of every app: after the last installed app has created its own.
        newest = [config for config in self.apps.get_app_configs() if config.models_module is not None][-1]
        post_migrate.connect(ensure_groups, sender=newest, dispatch_uid="ensure_groups")
        post_migrate.connect(install_append_only, sender=last, dispatch_uid="append_only")
        # Every history row of a regulated record is journaled in the same transaction (R23).
        post_create_historical_record.connect(on_historical_record, dispatch_uid="journal")
        # And every change of a journaled record's many-to-many relation (who was present at a count).
        m2m_changed.connect(on_relation_changed, dispatch_uid="journal_relations")
        # Each model's history manager class built once, not at every history row (issue 39).
        keep_history_managers()

        user_logged_in.connect(security.on_login, dispatch_uid="security_login")
        user_login_failed.connect(security.on_login_failed, dispatch_uid="security_login_failed")
        user_logged_out.connect(security.on_logout, dispatch_uid="security_logout")
        user_locked_out.connect(security.on_locked_out, dispatch_uid="security_lockout")
        # API tokens end with a password change, a deactivation or a role change.
        security.connect_token_signals()
        # Each worker keeps a token's check briefly: every revocation makes them all forget it at once.
        authentication.connect_revocation_signals()
        # Every app's tasks registered in every process that loads Django (web, worker, beat, shell, tests), not only
        # once a module happens to import them: `casino/celery.py`'s autodiscovery is lazy and runs in a worker only,
        # so a web process queuing `casino.tasks.build_export` by name would not find it (its tasks modules import
        # models, hence here, once every app is loaded).
        celery_app.autodiscover_tasks(force=True)


def install_append_only(using="default", **kwargs):
    install(connections[using])
