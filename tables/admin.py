from django.contrib import admin

from casino.admin import NoDeleteHistoryAdmin
from tables.models import Apparatus, Cashbox, Table, Tableau
from tables.services import register_tableau


@admin.register(Apparatus)
class ApparatusAdmin(NoDeleteHistoryAdmin):
    list_display = ["name", "casino", "game", "numbers", "cases", "in_service"]


@admin.register(Table)
class TableAdmin(NoDeleteHistoryAdmin):
    list_display = ["name", "apparatus", "chef_faces_launcher"]


@admin.register(Tableau)
class TableauAdmin(NoDeleteHistoryAdmin):
    list_display = ["number", "table", "casino", "game"]

    def save_model(self, request, obj, form, change):
        if change:
            return super().save_model(request, obj, form, change)
        # A new tableau comes with the cash boxes R3 prescribes, as through the pages and the API.
        created = register_tableau(obj.table, obj.number)
        obj.pk, obj.casino_id, obj.game = created.pk, created.casino_id, created.game
        obj._state.adding = False


@admin.register(Cashbox)
class CashboxAdmin(NoDeleteHistoryAdmin):
    list_display = ["__str__", "kind", "game"]
