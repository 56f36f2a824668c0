from casino.web.viewsets import RecordViewSet
from tables.filters import ApparatusFilter, CashboxFilter, TableauFilter, TableFilter
from tables.models import Apparatus, Cashbox, Table, Tableau
from tables.serializers import ApparatusSerializer, CashboxSerializer, TableauSerializer, TableSerializer


class ApparatusViewSet(RecordViewSet):
    queryset = Apparatus.objects.all()
    serializer_class = ApparatusSerializer
    filterset_class = ApparatusFilter

    def get_queryset(self):
        return super().get_queryset().order_by("casino_id", "game", "name")


class TableViewSet(RecordViewSet):
    queryset = Table.objects.all()
    serializer_class = TableSerializer
    filterset_class = TableFilter

    def get_queryset(self):
        return super().get_queryset().order_by("apparatus_id", "name")


class TableauViewSet(RecordViewSet):
    queryset = Tableau.objects.all()
    serializer_class = TableauSerializer
    filterset_class = TableauFilter

    def get_queryset(self):
        return super().get_queryset().select_related("table").prefetch_related("cashboxes__tableau")


class CashboxViewSet(RecordViewSet):
    queryset = Cashbox.objects.all()
    serializer_class = CashboxSerializer
    filterset_class = CashboxFilter
    http_method_names = ["get", "post", "head", "options"]

    def get_queryset(self):
        return super().get_queryset().select_related("tableau")
