"""The proxy's HTML pages: the consent page, the list of consents, an error page.

Rules it keeps:

* every value shown is HTML-escaped; no script runs on these pages (the
  headers of `_http` forbid any);
* the consent page names the client (its self-declared name marked as
  such, and its client id; for a client metadata document, its host), the
  redirect URI the answer will go to, the scopes, the resource, and the
  upstream provider with the scopes asked of it
  (security_best_practices.mdx, "Consent UI Requirements"); it carries the authorization's id and a CSRF
  token in hidden fields, and posts to the proxy (approve or deny);
* the consents page lists what the signed-in user approved, each with a
  revoke button (a POST carrying a CSRF token).
"""

from __future__ import annotations

from html import escape
from typing import Any, Iterable

__all__ = ["consent_page", "consents_page", "error_page"]

_STYLE = (
    "<style>body{font:16px system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em}"
    "code{background:#eee;padding:0 .2em;word-break:break-all}button{font-size:1em;margin-right:1em}</style>"
)


def _head(title: str) -> str:
    return f"<!doctype html><html lang=en><meta charset=utf-8><title>{escape(title)}</title>{_STYLE}<body>"


def consent_page(*, client: dict[str, Any], redirect_uri: str, scopes: Iterable[str], resource: str, txn: str, csrf: str,
                 server_name: str, upstream: str, upstream_scopes: Iterable[str]) -> str:
    name = client.get("client_name")
    host = client.get("host")
    if host:  # a client metadata document: its host is what DNS and TLS vouch for
        who = (
            f"The application at <strong id=client-host>{escape(host)}</strong>"
            + (f" (calling itself <span id=client-name>{escape(name)}</span>)" if name else "")
            + f", client id <code id=client-id>{escape(client['client_id'])}</code>,"
        )
    elif name:
        who = (
            f"<strong id=client-name>{escape(name)}</strong> (a name the client gave itself; client id "
            f"<code id=client-id>{escape(client['client_id'])}</code>)"
        )
    else:
        who = f"the client <code id=client-id>{escape(client['client_id'])}</code>"
    items = "".join(f"<li><code>{escape(s)}</code></li>" for s in scopes) or "<li>no scopes</li>"
    return (
        _head(f"Allow access to {server_name}?")
        + f"<h1>Allow access to {escape(server_name)}?</h1>"
        + f"<p>{who} asks to act on your behalf at <code id=resource>{escape(resource)}</code>.</p>"
        + f"<p>If you allow it, the answer goes to <code id=redirect-uri>{escape(redirect_uri)}</code>. "
        + "Allow only if you started this from that application.</p>"
        + f"<p>Scopes:</p><ul id=scopes>{items}</ul>"
        + f"<p>You will then sign in at <code id=upstream>{escape(upstream)}</code>, which is asked for: "
        + (" ".join(f"<code class=upstream-scope>{escape(s)}</code>" for s in upstream_scopes) or "no scopes")
        + ".</p>"
        + "<form method=post action=/oauth/consent>"
        + f"<input type=hidden name=txn value=\"{escape(txn)}\"><input type=hidden name=csrf value=\"{escape(csrf)}\">"
        + "<button id=approve name=decision value=approve type=submit>Allow</button>"
        + "<button id=deny name=decision value=deny type=submit>Deny</button></form></body></html>"
    )


def consents_page(*, user: str, consents: list[dict[str, Any]], csrf: str) -> str:
    rows = "".join(
        "<li>"
        + (f"{escape(c['client_name'])} " if c.get("client_name") else "")
        + f"<code class=client-id>{escape(c['client_id'])}</code> "
        + f"({escape(' '.join(c.get('scopes', [])))}) "
        + "<form method=post action=/oauth/consents style=display:inline>"
        + f"<input type=hidden name=client_id value=\"{escape(c['client_id'])}\">"
        + f"<input type=hidden name=csrf value=\"{escape(csrf)}\">"
        + f"<button class=revoke id=\"revoke-{escape(c['client_id'])}\" type=submit>Revoke</button></form></li>"
        for c in consents
    )
    return (
        _head("Your approved applications")
        + f"<h1>Applications you allowed</h1><p>Signed in as <code id=user>{escape(user)}</code>.</p>"
        + (f"<ul id=consents>{rows}</ul>" if rows else "<p id=none>None.</p>")
        + "</body></html>"
    )


def error_page(title: str, message: str) -> str:
    return _head(title) + f"<h1 id=error>{escape(title)}</h1><p id=message>{escape(message)}</p></body></html>"
