"""What a connection's API key and base URL may be: one rule, asked by the services (API and pages) and the adapters.

An API key travels in an HTTP header, which carries printable ASCII only; a space or line break inside one is
always a paste mistake (and a CR/LF would split the header). Base URLs are web addresses: http or https only.
"""

from urllib.parse import urlsplit

BASE_URL_SCHEMES = ("http", "https")
# Providers' keys are 40 to 200 characters; a JWT some OpenAI-compatible servers take runs to a kilobyte or so.
MAX_API_KEY_CHARS = 2048


def api_key_problem(key: str) -> str | None:
    """Why `key` cannot be an API key, naming the position of the first bad character but never the key itself."""
    if len(key) > MAX_API_KEY_CHARS:
        return f"An API key has at most {MAX_API_KEY_CHARS:,} characters; this one has {len(key):,}."
    for position, char in enumerate(key, start=1):
        if char in "\r\n":
            return f"An API key is one line; this one has a line break at character {position}."
        if char.isspace():
            return f"An API key has no spaces; this one has a space at character {position}."
        if not "!" <= char <= "~":
            return f"An API key is printable ASCII only; this one has another character at character {position}."
    return None


def base_url_problem(url: str) -> str | None:
    scheme = urlsplit(url).scheme.lower()
    if scheme not in BASE_URL_SCHEMES:
        return f"Use an http:// or https:// URL (this one starts with {scheme or 'no scheme'}://)."
    return None
