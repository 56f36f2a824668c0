from django.urls import path

from books import views
from casino.web import converters  # noqa: F401 - registers <date:…>

urlpatterns = [
    path("observations/", views.ObservationListView.as_view(), name="observation-list"),
    path("observations/<int:pk>/", views.ObservationDetailView.as_view(), name="observation-detail"),
    path("prelevements/", views.LevyIndexView.as_view(), name="levy-index"),
    path("prelevements/bareme/", views.LevyScheduleView.as_view(), name="levy-schedule"),
    path("prelevements/<int:season>/<int:n>/", views.LevySheetView.as_view(), name="levy-sheet"),
    path("situations/", views.StatementListView.as_view(), name="statement-list"),
    path("situations/<int:year>/<int:month>/", views.StatementView.as_view(), name="statement"),
]

# Acts of the books reached from a séance and from a day's register: the books' pages at the séance's and the register's
# addresses (casino/urls.py mounts them under seances/ and caisse/), so that the séances and the cash never import books.
seance_patterns = [
    path("<int:pk>/non-tenue/", views.SeanceNotHeldView.as_view(), name="seance-not-held"),
]
register_patterns = [
    path("registres/<date:date>/suppleant/", views.DeputyView.as_view(), name="deputy-create"),
]
