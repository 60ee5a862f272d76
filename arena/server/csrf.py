"""The forms' CSRF tokens, in the web layer: bound to the browser's session, rotated at each
login, and a login form that a cross-site page cannot submit.

* **A session** is what ``/login`` starts: besides the token's cookie, the browser gets a
  random *session nonce* in a second ``HttpOnly``, ``SameSite=Strict`` cookie
  (:data:`SESSION_COOKIE`).  Every form of a logged-in page carries
  ``HMAC(secret, participant id, nonce)`` (:meth:`Csrf.form_token`), checked on every POST
  that changes something (:meth:`Csrf.form_ok`).  A new login makes a new nonce, so the
  tokens of earlier pages stop working; logging out removes it.  (A token cookie set
  without ``/login``, as scripts do, has no nonce: its forms' token is the HMAC of the
  participant's id and an empty nonce.)
* **The login form** is a double submit: ``GET /login`` sets a random pre-login nonce in an
  ``HttpOnly``, ``SameSite=Strict`` cookie (:data:`LOGIN_COOKIE`, sent to ``/login`` only)
  and the form carries ``HMAC(secret, "login", nonce)`` (:meth:`Csrf.login_token`).  A
  cross-site POST to ``/login`` comes without the cookie (``SameSite``), and a page that is
  not ours cannot read or compute the token: it is refused (403), so nobody can log a
  visitor in as someone else.

The key is the competition folder's ``secret``.  Nonces are 256 random bits; a cookie
value that does not look like one is ignored.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from typing import Optional

#: the cookie of the session nonce (set at login)
SESSION_COOKIE = "arena_session"
#: the cookie of the pre-login nonce (set by the login form, sent to /login only)
LOGIN_COOKIE = "arena_login"
_NONCE_RE = re.compile(r"^[A-Za-z0-9_-]{32,64}$")
_HEX_RE = re.compile(r"^[0-9a-f]{64}$")


def new_nonce() -> str:
    """A new random nonce (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def nonce_of(cookie: Optional[str]) -> str:
    """A cookie's nonce, or "" when it is missing or does not look like one."""
    return cookie if cookie and _NONCE_RE.match(cookie) else ""


class Csrf:
    """Tokens keyed by a competition's secret."""

    def __init__(self, secret: str) -> None:
        self._key = secret.encode("utf-8")

    def _mac(self, *parts: str) -> str:
        return hmac.new(self._key, "\x00".join(parts).encode("utf-8"),
                        hashlib.sha256).hexdigest()

    def form_token(self, user_id: int, session: str) -> str:
        """The token of a participant's forms in the session of nonce ``session``."""
        return self._mac("form", str(user_id), session)

    def form_ok(self, user_id: Optional[int], session: str, token: Optional[str]) -> bool:
        """Whether ``token`` is the form token of this participant's session."""
        return (user_id is not None and bool(token) and _HEX_RE.match(token or "") is not None
                and hmac.compare_digest(token or "", self.form_token(user_id, session)))

    def login_token(self, nonce: str) -> str:
        """The token of the login form whose pre-login cookie holds ``nonce``."""
        return self._mac("login", nonce)

    def login_ok(self, nonce: str, token: Optional[str]) -> bool:
        """Whether a login POST came from our form: its cookie's nonce and token match."""
        return (bool(nonce) and bool(token) and _HEX_RE.match(token or "") is not None
                and hmac.compare_digest(token or "", self.login_token(nonce)))
