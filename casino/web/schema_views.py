"""The schema view, apart from casino.web.schema: DRF imports the schema class while drf-spectacular's views load."""

from drf_spectacular.views import SpectacularAPIView
from rest_framework.response import Response


def rendered_once(renderer_class):
    """The renderer, keeping what it wrote for a schema kept by CachedSchemaView: rendering the schema as YAML
    costs more than building it was saved (about 300 ms). Any other data (an error) is rendered each time."""

    class RenderedOnce(renderer_class):
        _rendered = {}

        def render(self, data, accepted_media_type=None, renderer_context=None):
            if not any(data is schema for schema in CachedSchemaView._schemas.values()):
                return super().render(data, accepted_media_type, renderer_context)
            # The schema itself is kept with its text, so that its id is never another object's.
            kept, content = self._rendered.get((id(data), accepted_media_type), (None, None))
            if kept is not data:
                content = super().render(data, accepted_media_type, renderer_context)
                self._rendered[(id(data), accepted_media_type)] = (data, content)
            return content

    RenderedOnce.__name__ = RenderedOnce.__qualname__ = renderer_class.__name__
    return RenderedOnce


class CachedSchemaView(SpectacularAPIView):
    """The OpenAPI schema, generated once per process and version: it is the same for every reader (public=True)
    and costs 300–440 ms to build. drf-spectacular has no cache of its own, and cache_page would serve the cached
    answer before the permission check, so the schema is kept here, after DRF has checked the reader's role."""

    _schemas = {}
    renderer_classes = [rendered_once(renderer) for renderer in SpectacularAPIView.renderer_classes]

    def _get_schema_response(self, request):
        version = self.api_version or request.version or self._get_version_parameter(request)
        if version not in self._schemas:
            generator = self.generator_class(urlconf=self.urlconf, api_version=version, patterns=self.patterns)
            self._schemas[version] = generator.get_schema(request=request, public=self.serve_public)
        return Response(
            data=self._schemas[version],
            headers={"Content-Disposition": f'inline; filename="{self._get_filename(request, version)}"'},
        )
