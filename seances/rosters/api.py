"""API of the rotation order (R4, R5): build, reorder, publish, change during play, compliance report."""

import datetime

from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from cashbox.serializers import KeySignerFields, SigningOptionsSerializer
from casino.models import Casino
from casino.web.transactions import request_transaction
from casino.web.viewsets import RecordViewSet
from seances.filters import RosterFilter
from seances.models import GamingDay, Roster, RosterChange, Seance
from seances.rosters import services
from tables.models import Apparatus


def person(user):
    return {"username": user.username, "name": user.get_full_name() or user.username} if user else None


class PersonSerializer(serializers.Serializer):
    username = serializers.CharField()
    name = serializers.CharField()


class MemberSerializer(PersonSerializer):
    position = serializers.IntegerField()
    tableau = serializers.IntegerField(allow_null=True, help_text="Numéro d'ordre du tableau servi (R4, R20).")


class ChangeOutSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    kind = serializers.CharField()
    member = serializers.CharField()
    replacement = serializers.CharField(allow_null=True)
    reason = serializers.CharField(allow_blank=True)
    signed_by = serializers.CharField(allow_null=True, help_text="Le signataire d'une relève ou d'un saut de tour.")
    recorded_by = serializers.CharField()


class NowSerializer(serializers.Serializer):
    launcher = PersonSerializer(allow_null=True)
    until = serializers.DateTimeField(allow_null=True)
    next = PersonSerializer(allow_null=True)
    next_at = serializers.DateTimeField(allow_null=True)
    order = serializers.ListField(child=serializers.CharField())


class PlacementSerializer(serializers.Serializer):
    table = serializers.CharField()
    chef_faces_launcher = serializers.BooleanField()
    placement_note = serializers.CharField(allow_blank=True)


class RosterSerializer(serializers.ModelSerializer):
    casino = serializers.IntegerField(source="seance.gaming_day.casino_id", read_only=True)
    gaming_day = serializers.DateField(source="seance.gaming_day.date", read_only=True)
    apparatus_name = serializers.CharField(source="apparatus.name", read_only=True)
    game = serializers.CharField(source="apparatus.game", read_only=True)
    chef = serializers.SerializerMethodField()
    created_by = serializers.CharField(source="created_by.username", read_only=True)
    published_by = serializers.CharField(
        source="signature.signer.username", read_only=True, default=None, allow_null=True
    )
    members = serializers.SerializerMethodField(help_text="L'ordre publié (ou proposé), rang par rang (R4).")
    changes = serializers.SerializerMethodField(help_text="Changements en cours de séance, à partir de leur moment.")
    now = serializers.SerializerMethodField(help_text="Qui lance maintenant, qui ensuite, l'ordre en vigueur.")
    placement = serializers.SerializerMethodField(
        help_text="Pour chaque table : le chef de partie fait face au lanceur, ou la raison (R5)."
    )

    class Meta:
        model = Roster
        fields = [
            "id",
            "casino",
            "gaming_day",
            "seance",
            "apparatus",
            "apparatus_name",
            "game",
            "chef",
            "state",
            "period_minutes",
            "members",
            "changes",
            "now",
            "placement",
            "created_by",
            "created_at",
            "published_at",
            "published_by",
            "signature",
        ]
        read_only_fields = fields

    @extend_schema_field(PersonSerializer(allow_null=True))
    def get_chef(self, roster):
        return person(roster.chef)

    @extend_schema_field(MemberSerializer(many=True))
    def get_members(self, roster):
        members = sorted(roster.members.all(), key=lambda m: m.position)
        return [
            {"position": m.position, **person(m.user), "tableau": m.tableau.number if m.tableau_id else None}
            for m in members
        ]

    @extend_schema_field(ChangeOutSerializer(many=True))
    def get_changes(self, roster):
        return [
            {
                "id": c.id,
                "at": c.at,
                "kind": c.kind,
                "member": c.member.username,
                "replacement": c.replacement.username if c.replacement else None,
                "reason": c.reason,
                "signed_by": c.signature.signer.username if c.signature_id else None,
                "recorded_by": c.recorded_by.username,
            }
            for c in roster.changes.all()
        ]

    @extend_schema_field(NowSerializer)
    def get_now(self, roster):
        status_ = services.roster_status(roster)
        return {
            "launcher": person(status_["now"]),
            "until": status_["now_until"],
            "next": person(status_["next"]),
            "next_at": status_["next_at"],
            "order": [u.username for u in status_["order"]],
        }

    @extend_schema_field(PlacementSerializer(many=True))
    def get_placement(self, roster):
        return [
            {"table": t.name, "chef_faces_launcher": t.chef_faces_launcher, "placement_note": t.placement_note}
            for t in roster.apparatus.tables.all()
            if t.in_service
        ]


class RosterCreateSerializer(serializers.Serializer):
    seance = serializers.IntegerField()
    apparatus = serializers.IntegerField()
    chef = serializers.CharField(max_length=150, help_text="Identifiant du chef de partie (jamais lanceur).")
    members = serializers.ListField(
        child=serializers.CharField(max_length=150), max_length=100, help_text="Identifiants des lanceurs (R4)."
    )
    tableaux = serializers.DictField(
        child=serializers.IntegerField(),
        required=False,
        help_text="Numéro d'ordre du tableau servi par chaque lanceur ; par défaut répartis sur les tableaux en service.",
    )


class AssignSerializer(serializers.Serializer):
    member = serializers.CharField(max_length=150, help_text="Identifiant du lanceur.")
    tableau = serializers.IntegerField(help_text="Numéro d'ordre du tableau qu'il sert (R4, R20).")


class ReorderSerializer(serializers.Serializer):
    order = serializers.ListField(
        child=serializers.CharField(max_length=150),
        max_length=100,
        help_text="Identifiants des lanceurs, dans l'ordre.",
    )


class PublishSerializer(KeySignerFields):
    """The signer of the publication: their password, or their key's assertion where the casino signs with keys."""

    signer = serializers.CharField(max_length=150, help_text="Directeur responsable ou membre du comité de direction.")


class ChangeSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=RosterChange.Kind.choices)
    member = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=150,
        help_text="Le lanceur concerné ; pour un saut de tour, le lanceur désigné (par défaut).",
    )
    replacement = serializers.CharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=150,
        help_text="Relève : le croupier qui relève ; saut de tour : celui qui lance à la place du lanceur désigné.",
    )
    reason = serializers.CharField(allow_blank=True, max_length=300)
    signer = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=150,
        help_text="Relève : la direction ou le chef de partie ; saut de tour : le chef de partie (R4, R31).",
    )
    password = serializers.CharField(
        required=False, allow_blank=True, style={"input_type": "password"}, write_only=True
    )
    otp = serializers.CharField(
        required=False,
        allow_blank=True,
        write_only=True,
        help_text="Code TOTP du signataire, requis quand son rôle en a besoin pour se connecter (R28).",
    )
    assertion = serializers.JSONField(
        required=False,
        write_only=True,
        help_text="Relève ou saut de tour, établissement qui signe avec les clés (R28) : "
        '{"nonce": <nonce rendu par …/change/options/>, "credential": <PublicKeyCredential de '
        "navigator.credentials.get(), sérialisé en JSON, champs binaires en base64url>} ; aucun mot de passe.",
    )


def parse_date(value, name, default):
    if not value:
        return default
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        raise ValidationError({name: ["Date invalide (AAAA-MM-JJ)."]}) from None


class RosterShareSerializer(serializers.Serializer):
    username = serializers.CharField()
    name = serializers.CharField()
    minutes = serializers.IntegerField()
    share = serializers.FloatField(help_text="Part du temps de lancement, en %.")
    seances = serializers.IntegerField()
    longest_streak = serializers.IntegerField()
    above_threshold = serializers.BooleanField()
    too_many_consecutive = serializers.BooleanField()
    never_launched = serializers.BooleanField()
    chef_listed = serializers.BooleanField()
    spins = serializers.IntegerField()
    spins_planned = serializers.IntegerField()
    spin_share = serializers.FloatField()
    planned_spin_share = serializers.FloatField()
    over_spin_share = serializers.BooleanField()


class RosterSectionSerializer(serializers.Serializer):
    title = serializers.CharField()
    apparatus = serializers.IntegerField(allow_null=True)
    seances = serializers.IntegerField()
    compliant = serializers.BooleanField()
    shares = RosterShareSerializer(many=True)
    never_launched = serializers.ListField(child=serializers.CharField())
    over_threshold = serializers.ListField(child=serializers.CharField())
    consecutive = serializers.ListField(child=serializers.CharField())
    chefs_listed = serializers.ListField(child=serializers.CharField())
    spins = serializers.IntegerField()
    spin_mismatches = serializers.IntegerField()
    over_spin_share = serializers.ListField(child=serializers.CharField())


class ReportChangeSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    kind = serializers.CharField()
    apparatus = serializers.IntegerField()
    seance = serializers.IntegerField()
    member = serializers.CharField()
    replacement = serializers.CharField()
    reason = serializers.CharField()
    signed_by = serializers.CharField(allow_null=True)


class RosterReportSerializer(serializers.Serializer):
    """The compliance of the rotation over a period (R4), seances.rosters.services.compliance_report."""

    casino = serializers.IntegerField()
    apparatus = serializers.IntegerField(allow_null=True)
    threshold_percent = serializers.IntegerField()
    consecutive_seances_max = serializers.IntegerField()
    sections = RosterSectionSerializer(many=True)
    changes = ReportChangeSerializer(many=True, help_text="Les relèves et sauts de tour de la période (R4, R31).")


RosterReportSerializer._declared_fields["from"] = serializers.DateField()
RosterReportSerializer._declared_fields["to"] = serializers.DateField()


class RosterViewSet(RecordViewSet):
    """Rotation orders of the launchers per séance and apparatus (R4, R5); never edited once published."""

    queryset = Roster.objects.all()
    serializer_class = RosterSerializer
    filterset_class = RosterFilter
    http_method_names = ["get", "post", "head", "options"]
    action_permissions = {
        "create": ["seances.add_roster"],
        "reorder": ["seances.change_roster"],
        "assign": ["seances.change_roster"],
        "publish": ["seances.change_roster"],
        "publish_options": ["seances.change_roster"],
        "change": ["seances.add_rosterchange"],
        "change_options": ["seances.add_rosterchange"],
        "report": ["seances.view_roster"],
    }

    def get_queryset(self):
        return services.rosters_with_everything(super().get_queryset()).order_by("-seance__planned_start", "pk")

    def respond(self, roster, code=status.HTTP_200_OK):
        roster = self.get_queryset().get(pk=roster.pk)
        return Response(RosterSerializer(roster).data, status=code)

    @extend_schema(request=RosterCreateSerializer, responses=RosterSerializer)
    def create(self, request, *args, **kwargs):
        """Assign the chef and the launchers; the product proposes the order (draft)."""
        data = RosterCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        seance = get_object_or_404(Seance.objects.for_user(request.user), pk=data.validated_data["seance"])
        apparatus = get_object_or_404(Apparatus.objects.for_user(request.user), pk=data.validated_data["apparatus"])
        roster = services.create_roster(
            request.user,
            seance,
            apparatus,
            data.validated_data["chef"],
            data.validated_data["members"],
            data.validated_data.get("tableaux"),
        )
        return self.respond(roster, status.HTTP_201_CREATED)

    @extend_schema(request=ReorderSerializer, responses=RosterSerializer)
    @action(detail=True, methods=["post"])
    def reorder(self, request, pk=None):
        roster = self.get_object()
        data = ReorderSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return self.respond(services.reorder_roster(request.user, roster, data.validated_data["order"]))

    @extend_schema(request=AssignSerializer, responses=RosterSerializer)
    @action(detail=True, methods=["post"])
    def assign(self, request, pk=None):
        """Which tableau a launcher serves, while the order is a draft."""
        roster = self.get_object()
        data = AssignSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        roster = services.assign_tableau(
            request.user, roster, data.validated_data["member"], data.validated_data["tableau"]
        )
        return self.respond(roster)

    @extend_schema(request=PublishSerializer, responses=RosterSerializer)
    @action(detail=True, methods=["post"])
    def publish(self, request, pk=None):
        roster = self.get_object()
        data = PublishSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        roster = services.publish_roster(
            request.user,
            roster,
            data.validated_data["signer"],
            data.validated_data.get("password"),
            otp=data.validated_data.get("otp"),
            assertion=data.validated_data.get("assertion"),
        )
        return self.respond(roster)

    @extend_schema(
        request=PublishSerializer,
        responses=SigningOptionsSerializer,
        summary="Publier un ordre de roulement avec une clé, étape 1 : le défi de l'acte (R4, R28)",
        description="Le corps {signer} ; la réponse donne la déclaration canonique de l'ordre tel qu'il sera publié "
        "(séance, appareil, chef de partie, période, lanceurs dans l'ordre et leur tableau) et les options de "
        "navigator.credentials.get(). Étape 2 : POST …/publish/ avec `signer` et `assertion` = {nonce, credential}.",
    )
    @action(detail=True, methods=["post"], url_path="publish/options")
    def publish_options(self, request, pk=None):
        roster = self.get_object()
        data = PublishSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with request_transaction():
            options = services.publish_options(roster, data.validated_data["signer"])
        return Response(SigningOptionsSerializer(options).data)

    @extend_schema(
        request=ChangeSerializer,
        responses=SigningOptionsSerializer,
        summary="Signer une relève ou un saut de tour avec une clé, étape 1 : le défi de l'acte (R4, R28)",
        description="Le même corps que POST …/change/ sans secret ; la réponse donne la déclaration canonique du "
        "changement (ordre, nature, lanceur, remplaçant, motif) et les options de navigator.credentials.get(). "
        "Étape 2 : POST …/change/ avec le même corps et `assertion` = {nonce, credential}.",
    )
    @action(detail=True, methods=["post"], url_path="change/options")
    def change_options(self, request, pk=None):
        roster = self.get_object()
        data = ChangeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        with request_transaction():
            options = services.change_options(
                roster,
                values["kind"],
                values.get("member") or None,
                values["reason"],
                values.get("replacement") or None,
                values.get("signer") or "",
            )
        return Response(SigningOptionsSerializer(options).data)

    @extend_schema(request=ChangeSerializer, responses=RosterSerializer)
    @action(detail=True, methods=["post"])
    def change(self, request, pk=None):
        """Absence, late arrival, return, relief or skip, from now on; the past stays as it was. A relief is signed by
        the direction or the chef de partie, a skip by the chef de partie (R4, R31)."""
        roster = self.get_object()
        data = ChangeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.record_change(
            request.user,
            roster,
            data.validated_data["kind"],
            data.validated_data.get("member") or None,
            data.validated_data["reason"],
            data.validated_data.get("replacement") or None,
            signer=data.validated_data.get("signer") or None,
            password=data.validated_data.get("password"),
            otp=data.validated_data.get("otp"),
            assertion=data.validated_data.get("assertion"),
        )
        return self.respond(roster, status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[
            OpenApiParameter("from", str, description="Première journée de jeu (AAAA-MM-JJ)."),
            OpenApiParameter("to", str, description="Dernière journée de jeu (AAAA-MM-JJ)."),
            OpenApiParameter("apparatus", int, description="Un seul appareil."),
            OpenApiParameter("casino", int, description="L'établissement (par défaut le premier de l'utilisateur)."),
        ],
        responses=RosterReportSerializer,
    )
    @action(detail=False, methods=["get"])
    def report(self, request):
        """Compliance of the rotation over a period: shares, never launched, above threshold, consecutive (R4)."""
        casino_id = request.query_params.get("casino")
        casinos = Casino.objects.for_user(request.user)
        try:
            casino = get_object_or_404(casinos, pk=int(casino_id)) if casino_id else casinos.first()
        except ValueError:
            raise ValidationError({"casino": ["Identifiant invalide."]}) from None
        if casino is None:
            return Response({"code": "not_found", "message": "Aucun établissement."}, status=404)
        today = GamingDay.date_at(casino, timezone.now())
        date_to = parse_date(request.query_params.get("to"), "to", today)
        date_from = parse_date(request.query_params.get("from"), "from", date_to - datetime.timedelta(days=30))
        if date_from > date_to:
            raise ValidationError({"from": ["La période commence après sa fin."]})
        apparatus = None
        if request.query_params.get("apparatus"):
            try:
                apparatus = get_object_or_404(
                    Apparatus.objects.filter(casino=casino), pk=int(request.query_params["apparatus"])
                )
            except ValueError:
                raise ValidationError({"apparatus": ["Identifiant invalide."]}) from None
        report = services.compliance_report(casino, date_from, date_to, apparatus)
        return Response(report_json(report))


def report_json(report):
    # The thresholds in force on the period's last day, as the report judged it (R4, R29).
    in_force = report["casino"].settings_on(report["to"])
    return {
        "casino": report["casino"].pk,
        "from": report["from"],
        "to": report["to"],
        "apparatus": report["apparatus"].pk if report["apparatus"] else None,
        "threshold_percent": in_force.value("launch_share_threshold"),
        "consecutive_seances_max": in_force.value("consecutive_seances_max"),
        "sections": [
            {
                "title": section["title"],
                "apparatus": section["apparatus"].pk if section["apparatus"] else None,
                "seances": section["seances"],
                "compliant": section["compliant"],
                "shares": [{key: value for key, value in row.items() if key != "user"} for row in section["rows"]],
                "never_launched": [u.username for u in section["never_launched"]],
                "over_threshold": [u.username for u in section["over_threshold"]],
                "consecutive": [u.username for u in section["consecutive"]],
                "chefs_listed": [u.username for u in section["chefs_listed"]],
                "spins": section["spins"],
                "spin_mismatches": section["spin_mismatches"],
                "over_spin_share": [u.username for u in section["over_spin_share"]],
            }
            for section in report["sections"]
        ],
        "changes": [
            {
                "at": change.at,
                "kind": change.kind,
                "apparatus": change.roster.apparatus_id,
                "seance": change.roster.seance_id,
                "member": change.member.username,
                "replacement": change.replacement.username,
                "reason": change.reason,
                "signed_by": change.signature.signer.username if change.signature_id else None,
            }
            for change in report["changes"]
        ],
    }
