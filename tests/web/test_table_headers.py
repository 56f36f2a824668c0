"""No table header without a name (axe « empty-table-header », issue 40): a column of buttons is named for screen
readers (« Actions », visually hidden); an empty cell of a footer is a data cell."""

import re
from pathlib import Path

from django.conf import settings

EMPTY_HEADER = re.compile(r"<th\b[^>]*>\s*</th>")


def test_no_template_has_an_empty_table_header():
    templates = [path for root in settings.TEMPLATES[0]["DIRS"] for path in Path(root).rglob("*.html")]
    assert len(templates) > 50
    found = [f"{path}: {match.group()}" for path in templates for match in EMPTY_HEADER.finditer(path.read_text())]
    assert found == []


def test_the_pattern_finds_an_empty_header():
    assert EMPTY_HEADER.search('<tr><th scope="col"></th></tr>') and EMPTY_HEADER.search("<th>\n </th>")
    assert not EMPTY_HEADER.search('<th scope="col"><span class="visually-hidden">Actions</span></th>')
