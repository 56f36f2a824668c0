"""What a reader of a page or an API answer sees, as text that a golden file can hold (tests/web/test_golden_reads.py).

A page becomes the text of its <main> (or its <body> when it has none), one block per line, a table's cells separated
by « | », each link, form, field and option written out with its target or value; an API answer becomes its JSON with
sorted keys, one value per line. What changes from one run to the next without a reader's mistake is replaced by a
placeholder: a form's one-time tokens, a key's random bytes, the digests that follow them in the journal.
"""

import json
import re
from html.parser import HTMLParser

BLOCKS = {
    "p", "div", "section", "article", "header", "footer", "nav", "aside", "ul", "ol", "li", "dl", "dt", "dd", "table",
    "thead", "tbody", "tfoot", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "br", "form", "fieldset", "legend",
    "details", "summary", "pre", "figure", "figcaption", "caption", "label", "blockquote", "main", "dialog",
}  # fmt: skip
CELLS = {"td", "th"}
SKIPPED = {"script", "style", "head", "template", "svg", "noscript"}
# Values a run draws at random: a form's one-time tokens and challenges, a key's bytes.
RANDOM_FIELDS = {"csrfmiddlewaretoken", "form_token", "nonce", "challenge", "otp_secret"}
VOLATILE = [
    # Base64 or base64url runs of 40 characters and more: public keys, credential ids, signatures, challenges.
    (re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{40,}={0,2}"), "<octets>"),
    # A request's reference (a UUID's hex), as an error page gives it to the operator.
    (re.compile(r"\b[0-9a-f]{32}\b"), "<référence>"),
    # A SHA-256 digest: the journal's chain after the first random bytes (a key, a seal's signature); written whole,
    # in groups of four (a key's fingerprint), or cut short (« 1401208be38e5c299e6… »).
    (re.compile(r"\b[0-9a-f]{64}\b"), "<empreinte>"),
    (re.compile(r"\b(?:[0-9a-f]{4} ){15}[0-9a-f]{4}\b"), "<empreinte>"),
    (re.compile(r"\b[0-9a-f]{8,63}…"), "<empreinte>…"),
    # A key's id: the first 16 hexadecimal digits of its fingerprint.
    (re.compile(r"\b[0-9a-f]{16}\b"), "<id de clé>"),
    # A one-time TOTP secret in base32, as the second factor's set-up page shows it.
    (re.compile(r"\b[A-Z2-7]{32}\b"), "<secret>"),
]


def volatile_free(text):
    for pattern, placeholder in VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


class _Reader(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.lines, self.line = [], []
        self.skipping = 0
        self.main = None  # the lines of <main>, once it has ended; a page without one keeps every line

    def _emit(self, text):
        if self.skipping:
            return
        self.line.append(text)

    def _break(self):
        text = re.sub(r"\s+", " ", "".join(self.line)).strip()
        if text:
            self.lines.append(text)
        self.line = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in SKIPPED:
            self.skipping += 1
            return
        if tag == "main":
            self._break()
            self.lines = []
            return
        if tag in BLOCKS:
            self._break()
        if tag in CELLS:
            self._emit(" | ")
        if tag == "a" and attrs.get("href"):
            self._emit(f"[→ {attrs['href']}] ")
        elif tag == "form":
            self._emit(f"[formulaire {attrs.get('method', 'get').lower()} {attrs.get('action', '')}]")
            self._break()
        elif tag in ("input", "select", "textarea", "button"):
            name = attrs.get("name", "")
            if attrs.get("type") == "hidden" and not name:
                return
            value = "<aléatoire>" if name in RANDOM_FIELDS else attrs.get("value", "")
            flags = " ".join(f for f in ("checked", "selected", "disabled", "required", "readonly") if f in attrs)
            kind = attrs.get("type", tag)
            self._emit(f"[{kind} {name}={value}{' ' + flags if flags else ''}] ")
        elif tag == "option":
            selected = " ✓" if "selected" in attrs else ""
            self._emit(f"(option {attrs.get('value', '')}{selected}) ")
        elif tag == "img":
            self._emit(f"[image {attrs.get('alt', '')}]")
        elif tag == "hr":
            self._break()

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag in SKIPPED:
            self.skipping -= 1

    def handle_endtag(self, tag):
        if tag in SKIPPED:
            self.skipping = max(0, self.skipping - 1)
            return
        if tag == "main":
            self._break()
            self.main, self.lines = self.lines, []
            return
        if tag in BLOCKS:
            self._break()

    def handle_data(self, data):
        self._emit(data)

    def text(self):
        self._break()
        return self.lines if self.main is None else self.main


def page_text(html):
    """The visible text of a page's <main>, one block per line, volatile values replaced."""
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return volatile_free("\n".join(reader.text()))


def json_text(data):
    """An API answer as sorted, indented JSON, volatile values replaced."""
    return volatile_free(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False))


def answer_text(response):
    """What the response says to its reader: its status, its redirect, its type, its file name and its content as
    text."""
    content_type = response.get("Content-Type", "").split(";")[0]
    head = f"{response.status_code} {content_type}"
    if response.get("Location"):
        head += f" → {response['Location']}"
    if response.get("Content-Disposition"):  # a download's file name, as the reader's browser saves it
        head += f" ({response['Content-Disposition']})"
    if content_type not in ("text/html", "application/json", "text/csv", "text/plain"):
        return head  # a PDF, an archive, a file: its bytes are another test's subject
    content = (b"".join(response.streaming_content) if response.streaming else response.content).decode()
    if content_type == "application/json":
        body = json_text(json.loads(content))
    elif content_type == "text/html":
        body = page_text(content)
    else:
        if "\r\n" in content:  # CSV's line ends (RFC 4180), said once: the golden file is read back as text
            head += " (lignes terminées par CRLF)"
        body = volatile_free(content.replace("\r\n", "\n"))
    return f"{head}\n{body}"
