"""A fleet of households in a bucket of a SeaweedFS server, and a simulated family app that keeps
changing their vaults, for the object-store tests (issue 15).

Everything here is independent of the Swift code: boto3 (AWS's own client) talks to the server,
and vaultref.py seals and opens the vaults. The server is the one scripts/test starts
(HVT_TEST_S3_*), or one a test starts for itself (``PrivateServer``) when it must stop it.
"""
import hashlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3
import botocore
import pytest
from botocore.config import Config

import vaultref
from vaultref import Household
from workspace import VAULT_TOOL

ENDPOINT = os.environ.get("HVT_TEST_S3_ENDPOINT")
CREDENTIALS_FILE = os.environ.get("HVT_TEST_S3_CREDENTIALS_FILE")


def tool_environment(endpoint=None, credentials_file=None):
    """What an operator sets: the endpoint and a shared-credentials file, nothing secret inline."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_ENDPOINT_URL=endpoint or ENDPOINT, AWS_SHARED_CREDENTIALS_FILE=credentials_file or CREDENTIALS_FILE,
               AWS_CONFIG_FILE="/nonexistent", AWS_REGION="us-east-1")
    return env


def client(endpoint=None, credentials_file=None):
    """boto3 with the test server's credentials, read from the same shared-credentials file."""
    import configparser
    parser = configparser.ConfigParser()
    parser.read(credentials_file or CREDENTIALS_FILE)
    section = parser["default"]
    return boto3.session.Session().client(
        "s3", endpoint_url=endpoint or ENDPOINT, region_name="us-east-1",
        aws_access_key_id=section["aws_access_key_id"], aws_secret_access_key=section["aws_secret_access_key"],
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 8, "mode": "standard"},
                      max_pool_connections=32),
    )


def new_bucket(s3):
    name = "fleet-" + uuid.uuid4().hex[:16]
    s3.create_bucket(Bucket=name)
    return name


class Fleet:
    """`count` households, each with two devices, as v1 vaults under vaults/<id>.vault. Keys of
    those in `with_keys` (all by default) are written to `key_dir` as <id>.vaultkey (0600)."""

    def __init__(self, s3, bucket, count, key_dir: Path, without_keys=0):
        self.s3, self.bucket = s3, bucket
        self.households = [Household(hashlib.sha256(f"fleet {bucket} {i}".encode()).digest()) for i in range(count)]
        self.by_path = {h.vault_path: h for h in self.households}
        self.keyless = set(h.vault_path for h in self.households[:without_keys])
        key_dir.mkdir(parents=True, exist_ok=True)
        for h in self.households:
            if h.vault_path not in self.keyless:
                path = key_dir / f"{h.household_id.hex()}.vaultkey"
                path.write_text(h.vault_key.hex() + "\n")
                path.chmod(0o600)
        self.uploaded = {}
        with ThreadPoolExecutor(16) as pool:
            for path, etag in pool.map(self._upload, self.households):
                self.uploaded[path] = etag

    def _upload(self, h):
        document = {
            "version": 1, "parentPubkey": h.pubkey,
            "parentWrapKey": hashlib.sha256(b"wrap " + h.pubkey.encode()).hexdigest(),
            "childProfiles": [],
            "devices": [
                {"deviceId": d, "deviceName": f"iPad {d}", "isPrimary": d == "kitchen", "subkeyPublicKey": h.subkey_pubkey(d),
                 "addedAt": "2025-11-01T00:00:00Z", "lastSeenAt": "2025-11-01T00:00:00Z", "status": "active"}
                for d in ("kitchen", "bedroom")
            ],
            "groupMemberships": [],
            "createdAt": "2025-11-01T00:00:00Z", "updatedAt": "2025-11-01T00:00:00Z",
        }
        body = vaultref.seal_document(h, document)
        response = self.s3.put_object(Bucket=self.bucket, Key=h.vault_path, Body=body, IfNoneMatch="*")
        return h.vault_path, response["ETag"]

    def read(self, path):
        """(sealed document, ETag, schema version from the header)."""
        response = self.s3.get_object(Bucket=self.bucket, Key=path)
        data = response["Body"].read()
        h = self.by_path[path]
        return vaultref.open_envelope(data, h.vault_key), response["ETag"], data[9]


class App:
    """The families' devices: each change reads a vault, renames one device, raises the revision
    (schema v2), and writes it back with If-Match; a write refused because the vault changed is
    redone on the new version, as the app does. One change at a time per vault."""

    def __init__(self, fleet: Fleet):
        self.fleet = fleet
        self.committed = {}  # vault path → {device id → name}
        self.changes = 0
        self.retries = 0
        self.locks = {path: threading.Lock() for path in fleet.by_path}
        self.stop = threading.Event()
        self.counter = 0
        self.counter_lock = threading.Lock()

    def change(self, path):
        with self.locks[path]:
            with self.counter_lock:
                self.counter += 1
                name = f"renamed by the app #{self.counter}"
            device = random.choice(["kitchen", "bedroom"])
            while True:
                sealed, etag, schema = self.fleet.read(path)
                for entry in sealed["devices"]:
                    if entry["deviceId"] == device:
                        entry["deviceName"] = name
                if sealed["version"] >= 2:
                    sealed["revision"] = sealed.get("revision", 0) + 1
                h = self.fleet.by_path[path]
                body = vaultref.seal_envelope(json.dumps(sealed, indent=2).encode(), h.household_id, h.vault_key, schema=sealed["version"])
                try:
                    self.fleet.s3.put_object(Bucket=self.fleet.bucket, Key=path, Body=body, IfMatch=etag)
                except botocore.exceptions.ClientError as error:
                    if error.response["ResponseMetadata"]["HTTPStatusCode"] in (409, 412):
                        self.retries += 1
                        continue
                    raise
                self.committed.setdefault(path, {})[device] = name
                self.changes += 1
                return

    def run(self, threads=4):
        paths = list(self.fleet.by_path)

        def loop():
            while not self.stop.is_set():
                self.change(random.choice(paths))

        self.workers = [threading.Thread(target=loop, daemon=True) for _ in range(threads)]
        for worker in self.workers:
            worker.start()

    def finish(self):
        self.stop.set()
        for worker in self.workers:
            worker.join()


def migrate(arguments, env=None, cwd=None, **options):
    # Unbuffered pipes: a test that reads some report lines before `finish` must not lose the
    # lines a buffered reader took ahead, as communicate() reads the descriptor, not the buffer
    # (under load the tool writes several lines at once and three went missing that way).
    return subprocess.Popen([VAULT_TOOL, "migrate", *arguments], env=env or tool_environment(), cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0, **options)


def report_lines(stdout: bytes):
    return [json.loads(line) for line in stdout.decode().splitlines() if line.strip()]


def finish(process, timeout=600):
    """Waits for a run `migrate` started: (exit code, report lines, standard error)."""
    stdout, stderr = process.communicate(timeout=timeout)
    return process.returncode, report_lines(stdout), stderr.decode()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrivateServer:
    """A SeaweedFS server of a test's own, which it may stop and start again on the same data
    and ports (the shared one must stay up for the other tests)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.weed = str(Path(sys.executable).parent / "weed")
        self.ports = [free_port() for _ in range(10)]
        self.endpoint = f"http://127.0.0.1:{self.ports[0]}"
        self.credentials_file = CREDENTIALS_FILE
        (folder / "data").mkdir(parents=True)
        (folder / "master.toml").write_text("[master.volume_growth]\ncopy_1 = 1\ncopy_2 = 1\ncopy_3 = 1\ncopy_other = 1\n")
        identities = Path(CREDENTIALS_FILE).parent / "identities.json"
        self.identities = str(identities)
        self.process = None

    def start(self):
        p = self.ports
        self.process = subprocess.Popen(
            [self.weed, "server", f"-dir={self.folder / 'data'}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
             "-master.telemetry=false", "-volume.max=100", "-master.volumeSizeLimitMB=64",
             "-s3", f"-s3.port={p[0]}", f"-s3.port.grpc={p[1]}", f"-s3.port.iceberg={p[2]}", f"-s3.port.lance={p[3]}",
             f"-s3.config={self.identities}", f"-master.port={p[4]}", f"-master.port.grpc={p[5]}",
             f"-volume.port={p[6]}", f"-volume.port.grpc={p[7]}", f"-filer.port={p[8]}", f"-filer.port.grpc={p[9]}",
             f"-filer.localSocket={self.folder / 'filer.sock'}", f"-s3.localSocket={self.folder / 's3.sock'}"],
            cwd=self.folder, stdout=open(self.folder / "server.log", "ab"), stderr=subprocess.STDOUT, start_new_session=True)
        s3 = client(self.endpoint)
        deadline = time.monotonic() + 60
        while True:
            try:
                s3.list_buckets()
                probe = "ready-" + uuid.uuid4().hex[:8]
                s3.create_bucket(Bucket=probe)
                s3.put_object(Bucket=probe, Key="x", Body=b"x")
                return s3
            except Exception:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise
                time.sleep(0.5)

    def stop(self):
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        # weed's gRPC sockets in /tmp are named by port only.
        for port in self.ports:
            for socket_file in Path("/tmp").glob(f"seaweedfs-*-{port}.sock"):
                socket_file.unlink(missing_ok=True)


class CountingProxy:
    """A reverse proxy in front of the test server that counts what passes: every request
    (method, path, query) and, for each ListObjectsV2 page, how many keys it carried. With
    `slow_down(n)`, it answers the next n requests (or every one, with None) `503 SlowDown` itself,
    as a throttling S3 does (only those `when(method, path)` is true of). With `refuse(method, path,
    query)` set, it answers each request that is true of `403 AccessDenied` itself, as a store
    enforcing an IAM policy does. The tool signs for the proxy's address (its endpoint), and the proxy
    forwards the request as it came, Host header included, so the signature still holds."""

    def __init__(self, upstream=None):
        import http.client
        import http.server
        import urllib.parse
        self.upstream = urllib.parse.urlsplit(upstream or ENDPOINT)
        self.requests = []  # (method, path, query dict, keys listed or None)
        self.lock = threading.Lock()
        self.throttle_left = 0
        self.throttle_when = lambda method, path: True
        self.refuse = None
        self.drop_when = None  # (method, path) -> bool: the connection is closed unanswered
        self.deny_when = None  # (method, path) -> bool: answered 403 AccessDenied
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *arguments):
                pass

            def _forward(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                url = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
                with proxy.lock:
                    dropped = proxy.drop_when is not None and proxy.drop_when(self.command, url.path)
                    if dropped:
                        proxy.requests.append((self.command, url.path, query, None, 0))
                if dropped:
                    # As a store that died mid-request: no status line, the connection closed.
                    self.close_connection = True
                    return
                with proxy.lock:
                    denied = proxy.deny_when is not None and proxy.deny_when(self.command, url.path)
                    if denied:
                        proxy.requests.append((self.command, url.path, query, None, 403))
                if denied:
                    answer = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>AccessDenied</Code>"
                              b"<Message>Access Denied</Message></Error>")
                    self.send_response(403)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                    return
                with proxy.lock:
                    throttled = (proxy.throttle_left is None or proxy.throttle_left > 0) and proxy.throttle_when(self.command, url.path)
                    if throttled and proxy.throttle_left:
                        proxy.throttle_left -= 1
                    denied = not throttled and proxy.refuse is not None and proxy.refuse(self.command, url.path, query)
                if throttled or denied:
                    answer = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SlowDown</Code>"
                              b"<Message>Please reduce your request rate.</Message></Error>") if throttled else (
                              b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>AccessDenied</Code>"
                              b"<Message>Access Denied</Message></Error>")
                    status = 503 if throttled else 403
                    with proxy.lock:
                        proxy.requests.append((self.command, url.path, query, None, status))
                    self.send_response(status)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                    return
                connection = http.client.HTTPConnection(proxy.upstream.hostname, proxy.upstream.port, timeout=60)
                connection.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for name, value in self.headers.items():
                    connection.putheader(name, value)
                connection.endheaders(body)
                response = connection.getresponse()
                data = response.read()
                keys = data.count(b"<Key>") if self.command == "GET" and query.get("list-type") == "2" else None
                with proxy.lock:
                    proxy.requests.append((self.command, url.path, query, keys, response.status))
                self.send_response(response.status)
                for name, value in response.getheaders():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                connection.close()

            do_GET = do_PUT = do_DELETE = do_HEAD = do_POST = _forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def slow_down(self, count=None, when=lambda method, path: True):
        with self.lock:
            self.throttle_left, self.throttle_when = count, when

    def drop(self, when=lambda method, path: True):
        """Closes every connection `when(method, path)` is true of without an answer (None: none)."""
        with self.lock:
            self.drop_when = when

    def deny(self, when=lambda method, path: True):
        """Answers 403 AccessDenied to every request `when(method, path)` is true of (None: none)."""
        with self.lock:
            self.deny_when = when

    def denied(self):
        with self.lock:
            return [path for _, path, _, _, status in self.requests if status == 403]

    def dropped(self):
        """The paths whose connection was closed unanswered, once per request."""
        with self.lock:
            return [path for _, path, _, _, status in self.requests if status == 0]

    def throttled(self):
        """The paths answered 503 SlowDown, once per answer."""
        with self.lock:
            return [path for _, path, _, _, status in self.requests if status == 503]

    def listings(self):
        """(query, keys) of each ListObjectsV2 page the server answered."""
        with self.lock:
            return [(query, keys) for method, _, query, keys, status in self.requests if keys is not None and status == 200]

    def reset(self):
        with self.lock:
            self.requests.clear()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# The fixtures of the object-store tests, made available to every test module by conftest.py.

@pytest.fixture
def s3():
    """boto3 on the S3 server scripts/test starts."""
    return client()


@pytest.fixture
def proxy():
    """A CountingProxy of the test's own in front of that server."""
    counting = CountingProxy()
    yield counting
    counting.close()
