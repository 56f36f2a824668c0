from casino.api import RecordViewSet
from tables.models import Apparatus, Cashbox, Table, Tableau
from tables.serializers import ApparatusSerializer, CashboxSerializer, TableauSerializer, TableSerializer


class ApparatusViewSet(RecordViewSet):
    queryset = Apparatus.objects.all()
    serializer_class = ApparatusSerializer

    def get_queryset(self):
        return super().get_queryset().order_by("casino_id", "game", "name")


class TableViewSet(RecordViewSet):
    queryset = Table.objects.all()
    serializer_class = TableSerializer

    def get_queryset(self):
        return super().get_queryset().order_by("apparatus_id", "name")


class TableauViewSet(RecordViewSet):
    queryset = Tableau.objects.all()
    serializer_class = TableauSerializer

    def get_queryset(self):
        return super().get_queryset().select_related("table").prefetch_related("cashboxes__tableau")


class CashboxViewSet(RecordViewSet):
    queryset = Cashbox.objects.all()
    serializer_class = CashboxSerializer
    http_method_names = ["get", "post", "head", "options"]

    def get_queryset(self):
        return super().get_queryset().select_related("tableau")
