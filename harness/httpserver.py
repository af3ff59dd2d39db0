"""A real HTTP server on 127.0.0.1 for the tests of download code
(``referee models install``): it serves fixed bodies, and can declare more
bytes than it sends (an interrupted download)."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path


class Server:
    """Serves ``routes`` (path -> (body, declared length or None)) on 127.0.0.1."""

    def __init__(self, routes: dict[str, tuple[bytes, int | None]]) -> None:
        routes_ = routes

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path not in routes_:
                    self.send_error(404)
                    return
                body, length = routes_[self.path]
                self.send_response(200)
                self.send_header("Content-Length", str(length or len(body)))
                self.end_headers()
                self.wfile.write(body)  # fewer bytes than declared: an interruption
                self.wfile.flush()
                self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def leftovers(dest: Path) -> list[str]:
    """What an install left in ``dest`` (its model folder, and nothing half-made)."""
    return sorted(p.name for p in dest.iterdir()) if dest.exists() else []
