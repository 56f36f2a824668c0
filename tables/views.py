from django.db.models import Prefetch

from casino.web.mixins import ScopedDetailView, ScopedFormView, ScopedListView
from tables.forms import ApparatusForm, CashboxForm, TableauForm, TableForm
from tables.models import Apparatus, Cashbox, Table, Tableau


class ApparatusListView(ScopedListView):
    """The registry at a glance: every apparatus with its tables, tableaux and cash boxes."""

    model = Apparatus
    permission_required = "tables.view_apparatus"
    template_name = "tables/apparatus_list.html"

    def get_queryset(self):
        # Four queries whatever the size of the registry.
        tableaux = Tableau.objects.order_by("number").prefetch_related("cashboxes")
        tables = Table.objects.order_by("name").prefetch_related(Prefetch("tableaux", queryset=tableaux))
        return (
            super()
            .get_queryset()
            .select_related("casino")
            .prefetch_related(Prefetch("tables", queryset=tables))
            .order_by("casino__name", "game", "name")
        )


class ApparatusDetailView(ScopedDetailView):
    model = Apparatus
    permission_required = "tables.view_apparatus"
    template_name = "tables/apparatus_detail.html"

    def get_queryset(self):
        return super().get_queryset().select_related("casino")


class ApparatusCreateView(ScopedFormView):
    model = Apparatus
    form_class = ApparatusForm
    permission_required = "tables.add_apparatus"
    title = "Nouvel appareil"


class ApparatusUpdateView(ScopedFormView):
    model = Apparatus
    form_class = ApparatusForm
    permission_required = "tables.change_apparatus"

    def get_title(self):
        return f"Modifier {self.object}"


class TableListView(ScopedListView):
    model = Table
    permission_required = "tables.view_table"
    template_name = "tables/table_list.html"

    def get_queryset(self):
        return (
            super()
            .get_queryset()
            .select_related("apparatus__casino")
            .prefetch_related(Prefetch("tableaux", queryset=Tableau.objects.order_by("number")))
            .order_by("apparatus__casino__name", "apparatus__name", "name")
        )


class TableDetailView(ScopedDetailView):
    model = Table
    permission_required = "tables.view_table"
    template_name = "tables/table_detail.html"

    def get_queryset(self):
        return super().get_queryset().select_related("apparatus__casino")


class TableCreateView(ScopedFormView):
    model = Table
    form_class = TableForm
    permission_required = "tables.add_table"
    title = "Nouvelle table"


class TableUpdateView(ScopedFormView):
    model = Table
    form_class = TableForm
    permission_required = "tables.change_table"

    def get_title(self):
        return f"Modifier la table {self.object}"


class TableauListView(ScopedListView):
    model = Tableau
    permission_required = "tables.view_tableau"
    template_name = "tables/tableau_list.html"

    def get_queryset(self):
        return (
            super()
            .get_queryset()
            .select_related("casino", "table__apparatus")
            .prefetch_related("cashboxes")
            .order_by("casino__name", "number")
        )


class TableauDetailView(ScopedDetailView):
    model = Tableau
    permission_required = "tables.view_tableau"
    template_name = "tables/tableau_detail.html"

    def get_queryset(self):
        return super().get_queryset().select_related("casino", "table__apparatus")


class TableauCreateView(ScopedFormView):
    model = Tableau
    form_class = TableauForm
    permission_required = "tables.add_tableau"
    title = "Nouveau tableau"


class TableauUpdateView(ScopedFormView):
    model = Tableau
    form_class = TableauForm
    permission_required = "tables.change_tableau"

    def get_title(self):
        return f"Modifier le {self.object}"


class CashboxListView(ScopedListView):
    model = Cashbox
    permission_required = "tables.view_cashbox"
    template_name = "tables/cashbox_list.html"

    def get_queryset(self):
        return (
            super()
            .get_queryset()
            .select_related("tableau__casino", "tableau__table__apparatus")
            .order_by("tableau__casino__name", "tableau__number", "kind", "pk")
        )


class CashboxDetailView(ScopedDetailView):
    model = Cashbox
    permission_required = "tables.view_cashbox"
    template_name = "tables/cashbox_detail.html"

    def get_queryset(self):
        return super().get_queryset().select_related("tableau__casino", "tableau__table__apparatus")


class CashboxCreateView(ScopedFormView):
    model = Cashbox
    form_class = CashboxForm
    permission_required = "tables.add_cashbox"
    title = "Nouvelle caisse"
