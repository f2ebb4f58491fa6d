"""Where a client finds NATS, as the Go SDK does (sdk/credentials.go)."""

from __future__ import annotations

import base64
import functools
import hashlib
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import nkeys

from . import subjects

CREDENTIALS_ENV = "SANDOX_NATS_CREDS"
"""Names a .creds file that overrides the default."""

URL_ENV = "SANDOX_NATS_URL"
"""Names the NATS server URL."""

CLIENT_CREDENTIALS_FILE = "client.creds"
"""The file `sandox up` writes, with mode 0600, in config_dir()."""

DEFAULT_URL = "nats://127.0.0.1:4222"


def config_dir() -> Path:
    """Returns sandox's directory under the user's configuration directory:
    $XDG_CONFIG_HOME/sandox, or ~/.config/sandox on Linux (Go's
    os.UserConfigDir)."""
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif os.name == "nt":
        base = Path(os.environ.get("AppData", Path.home()))
    else:
        xdg = os.environ.get("XDG_CONFIG_HOME", "")
        base = Path(xdg) if xdg else Path.home() / ".config"
    return base / "sandox"


def default_credentials() -> str:
    """Returns the credentials file a client uses when it is given none:
    $SANDOX_NATS_CREDS when set, else client.creds in config_dir() when that
    file exists, else "" (connect without credentials)."""
    env = os.environ.get(CREDENTIALS_ENV, "")
    if env:
        return env
    f = config_dir() / CLIENT_CREDENTIALS_FILE
    return str(f) if f.exists() else ""


def default_url() -> str:
    """Returns $SANDOX_NATS_URL, or nats://127.0.0.1:4222 (where `sandox up`
    listens)."""
    return os.environ.get(URL_ENV, "") or DEFAULT_URL


def server_list(url: str | Sequence[str]) -> list[str]:
    """Returns the server URLs of a url setting: a list of URLs, or one
    string of comma-separated URLs ("nats://a:4222,nats://b:4222"), as the
    Go client takes them (nats.Connect) and as $SANDOX_NATS_URL may hold
    them. Spaces around each are dropped. Raises ValueError for an empty
    list or an empty entry."""
    if isinstance(url, str):
        parts = url.split(",")
    elif isinstance(url, Sequence) and all(isinstance(u, str) for u in url):
        parts = [p for u in url for p in u.split(",")]
    else:
        raise ValueError(f"NATS url {url!r}: want a URL, comma-separated URLs, or a list of URLs")
    urls = [p.strip() for p in parts]
    if not urls or any(not u for u in urls):
        raise ValueError(f"NATS url {url!r}: an empty server URL")
    return urls


# A decorated block of a .creds file: a dashed header line, the content,
# a dashed footer line (nats-io/jwt's ParseDecoratedJWT reads the same).
_BLOCK = re.compile(r"^\s*-{3,}[^\n]*-{3,}\s*\n\s*(\S+)\s*\n\s*-{3,}[^\n]*-{3,}", re.MULTILINE)


@dataclass(frozen=True)
class Caller:
    """A client's NATS identity, to sign the commands it sends so that the
    orchestrator can record and verify who sent each one (docs/audit.md),
    as the Go SDK's sdk/caller.go does."""

    jwt: str
    seed: bytes

    def headers(self, command_id: str) -> dict[str, str]:
        """The headers that name and prove the caller of a command: the
        user JWT and the user key's signature of the command id (base64url,
        no padding)."""
        return self._signed(command_id.encode())

    def batch_headers(self, batch_id: str, payload: bytes) -> dict[str, str]:
        """The headers that name and prove the caller of an action batch:
        the signature covers the batch id and the SHA-256 of the payload
        (schemas.SignedBatch in Go), so it names these actions only."""
        return self._signed(f"{batch_id}\n{hashlib.sha256(payload).hexdigest()}".encode())

    @functools.cached_property
    def _keypair(self) -> nkeys.KeyPair:
        # Decoded once, as the Go SDK keeps its key pair: every batch is
        # signed with it.
        return nkeys.from_seed(self.seed)

    def _signed(self, data: bytes) -> dict[str, str]:
        sig = self._keypair.sign(data)
        return {
            subjects.HEADER_CALLER_JWT: self.jwt,
            subjects.HEADER_CALLER_SIG: base64.urlsafe_b64encode(sig).rstrip(b"=").decode(),
        }


def load_caller(path: str) -> Caller:
    """Reads the user JWT and the seed of a .creds file. Raises ValueError
    naming the file when it holds neither in the decorated form."""
    text = Path(path).read_text()
    blocks = _BLOCK.findall(text)
    if len(blocks) < 2 or not blocks[1].startswith("SU"):
        raise ValueError(f"credentials {path}: want a user JWT and a user seed (a .creds file from `sandox creds`)")
    return Caller(jwt=blocks[0], seed=blocks[1].encode())
