"""Root URL configuration."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from knowledgeweb.api.main import api

# The HTML 500 page names the request id (knowledgeweb/ops/errorpages.py).
handler500 = "knowledgeweb.ops.errorpages.server_error"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("knowledgeweb.web.urls")),
]
