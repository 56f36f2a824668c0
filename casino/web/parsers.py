"""The API's parsers: a JSON body nested thousands deep is a 400, never a RecursionError; a body that sends the time
of an act is a 400 naming R30 (casino.web.clock)."""

import io

from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser

from casino.web.clock import refuse_act_times

# The deepest legitimate body (a correction's chips, a spin's bets) nests 3 levels; 32 leaves room.
MAX_DEPTH = 32


def nesting_depth(raw, limit=MAX_DEPTH):
    """How deep the arrays and objects of a JSON text nest, counted up to `limit` + 1 (strings skipped).

    Hand-written: the standard library offers no depth limit and recurses until RecursionError.
    """
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return 0
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # closing quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return deepest


class DepthLimitedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream is not None else b""
        if nesting_depth(raw) > MAX_DEPTH:
            raise ValidationError(
                {"body": [f"Le contenu JSON est imbriqué sur plus de {MAX_DEPTH} niveaux : requête refusée."]}
            )
        data = super().parse(io.BytesIO(raw), media_type, parser_context)
        refuse_act_times(data)
        return data


class ActTimeRefusingFormParser(FormParser):
    """Form bodies of the API: a time of an act sent by the client is refused (R30)."""

    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        refuse_act_times(data)
        return data


class ActTimeRefusingMultiPartParser(MultiPartParser):
    """Multipart bodies of the API: a time of an act sent by the client is refused (R30)."""

    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        refuse_act_times(data.data)
        return data
