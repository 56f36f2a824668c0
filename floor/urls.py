"""The pages above the apps, at the addresses they always had (the floor under « caisse/ »)."""

from django.urls import path

from floor import views

urlpatterns = [
    path("", views.home, name="home"),
    path("caisse/plancher/", views.FloorView.as_view(), name="floor"),
]
