"""The schema view, apart from casino.schema: DRF imports the schema class while drf-spectacular's views load."""

from drf_spectacular.views import SpectacularAPIView
from rest_framework.response import Response


class CachedSchemaView(SpectacularAPIView):
    """The OpenAPI schema, generated once per process and version: it is the same for every reader (public=True)
    and costs 300–440 ms to build. drf-spectacular has no cache of its own, and cache_page would serve the cached
    answer before the permission check, so the schema is kept here, after DRF has checked the reader's role."""

    _schemas = {}

    def _get_schema_response(self, request):
        version = self.api_version or request.version or self._get_version_parameter(request)
        if version not in self._schemas:
            generator = self.generator_class(urlconf=self.urlconf, api_version=version, patterns=self.patterns)
            self._schemas[version] = generator.get_schema(request=request, public=self.serve_public)
        return Response(
            data=self._schemas[version],
            headers={"Content-Disposition": f'inline; filename="{self._get_filename(request, version)}"'},
        )
