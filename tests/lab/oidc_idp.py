"""A small, real OpenID Connect identity provider on 127.0.0.1 for the single sign-on tests.

It serves discovery, authorize (authorization code with PKCE S256), token, userinfo and JWKS over real HTTP, and
signs ID tokens with RS256 using Authlib's JOSE library (joserfc) and Authlib's PKCE helper. Who "signs in" at
its authorize endpoint is set by the test (`idp.next_identity`), standing in for the provider's own login form.
"""

import base64
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlencode, urlparse

from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

from tests.fixtures.processes import free_port

CLIENT_ID = "promptlab-test-client"
CLIENT_SECRET = "test-client-secret-not-a-real-one"


class IdentityProvider:
    def __init__(self) -> None:
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.key = RSAKey.generate_key(2048, parameters={"kid": "test-key-1", "use": "sig", "alg": "RS256"})
        self.next_identity: dict = {}
        self.codes: dict[str, dict] = {}
        self.access_tokens: dict[str, dict] = {}
        self.requests: list[str] = []  # paths served, so a test can see the whole flow went through here
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> "IdentityProvider":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def discovery(self) -> dict:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "userinfo_endpoint": f"{self.issuer}/userinfo",
            "jwks_uri": f"{self.issuer}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
            "code_challenge_methods_supported": ["S256"],
        }

    def authorize(self, query: dict) -> tuple[int, dict]:
        if query.get("client_id") != CLIENT_ID or query.get("response_type") != "code":
            return 400, {"error": "invalid_request"}
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            return 400, {"error": "invalid_request", "error_description": "PKCE S256 required"}
        code = secrets.token_urlsafe(24)
        self.codes[code] = {**query, "identity": dict(self.next_identity)}
        target = query["redirect_uri"] + "?" + urlencode({"code": code, "state": query.get("state", "")})
        return 302, {"Location": target}

    def token(self, form: dict, basic: tuple[str, str] | None) -> tuple[int, dict]:
        client_id, secret = basic or (form.get("client_id"), form.get("client_secret"))
        if (client_id, secret) != (CLIENT_ID, CLIENT_SECRET):
            return 401, {"error": "invalid_client"}
        grant = self.codes.pop(form.get("code", ""), None)  # a code works once
        if grant is None or form.get("grant_type") != "authorization_code":
            return 400, {"error": "invalid_grant"}
        if form.get("redirect_uri") != grant["redirect_uri"]:
            return 400, {"error": "invalid_grant", "error_description": "redirect_uri mismatch"}
        if create_s256_code_challenge(form.get("code_verifier", "")) != grant["code_challenge"]:
            return 400, {"error": "invalid_grant", "error_description": "PKCE verifier mismatch"}
        identity = grant["identity"]
        now = int(time.time())
        claims = {"iss": self.issuer, "aud": CLIENT_ID, "iat": now, "exp": now + 300, **identity}
        if grant.get("nonce"):
            claims["nonce"] = grant["nonce"]
        id_token = jwt.encode({"alg": "RS256", "kid": "test-key-1"}, claims, self.key)
        access_token = secrets.token_urlsafe(24)
        self.access_tokens[access_token] = identity
        return 200, {"access_token": access_token, "token_type": "Bearer", "expires_in": 300, "id_token": id_token}

    def _handler(self):
        idp = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _send(self, status: int, body: dict) -> None:
                if status == 302:
                    self.send_response(302)
                    self.send_header("Location", body["Location"])
                    self.end_headers()
                    return
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                url = urlparse(self.path)
                idp.requests.append(url.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                if url.path == "/.well-known/openid-configuration":
                    self._send(200, idp.discovery())
                elif url.path == "/jwks":
                    self._send(200, KeySet([idp.key]).as_dict(private=False))
                elif url.path == "/authorize":
                    self._send(*idp.authorize(query))
                elif url.path == "/userinfo":
                    token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                    identity = idp.access_tokens.get(token)
                    self._send(200, identity) if identity else self._send(401, {"error": "invalid_token"})
                else:
                    self._send(404, {"error": "not_found"})

            def do_POST(self) -> None:
                url = urlparse(self.path)
                idp.requests.append(url.path)
                length = int(self.headers.get("Content-Length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                if url.path != "/token":
                    self._send(404, {"error": "not_found"})
                    return
                self._send(*idp.token(form, _basic_auth(self.headers.get("Authorization", ""))))

        return Handler


def _basic_auth(header: str) -> tuple[str, str] | None:
    if not header.startswith("Basic "):
        return None
    client_id, _, secret = base64.b64decode(header[6:]).decode().partition(":")
    return unquote(client_id), unquote(secret)
