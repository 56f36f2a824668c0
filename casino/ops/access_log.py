"""gunicorn's access lines as JSON fields (gunicorn.conf.py `logger_class`), beside the readable message.

Each line: `client`, `method`, `path`, `query`, `status`, `bytes`, `duration_ms`, `user_agent`, `referer` and the
`request_id` the application answered with (X-Request-ID, casino/ops/request_id.py), so that an access line and the
application's lines of the same request share it.
"""

import traceback

from gunicorn.glogging import Logger


class JsonAccessLogger(Logger):
    def access(self, resp, req, environ, request_time):
        if not (self.cfg.accesslog or self.cfg.logconfig or self.cfg.logconfig_dict):
            return
        try:
            atoms = self.atoms(resp, req, environ, request_time)
            headers = {name.lower(): value for name, value in (resp.headers or [])}
            fields = {
                "client": atoms["h"],
                "method": atoms["m"],
                "path": atoms["U"],
                "query": atoms["q"] or "",
                "status": int(atoms["s"]),
                "bytes": atoms["B"] or 0,
                "duration_ms": atoms["M"],
                "user_agent": atoms["a"],
                "referer": atoms["f"],
                "request_id": headers.get("x-request-id", "-"),
            }
            self.access_log.info(self.cfg.access_log_format, self.atoms_wrapper_class(atoms), extra=fields)
        except Exception:  # noqa: BLE001 (gunicorn's own rule: an access line never breaks a response)
            self.error(traceback.format_exc())
