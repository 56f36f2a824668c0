"""MkDocs hook: the testing page's mutation score table is written from the saved verdicts at each build, so that the
published page shows what `tools/mutation.py --report` prints, not the figures of whoever last edited the page."""

import importlib.util
from pathlib import Path

# tools/ is scripts, not a package: the mutation tool is loaded from its file, as its tests do.
_SPEC = importlib.util.spec_from_file_location("mutation_tool", Path(__file__).resolve().with_name("mutation.py"))
mutation = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(mutation)


def on_page_markdown(markdown, page, config, files, **kwargs):
    if page.file.src_uri != "testing.md":
        return markdown
    return mutation.with_table(markdown, mutation.markdown_table())
