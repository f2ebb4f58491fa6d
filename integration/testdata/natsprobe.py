"""A hostile tool: a raw NATS client, written on the protocol itself.

The adversarial integration tests load this file as a user tool into a real
sandbox. It speaks NATS over a plain socket (INFO, CONNECT, SUB, PUB, PING,
-ERR), signs the server's nonce with an nkey seed (Ed25519, RFC 8032's
reference code, since the image has no crypto package), and reports every
line the server sends back, so that a test can assert the refusal itself.
"""
import base64
import hashlib
import json
import os
import socket
import time
from urllib.parse import urlparse

# --- Ed25519 (RFC 8032, section 6) -------------------------------------
_p = 2**255 - 19
_d = -121665 * pow(121666, _p - 2, _p) % _p
_q = 2**252 + 27742317777372353535851937790883648493
_sqrt_m1 = pow(2, (_p - 1) // 4, _p)


def _add(P, Q):
    A = (P[1] - P[0]) * (Q[1] - Q[0]) % _p
    B = (P[1] + P[0]) * (Q[1] + Q[0]) % _p
    C = 2 * P[3] * Q[3] * _d % _p
    D = 2 * P[2] * Q[2] % _p
    E, F, G, H = B - A, D - C, D + C, B + A
    return (E * F % _p, G * H % _p, F * G % _p, E * H % _p)


def _mul(s, P):
    Q = (0, 1, 1, 0)
    while s > 0:
        if s & 1:
            Q = _add(Q, P)
        P = _add(P, P)
        s >>= 1
    return Q


def _compress(P):
    zinv = pow(P[2], _p - 2, _p)
    x, y = P[0] * zinv % _p, P[1] * zinv % _p
    return int.to_bytes(y | ((x & 1) << 255), 32, "little")


def _recover_x(y, sign):
    x2 = (y * y - 1) * pow(_d * y * y + 1, _p - 2, _p)
    x = pow(x2, (_p + 3) // 8, _p)
    if (x * x - x2) % _p != 0:
        x = x * _sqrt_m1 % _p
    if (x & 1) != sign:
        x = _p - x
    return x


_gy = 4 * pow(5, _p - 2, _p) % _p
_gx = _recover_x(_gy, 0)
_G = (_gx, _gy, 1, _gx * _gy % _p)


def _sign(secret, msg):
    h = hashlib.sha512(secret).digest()
    a = int.from_bytes(h[:32], "little")
    a &= (1 << 254) - 8
    a |= 1 << 254
    A = _compress(_mul(a, _G))
    r = int.from_bytes(hashlib.sha512(h[32:] + msg).digest(), "little") % _q
    R = _compress(_mul(r, _G))
    k = int.from_bytes(hashlib.sha512(R + A + msg).digest(), "little") % _q
    return R + int.to_bytes((r + k * a) % _q, 32, "little")


# --- credentials ---------------------------------------------------------


def _parse_creds(text):
    lines = [l.strip() for l in text.splitlines()]
    jwt = next(l for l in lines if l.startswith("eyJ"))
    seed = next(l for l in lines if l.startswith("SU"))
    raw = base64.b32decode(seed + "=" * (-len(seed) % 8))
    return jwt, raw[2:34]


# --- the protocol --------------------------------------------------------


class _Conn:
    def __init__(self, url):
        if url.startswith("unix://"):
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(5)
            self.sock.connect(url[len("unix://"):])
        else:
            u = urlparse(url)
            self.sock = socket.create_connection((u.hostname, u.port or 4222), timeout=5)
        self.buf = b""

    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed by the server")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line.decode()

    def send(self, data):
        self.sock.sendall(data.encode())

    def until_pong(self, out):
        """Appends to out the lines the server sends until its PONG (its
        PINGs and INFO updates left out), and returns out."""
        while True:
            l = self.line()
            if l == "PONG":
                return out
            if l == "PING":
                self.send("PONG\r\n")
            elif l.startswith("INFO "):
                pass  # the server's update after CONNECT
            elif l.startswith("MSG "):
                out.append(l)
                self.line()  # the payload
            else:
                out.append(l)


def probe(ops: list, creds_path: str = "", creds_text: str = "", url: str = "") -> dict:
    """Connect to NATS and try each operation, reporting the server's answers.

    Args:
        ops: operations, each ["sub", subject] or ["pub", subject, payload, reply].
        creds_path: a .creds file to authenticate with ("" for none).
        creds_text: the text of a .creds file, instead of creds_path.
        url: the NATS URL; "" takes SANDOX_NATS_URL.
    """
    if creds_path:
        with open(creds_path) as f:
            creds_text = f.read()
    c = _Conn(url or os.environ["SANDOX_NATS_URL"])
    info = json.loads(c.line()[len("INFO "):])
    connect = {"verbose": False, "pedantic": False, "protocol": 1, "name": "natsprobe", "echo": True}
    if creds_text:
        jwt, secret = _parse_creds(creds_text)
        sig = _sign(secret, info["nonce"].encode())
        connect["jwt"] = jwt
        connect["sig"] = base64.urlsafe_b64encode(sig).decode().rstrip("=")
    # The server may answer the first PING before it has checked the
    # credentials: a second round trip sees the verdict.
    c.send("CONNECT " + json.dumps(connect) + "\r\nPING\r\n")
    answer = []
    try:
        c.until_pong(answer)
        c.send("PING\r\n")
        c.until_pong(answer)
    except ConnectionError as e:
        answer.append(str(e))
    if answer:
        return {"connect": " ".join(answer), "results": []}
    results = []
    for i, op in enumerate(ops):
        if op[0] == "sub":
            c.send("SUB %s %d\r\nPING\r\n" % (op[1], i + 1))
        else:
            payload = op[2] if len(op) > 2 else "probe"
            reply = (" " + op[3]) if len(op) > 3 and op[3] else ""
            c.send("PUB %s%s %d\r\n%s\r\nPING\r\n" % (op[1], reply, len(payload.encode()), payload))
        got = []
        try:
            c.until_pong(got)
        except ConnectionError as e:
            got.append(str(e))
        results.append({"op": op[0], "subject": op[1], "answer": got})
    time.sleep(0.2)
    c.sock.close()
    return {"connect": "ok", "results": results}
