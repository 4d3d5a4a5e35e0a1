"""Signature Version 4: what the tools send to an object store agrees with botocore's signer.

A local HTTP server stands in for the store and keeps every request as it came off the wire.
The tools run against it with random credentials (sometimes a session token), random regions and
random object keys full of characters that need encoding; botocore (AWS's own Python signer)
then signs each captured request from the same parts, and the two signatures must be equal. The
keys on the wire must also be encoded as botocore encodes them, and the payload hash must be the
body's. The AWS test suite itself is checked in the Swift tests (SigV4Tests).
"""
import hashlib
import http.server
import os
import random
import subprocess
import threading
import urllib.parse

import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from workspace import VAULT_TOOL

ROUNDS = int(os.environ.get("SIGNING_ROUNDS", "30"))
ALPHABET = "abcXYZ019 -_.~!$&'()*+,;=:@%?#[]{}^`|\"<>\\é漢😀/"


class Recorder(http.server.BaseHTTPRequestHandler):
    captured = []

    def log_message(self, *args):
        pass

    def respond(self):
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length) if length else b""
        Recorder.captured.append((self.command, self.path, [(k, v) for k, v in self.headers.items()], body))
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        if self.command == "PUT":
            self.send_response(200)
            self.send_header("ETag", '"0123456789abcdef"')
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif "list-type" in query:
            xml = b'<?xml version="1.0"?><ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>'
            self.send_response(200)
            self.send_header("Content-Length", str(len(xml)))
            self.end_headers()
            self.wfile.write(xml)
        else:
            xml = b"<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>"
            self.send_response(404)
            self.send_header("Content-Length", str(len(xml)))
            self.end_headers()
            self.wfile.write(xml)

    do_GET = do_PUT = do_HEAD = respond


@pytest.fixture(scope="module")
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def random_key(rng):
    text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 24)))
    return "vaults/" + text.strip("/").replace("//", "/") + ".vault"


def check_signature(request, access_key, secret, token, region):
    method, raw_path, headers, body = request
    authorization = next(v for k, v in headers if k.lower() == "authorization")
    algorithm, rest = authorization.split(" ", 1)
    fields = dict(part.strip().split("=", 1) for part in rest.split(","))
    assert algorithm == "AWS4-HMAC-SHA256"
    signed = fields["SignedHeaders"].split(";")
    amz_date = next(v for k, v in headers if k.lower() == "x-amz-date")
    assert fields["Credential"] == f"{access_key}/{amz_date[:8]}/{region}/s3/aws4_request"
    assert next(v for k, v in headers if k.lower() == "x-amz-content-sha256") == hashlib.sha256(body).hexdigest()
    if token:
        assert "x-amz-security-token" in signed

    # botocore signs the same request: the signed headers as sent, the URL as sent.
    chosen = {k: v for k, v in headers if k.lower() in signed}
    host = chosen.pop("Host", None) or chosen.pop("host")
    aws = AWSRequest(method=method, url=f"http://{host}{raw_path}", headers=chosen, data=body)
    aws.context["timestamp"] = amz_date
    auth = S3SigV4Auth(Credentials(access_key, secret, token), "s3", region)
    canonical = auth.canonical_request(aws)
    assert auth.signed_headers(auth.headers_to_sign(aws)) == fields["SignedHeaders"]
    expected = auth.signature(auth.string_to_sign(aws, canonical), aws)
    assert fields["Signature"] == expected, f"{method} {raw_path}\n{canonical}"


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_every_request_the_tools_send_is_signed_as_botocore_signs_it(server, tmp_path, round_):
    rng = random.Random(1500 + round_)
    access_key = "AKID" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
    secret = "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/") for _ in range(40))
    token = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789+/=") for _ in range(rng.randint(20, 200))) if rng.random() < 0.5 else None
    region = rng.choice(["us-east-1", "eu-west-3", "ap-southeast-2", "garage", "minio-local"])
    bucket = "b" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-") for _ in range(rng.randint(2, 30))) + "z"
    key = random_key(rng)
    prefix = random_key(rng).rsplit("/", 1)[0] + "/" + "".join(rng.choice(ALPHABET) for _ in range(3))
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_ENDPOINT_URL=server, AWS_ACCESS_KEY_ID=access_key, AWS_SECRET_ACCESS_KEY=secret, AWS_REGION=region,
               AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent")
    if token:
        env["AWS_SESSION_TOKEN"] = token

    source = tmp_path / "v.vault"
    source.write_bytes(open(os.path.join(os.path.dirname(__file__), "..", "Fixtures", "testkit", "ok-household.vault"), "rb").read())
    key_file = tmp_path / "k"
    key_file.write_bytes(open(os.path.join(os.path.dirname(__file__), "..", "Fixtures", "keys", "parent.nsec"), "rb").read())
    key_file.chmod(0o600)
    # A key folder a run accepts (an empty one is refused before any request).
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / ("ab" * 32 + ".vaultkey")).write_text("00" * 32 + "\n")
    Recorder.captured = []
    runs = [
        ["inspect", f"s3://{bucket}/{key}"],                        # GET
        ["census", f"s3://{bucket}/{prefix}"],                       # GET ?list-type=2&prefix=…
        ["migrate", "--key-file", str(key_file), "--to", "2", "-o", f"s3://{bucket}/{key}", str(source)],  # ranged GET, then PUT
        # GET ?list-type=2&prefix=…&start-after=…: a shard's listing starts after its first key
        ["migrate", "--source", f"s3://{bucket}/{prefix}/", "--to", "2", "--in-place", "--vault-key-dir", str(keys),
         "--shard", "2/3", "--dry-run"],
    ]
    for arguments in runs:
        subprocess.run([VAULT_TOOL, *arguments], env=env, capture_output=True, timeout=60)
    methods = [request[0] for request in Recorder.captured]
    assert methods.count("PUT") == 1 and methods.count("GET") >= 3, methods
    for request in Recorder.captured:
        check_signature(request, access_key, secret, token, region)
    queries = [urllib.parse.parse_qs(urllib.parse.urlsplit(request[1]).query) for request in Recorder.captured]
    assert [q["start-after"] for q in queries if "start-after" in q] == [[f"{prefix}/5555555555555556"]]
    # The object's key goes on the wire encoded as botocore encodes it (path style).
    object_paths = [request[1] for request in Recorder.captured if request[0] == "PUT"]
    assert object_paths == [f"/{bucket}/" + urllib.parse.quote(key, safe="/~")]
    ranged = [dict((k.lower(), v) for k, v in request[2]) for request in Recorder.captured if request[0] == "GET"]
    assert any(headers.get("range") == "bytes=0-0" and "range" in headers["authorization"] for headers in ranged)
