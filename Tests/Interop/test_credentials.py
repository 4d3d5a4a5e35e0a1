"""The AWS SDKs' default credential chain (issue 38): the tools pick the same source as botocore.

One loopback server plays every AWS party the chain may ask: STS (AssumeRole, whose signature it
checks with botocore's signer, and AssumeRoleWithWebIdentity), the SSO portal, the container
credentials endpoint, EC2 instance metadata (IMDSv2) and an S3 bucket that checks every
request's SigV4 signature and session token with botocore's signer. Every credential it hands
out has an access key id that says where it came from, so the key a request was signed with
names the source (and, for an assumed role, the source of the credentials that assumed it).

For seeded random environments (variables set or not, profiles with every kind of source, a
container endpoint, an instance role or none), botocore's own resolver
(``botocore.session.Session().get_credentials()``, same environment and files) and a real
``vault-tool census`` against the fake bucket must pick the same source, or both find none, or
both fail. Refresh is checked by counting fetches, never by time.
"""
import base64
import collections
import hashlib
import http.server
import json
import os
import random
import subprocess
import sys
import threading
import urllib.parse
from datetime import datetime, timedelta, timezone
from pathlib import Path

import botocore.session
import pytest
from botocore.auth import S3SigV4Auth, SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from workspace import VAULT_TOOL

CASES = int(os.environ.get("CREDENTIAL_CASES", "72"))
REGION = "us-east-1"
BUCKET = "credential-chain"
WEB_TOKEN = "web-identity-token-" + os.urandom(12).hex()
CONTAINER_TOKEN = "container-token-" + os.urandom(12).hex()
SSO_TOKEN = "sso-access-token-" + os.urandom(12).hex()


def iso(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def verify_sigv4(method, raw_path, headers, body, service, lookup):
    """The access key id of a request, if its signature is botocore's for the same parts and
    its session token is the key's; else raises AssertionError."""
    authorization = headers.get("authorization", "")
    algorithm, _, rest = authorization.partition(" ")
    assert algorithm == "AWS4-HMAC-SHA256", authorization[:40]
    fields = dict(part.strip().split("=", 1) for part in rest.split(","))
    key_id, day, region, signed_service, _ = fields["Credential"].split("/")
    assert (region, signed_service) == (REGION, service)
    secret, token = lookup(key_id)
    assert headers.get("x-amz-security-token") == token, f"session token of {key_id}"
    signed = fields["SignedHeaders"].split(";")
    if token:
        assert "x-amz-security-token" in signed
    chosen = {k: v for k, v in headers.items() if k in signed}
    host = chosen.pop("host")
    request = AWSRequest(method=method, url=f"http://{host}{raw_path}", headers=chosen, data=body)
    request.context["timestamp"] = headers["x-amz-date"]
    assert headers["x-amz-date"][:8] == day
    auth = (S3SigV4Auth if service == "s3" else SigV4Auth)(Credentials(key_id, secret, token), service, REGION)
    expected = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
    assert fields["Signature"] == expected, f"{method} {raw_path} signed by {key_id}"
    return key_id


class FakeAWS:
    def __init__(self):
        self.lock = threading.Lock()
        self.keys = {}          # access key id -> (secret, session token or None)
        self.origin = {}        # access key id -> what handed it out
        self.counter = 0
        self.reset()

    def reset(self):
        with self.lock:
            self.imds_role = None
            self.lifetime = timedelta(hours=6)
            self.fetches = collections.Counter()
            self.s3_keys = []
            self.expired = set()
            self.expired_for_objects = set()
            self.objects = 0
            self.pages = 1
            self.problems = []

    def register(self, key_id, secret, token, origin):
        with self.lock:
            self.keys[key_id] = (secret, token)
            self.origin[key_id] = origin

    def static(self, label):
        key_id = f"AKIA{label}{os.urandom(4).hex().upper()}"
        secret = base64.b64encode(os.urandom(30)).decode()
        self.register(key_id, secret, None, label)
        return key_id, secret

    def issue(self, label, origin):
        with self.lock:
            self.counter += 1
            self.fetches[label] += 1
            key_id = f"ASIA{label}{self.counter:08d}"
        secret = base64.b64encode(os.urandom(30)).decode()
        token = base64.b64encode(os.urandom(48)).decode()
        self.register(key_id, secret, token, origin)
        return key_id, secret, token, iso(datetime.now(timezone.utc) + self.lifetime)

    def describe(self, key_id):
        return self.origin.get(key_id, f"unknown key {key_id}")

    def lookup(self, key_id):
        with self.lock:
            return self.keys[key_id]

    def secrets(self):
        with self.lock:
            return [secret for secret, _ in self.keys.values()] + [token for _, token in self.keys.values() if token]


class Handler(http.server.BaseHTTPRequestHandler):
    fake: FakeAWS = None
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, content_type="application/json"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def parts(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        return urllib.parse.urlsplit(self.path), headers, body

    def do_PUT(self):
        url, headers, _ = self.parts()
        if url.path == "/latest/api/token" and headers.get("x-aws-ec2-metadata-token-ttl-seconds"):
            return self.answer(200, "imds-session-token", "text/plain")
        self.answer(405, "")

    def do_POST(self):
        url, headers, body = self.parts()
        fake = self.fake
        form = {k: v[0] for k, v in urllib.parse.parse_qs(body.decode()).items()}
        action = form.get("Action")
        if action == "AssumeRoleWithWebIdentity":
            if (form.get("WebIdentityToken") or "").strip() != WEB_TOKEN:
                return self.answer(400, "<ErrorResponse><Error><Code>InvalidIdentityToken</Code></Error></ErrorResponse>", "text/xml")
            key_id, secret, token, expiration = fake.issue("WEB", f"web identity for {form['RoleArn']}")
        elif action == "AssumeRole":
            try:
                signer = verify_sigv4("POST", self.path, headers, body, "sts", fake.lookup)
            except (AssertionError, KeyError, ValueError) as problem:
                fake.problems.append(f"AssumeRole: {problem}")
                return self.answer(403, "<ErrorResponse><Error><Code>SignatureDoesNotMatch</Code></Error></ErrorResponse>", "text/xml")
            key_id, secret, token, expiration = fake.issue("ROLE", f"role {form['RoleArn']} assumed with [{fake.describe(signer)}]")
        else:
            return self.answer(400, "<ErrorResponse><Error><Code>InvalidAction</Code></Error></ErrorResponse>", "text/xml")
        xml = (f"<{action}Response><{action}Result><Credentials><AccessKeyId>{key_id}</AccessKeyId>"
               f"<SecretAccessKey>{secret}</SecretAccessKey><SessionToken>{token}</SessionToken>"
               f"<Expiration>{expiration}</Expiration></Credentials></{action}Result></{action}Response>")
        self.answer(200, xml, "text/xml")

    def s3_signature(self, headers, body, *expired):
        """Checks an S3 GET's signature and counts the key that made it: "forged" (answered 403
        here), "expired" when the key is in one of the `expired` sets, else "valid"."""
        fake = self.fake
        try:
            key_id = verify_sigv4("GET", self.path, headers, body, "s3", fake.lookup)
        except (AssertionError, KeyError, ValueError) as problem:
            fake.problems.append(f"S3: {problem}")
            self.answer(403, "<Error><Code>SignatureDoesNotMatch</Code></Error>", "application/xml")
            return "forged"
        with fake.lock:
            fake.s3_keys.append(key_id)
            return "expired" if any(key_id in keys for keys in expired) else "valid"

    def do_GET(self):
        url, headers, body = self.parts()
        fake = self.fake
        query = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
        if url.path == "/federation/credentials":
            if headers.get("x-amz-sso_bearer_token") != SSO_TOKEN:
                return self.answer(401, '{"message": "Session token not found or invalid"}')
            key_id, secret, token, expiration = fake.issue("SSO", f"sso role {query['role_name']} in {query['account_id']}")
            millis = int(datetime.strptime(expiration, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp() * 1000)
            return self.answer(200, json.dumps({"roleCredentials": {"accessKeyId": key_id, "secretAccessKey": secret,
                                                                    "sessionToken": token, "expiration": millis}}))
        if url.path == "/container/credentials":
            if headers.get("authorization") != CONTAINER_TOKEN:
                return self.answer(401, '{"message": "unauthorized"}')
            key_id, secret, token, expiration = fake.issue("CONTAINER", "the container endpoint")
            return self.answer(200, json.dumps({"AccessKeyId": key_id, "SecretAccessKey": secret, "Token": token,
                                                "Expiration": expiration, "RoleArn": "arn:aws:iam::1:role/task"}))
        if url.path == "/process":
            key_id, secret, token, expiration = fake.issue("PROCESS", f"credential_process {query.get('label')}")
            return self.answer(200, json.dumps({"Version": 1, "AccessKeyId": key_id, "SecretAccessKey": secret,
                                                "SessionToken": token, "Expiration": expiration}))
        if url.path.startswith("/latest/meta-data/iam/security-credentials/"):
            if headers.get("x-aws-ec2-metadata-token") != "imds-session-token":
                return self.answer(401, "")
            role = url.path.rsplit("/", 1)[1]
            if fake.imds_role is None:
                return self.answer(404, "", "text/plain")
            if not role:
                return self.answer(200, fake.imds_role, "text/plain")
            key_id, secret, token, expiration = fake.issue("IMDS", f"instance role {role}")
            return self.answer(200, json.dumps({"Code": "Success", "LastUpdated": iso(datetime.now(timezone.utc)), "Type": "AWS-HMAC",
                                                "AccessKeyId": key_id, "SecretAccessKey": secret, "Token": token, "Expiration": expiration}))
        if url.path.rstrip("/") == f"/{BUCKET}" and "list-type" in query:
            signed = self.s3_signature(headers, body, fake.expired)
            if signed == "forged":
                return
            if signed == "expired":
                return self.answer(400, "<Error><Code>ExpiredToken</Code><Message>The provided token has expired.</Message></Error>",
                                   "application/xml")
            page = int(query.get("continuation-token", "0"))
            more = page + 1 < fake.pages
            contents = "".join(f"<Contents><Key>vaults/{i:04d}.vault</Key><ETag>\"e{i}\"</ETag><Size>32</Size></Contents>"
                               for i in range(fake.objects)) if page == 0 else ""
            xml = ("<ListBucketResult><IsTruncated>" + ("true" if more else "false") + "</IsTruncated>" + contents
                   + (f"<NextContinuationToken>{page + 1}</NextContinuationToken>" if more else "") + "</ListBucketResult>")
            return self.answer(200, xml, "application/xml")
        if url.path.startswith(f"/{BUCKET}/vaults/"):
            signed = self.s3_signature(headers, body, fake.expired, fake.expired_for_objects)
            if signed == "forged":
                return
            if signed == "expired":
                return self.answer(400, "<Error><Code>ExpiredToken</Code></Error>", "application/xml")
            return self.answer(206, b"not a vault, 32 bytes long....."[:16], "application/octet-stream")
        self.answer(404, "<Error><Code>NoSuchKey</Code></Error>", "application/xml")


@pytest.fixture(scope="module")
def fake():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    Handler.fake = FakeAWS()
    Handler.fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield Handler.fake
    server.shutdown()
    server.server_close()


def base_environment(fake, tmp_path):
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "AWS_REGION": REGION, "AWS_DEFAULT_REGION": REGION,
        "AWS_CONFIG_FILE": str(tmp_path / "config"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "credentials"),
        "AWS_ENDPOINT_URL_S3": fake.url, "AWS_ENDPOINT_URL_STS": fake.url, "AWS_ENDPOINT_URL_SSO": fake.url,
        "AWS_EC2_METADATA_SERVICE_ENDPOINT": fake.url, "BOTO_CONFIG": "/nonexistent",
    }


def write_process_script(fake, tmp_path):
    """A credential_process in a folder with a space in its name, reached with quoted words."""
    folder = tmp_path / "cred tools"
    folder.mkdir(exist_ok=True)
    script = folder / "issue creds"
    script.write_text(f"#!{sys.executable}\nimport sys, urllib.request\n"
                      f"label = sys.argv[sys.argv.index('--label') + 1]\n"
                      f"sys.stdout.write(urllib.request.urlopen('{fake.url}/process?label=' + label.replace(' ', '+')).read().decode())\n")
    script.chmod(0o700)
    return f"\"{script}\" --label 'my label'"


KINDS = ["none", "static", "process", "role-static", "role-chain", "role-env", "role-container", "role-imds",
         "web", "sso-session", "sso-legacy", "process+static"]


def make_case(rng, fake, tmp_path, kind=None):
    """One environment: variables, files, container endpoint and instance role, chosen at random
    (the profile's kind of source in turn, when `kind` is given)."""
    env = base_environment(fake, tmp_path)
    profile = rng.choice(["default", "work"])
    if profile != "default":
        env["AWS_PROFILE"] = profile
    if rng.random() < 0.06:
        env["AWS_PROFILE"] = "ghost"  # in neither file: both refuse, whatever else is set
    config_name = "default" if profile == "default" else f"profile {profile}"
    credentials, config = {}, {}

    def keys(label):
        key_id, secret = fake.static(label)
        return {"aws_access_key_id": key_id, "aws_secret_access_key": secret}

    chance = rng.random()
    if chance < 0.15:
        key_id, secret = fake.static("ENV")
        env.update(AWS_ACCESS_KEY_ID=key_id, AWS_SECRET_ACCESS_KEY=secret)
    elif chance < 0.2:
        env["AWS_ACCESS_KEY_ID"] = fake.static("HALF")[0]  # no secret: both must refuse
    if rng.random() < 0.15:
        token_file = tmp_path / "web-token"
        token_file.write_text(WEB_TOKEN)
        env.update(AWS_WEB_IDENTITY_TOKEN_FILE=str(token_file), AWS_ROLE_ARN="arn:aws:iam::1:role/irsa")
        if rng.random() < 0.5:
            env["AWS_ROLE_SESSION_NAME"] = "pod-7"
    if rng.random() < 0.45:
        env.update(AWS_CONTAINER_CREDENTIALS_FULL_URI=f"{fake.url}/container/credentials", AWS_CONTAINER_AUTHORIZATION_TOKEN=CONTAINER_TOKEN)
    fake.imds_role = "instance-role" if rng.random() < 0.4 else None

    if rng.random() < 0.35:
        credentials[profile] = keys("CREDFILE")
    section = config.setdefault(config_name, {})
    kind = kind or rng.choice(KINDS)
    if kind == "static":
        section.update(keys("CONFIG"))
    elif kind in ("process", "process+static"):
        section["credential_process"] = write_process_script(fake, tmp_path)
        if kind == "process+static":
            section.update(keys("CONFIG"))
    elif kind.startswith("role-"):
        section["role_arn"] = "arn:aws:iam::1:role/" + kind
        if rng.random() < 0.5:
            section["role_session_name"] = "ops"
        if kind == "role-static":
            section["source_profile"] = "base"
            credentials["base"] = keys("BASE")
        elif kind == "role-chain":
            section["source_profile"] = "middle"
            config["profile middle"] = {"role_arn": "arn:aws:iam::1:role/middle", "source_profile": "base"}
            credentials["base"] = keys("BASE")
        else:
            section["credential_source"] = {"role-env": "Environment", "role-container": "EcsContainer",
                                            "role-imds": "Ec2InstanceMetadata"}[kind]
    elif kind == "web":
        token_file = tmp_path / "profile-web-token"
        token_file.write_text(WEB_TOKEN)
        section.update(role_arn="arn:aws:iam::1:role/profile-web", web_identity_token_file=str(token_file))
    elif kind.startswith("sso"):
        start_url = "https://corp.awsapps.com/start"
        section.update(sso_account_id="111122223333", sso_role_name="Reader")
        if kind == "sso-session":
            section["sso_session"] = "corp"
            config["sso-session corp"] = {"sso_start_url": start_url, "sso_region": REGION}
            cache_key = "corp"
        else:
            section.update(sso_start_url=start_url, sso_region=REGION)
            cache_key = start_url
        cache = Path(env["HOME"]) / ".aws" / "sso" / "cache"
        cache.mkdir(parents=True, exist_ok=True)
        expires = datetime.now(timezone.utc) + timedelta(hours=8)
        (cache / (hashlib.sha1(cache_key.encode()).hexdigest() + ".json")).write_text(json.dumps(
            {"startUrl": start_url, "region": REGION, "accessToken": SSO_TOKEN, "expiresAt": iso(expires)}))
    # Either file may hold the profile; botocore and the tools must agree whichever it is.
    for path, sections in ((env["AWS_CONFIG_FILE"], config), (env["AWS_SHARED_CREDENTIALS_FILE"], credentials)):
        text = "".join(f"[{name}]\n" + "".join(f"{k} = {v}\n" for k, v in values.items()) + "\n" for name, values in sections.items())
        Path(path).write_text(text + f"[{'profile ' if path == env['AWS_CONFIG_FILE'] else ''}unrelated]\nregion = eu-west-1\n")
        os.chmod(path, 0o600)
    return env, kind


BOTOCORE_PICK = """
import botocore.session
try:
    credentials = botocore.session.Session().get_credentials()
    print("NONE" if credentials is None else "KEY " + credentials.get_frozen_credentials().access_key)
except Exception as error:  # botocore's refusal of a broken configuration
    print("ERROR " + type(error).__name__)
"""


def botocore_pick(fake, env):
    """botocore's choice, in a process of its own: it reads HOME (the SSO cache) at import."""
    result = subprocess.run([sys.executable, "-c", BOTOCORE_PICK], env=env, capture_output=True, timeout=120)
    answer = result.stdout.decode().strip()
    assert result.returncode == 0 and answer, result.stderr.decode()
    kind, _, value = answer.partition(" ")
    return {"NONE": "none", "KEY": fake.describe(value)}.get(kind, f"error ({value})")


def tool_pick(fake, env):
    before = len(fake.s3_keys)
    result = subprocess.run([VAULT_TOOL, "census", f"s3://{BUCKET}/vaults/"], env=env, capture_output=True, timeout=120)
    stderr = result.stderr.decode()
    for secret in fake.secrets() + [WEB_TOKEN, CONTAINER_TOKEN, SSO_TOKEN]:
        assert secret not in stderr and secret not in result.stdout.decode()
    if result.returncode == 0:
        used = fake.s3_keys[before:]
        assert len(set(used)) == 1, used
        return fake.describe(used[0]), stderr
    if "that AWS_PROFILE names is in neither" in stderr:
        return "error", stderr
    if "no credentials for the object store" in stderr:
        return "none", stderr
    assert "could not get credentials for the object store from" in stderr, stderr
    return "error", stderr


@pytest.mark.parametrize("case", range(CASES))
def test_the_tools_pick_the_source_botocore_picks(fake, tmp_path, case):
    rng = random.Random(3800 + case)
    fake.reset()
    env, kind = make_case(rng, fake, tmp_path, KINDS[case % len(KINDS)])
    expected = botocore_pick(fake, env)
    picked, stderr = tool_pick(fake, env)
    assert fake.problems == []
    if expected.startswith("error"):
        assert picked == "error", (kind, expected, stderr)
    else:
        assert picked == expected, (kind, stderr)


@pytest.mark.long
def test_every_kind_of_source_is_drawn(fake, tmp_path):
    """The random cases above cover every source (so a generator change cannot hollow them out)."""
    kinds, picks = set(), set()
    for case in range(CASES):
        fake.reset()
        env, kind = make_case(random.Random(3800 + case), fake, tmp_path / str(case), KINDS[case % len(KINDS)])
        kinds.add(kind)
        pick = botocore_pick(fake, env)
        picks.update({pick.split(" ")[0], pick})
    assert kinds == set(KINDS)
    assert picks >= {"the", "web", "role", "sso", "instance", "credential_process", "ENV", "CREDFILE", "CONFIG",
                     "error (ProfileNotFound)", "error (PartialCredentialsError)", "error (CredentialRetrievalError)"}


# MARK: Refresh


def container_environment(fake, tmp_path):
    env = base_environment(fake, tmp_path)
    env.update(AWS_CONTAINER_CREDENTIALS_FULL_URI=f"{fake.url}/container/credentials", AWS_CONTAINER_AUTHORIZATION_TOKEN=CONTAINER_TOKEN,
               AWS_EC2_METADATA_DISABLED="true")
    return env


def census(env):
    return subprocess.run([VAULT_TOOL, "census", f"s3://{BUCKET}/vaults/"], env=env, capture_output=True, timeout=120)


def test_long_lived_credentials_are_fetched_once_for_a_whole_run(fake, tmp_path):
    fake.reset()
    fake.pages = 6
    result = census(container_environment(fake, tmp_path))
    assert result.returncode == 0, result.stderr.decode()
    assert len(fake.s3_keys) == 6 and len(set(fake.s3_keys)) == 1
    assert fake.fetches == {"CONTAINER": 1}
    assert fake.problems == []


def test_credentials_near_their_expiry_are_fetched_again_before_each_request(fake, tmp_path):
    """Credentials that expire within the SDKs' mandatory refresh window (10 minutes) are never
    used as they are: every request of the run signs with newly fetched ones."""
    fake.reset()
    fake.pages = 6
    fake.lifetime = timedelta(minutes=5)
    result = census(container_environment(fake, tmp_path))
    assert result.returncode == 0, result.stderr.decode()
    assert len(fake.s3_keys) == 6
    assert len(set(fake.s3_keys)) == 6, "a key near its expiry was used twice"
    assert fake.fetches["CONTAINER"] >= 7  # the first look, then one before each request
    assert fake.problems == []


def test_an_expired_token_answer_forces_one_refresh_and_a_retry(fake, tmp_path):
    fake.reset()
    fake.pages = 4
    env = container_environment(fake, tmp_path)
    first = f"ASIACONTAINER{fake.counter + 1:08d}"
    fake.expired.add(first)
    result = census(env)
    assert result.returncode == 0, result.stderr.decode()
    assert fake.s3_keys[0] == first and fake.s3_keys[1] != first
    assert len(set(fake.s3_keys[1:])) == 1 and len(fake.s3_keys) == 5
    assert fake.fetches == {"CONTAINER": 2}


def test_workers_refused_at_once_share_one_refresh(fake, tmp_path):
    """A census reads objects on many threads: when the credentials they all hold expire, every
    thread's request is refused, and the first to ask fetches while the others wait and take the
    result, so the container endpoint is asked once more, not once per thread."""
    fake.reset()
    fake.objects = 96
    env = container_environment(fake, tmp_path)
    first = f"ASIACONTAINER{fake.counter + 1:08d}"
    fake.expired_for_objects.add(first)  # good for the listing, refused for every object
    result = census(env)
    assert result.returncode == 0, result.stderr.decode()
    assert fake.fetches == {"CONTAINER": 2}
    assert fake.s3_keys[0] == first
    refused = fake.s3_keys.count(first) - 1
    assert refused >= 1
    second = {key for key in fake.s3_keys if key != first}
    assert len(second) == 1 and fake.s3_keys.count(second.pop()) == 96
    assert fake.problems == []


def test_static_keys_refused_as_expired_fail_without_a_loop(fake, tmp_path):
    fake.reset()
    env = base_environment(fake, tmp_path)
    key_id, secret = fake.static("ENV")
    env.update(AWS_ACCESS_KEY_ID=key_id, AWS_SECRET_ACCESS_KEY=secret, AWS_EC2_METADATA_DISABLED="true")
    fake.expired.add(key_id)
    result = census(env)
    stderr = result.stderr.decode()
    # Refused access is configuration no retry mends (78, EX_CONFIG), after the one refresh.
    assert result.returncode == 78, stderr
    assert f"(ExpiredToken) for access key {key_id} from the environment (AWS_ACCESS_KEY_ID)" in stderr
    assert secret not in stderr
    assert fake.s3_keys == [key_id]


# MARK: Failures name the source and never a secret


@pytest.mark.parametrize("case", ["web-token-refused", "container-refused", "container-remote-http", "process-fails", "sso-expired",
                                  "role-without-source"])
def test_a_failing_source_is_named_and_its_secrets_are_not(fake, tmp_path, case):
    fake.reset()
    env = base_environment(fake, tmp_path)
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    Path(env["AWS_SHARED_CREDENTIALS_FILE"]).write_text("")
    secret = "hunter2-" + os.urandom(8).hex()
    config = ""
    if case == "web-token-refused":
        (tmp_path / "token").write_text(secret)
        env.update(AWS_WEB_IDENTITY_TOKEN_FILE=str(tmp_path / "token"), AWS_ROLE_ARN="arn:aws:iam::1:role/irsa")
        expected = "web identity from '" + str(tmp_path / "token") + "': STS at " + fake.url + " answered HTTP 400 InvalidIdentityToken"
    elif case == "container-refused":
        env.update(AWS_CONTAINER_CREDENTIALS_FULL_URI=f"{fake.url}/container/credentials", AWS_CONTAINER_AUTHORIZATION_TOKEN=secret)
        expected = f"the container endpoint {fake.url}/container/credentials: answered HTTP 401"
    elif case == "container-remote-http":
        env.update(AWS_CONTAINER_CREDENTIALS_FULL_URI="http://creds.example.org/x", AWS_CONTAINER_AUTHORIZATION_TOKEN=secret)
        expected = "names host 'creds.example.org' over http"
    elif case == "process-fails":
        script = tmp_path / "proc"
        script.write_text(f"#!/bin/sh\necho '{{\"Version\": 1, \"AccessKeyId\": \"{secret}\"}}'\nprintf 'helper status 7\\033[2J\\n' >&2\necho '{secret}' >&2\necho 'debug: {secret}/x' >&2\nexit 7\n")
        script.chmod(0o700)
        config = f"[default]\ncredential_process = {script}\n"
        expected = f"the credential_process of profile 'default' ({script}): exited with status 7"
    elif case == "sso-expired":
        cache = Path(env["HOME"]) / ".aws" / "sso" / "cache"
        cache.mkdir(parents=True)
        (cache / (hashlib.sha1(b"corp").hexdigest() + ".json")).write_text(json.dumps({"accessToken": secret, "expiresAt": "2021-01-01T00:00:00Z"}))
        config = ("[default]\nsso_session = corp\nsso_account_id = 1\nsso_role_name = R\n"
                  f"[sso-session corp]\nsso_start_url = https://x.awsapps.com/start\nsso_region = {REGION}\n")
        expected = "profile 'default' SSO: the cached SSO token expired at 2021-01-01T00:00:00Z"
    else:
        config = "[default]\nrole_arn = arn:aws:iam::1:role/x\n"
        expected = "has role_arn but neither source_profile nor credential_source"
    Path(env["AWS_CONFIG_FILE"]).write_text(config)
    result = census(env)
    stderr = result.stderr.decode()
    # A configured source that refuses or cannot work is configuration no retry mends.
    assert result.returncode == 78, stderr
    assert "vault-tool: error: could not get credentials for the object store from " in stderr
    assert expected in stderr, stderr
    assert secret not in stderr and secret not in result.stdout.decode()
    if case == "process-fails":
        # Its standard error is relayed, escaped, its secrets withheld (a hostile trial: passed
        # through raw, a helper that printed its secret showed it on the terminal).
        assert "vault-tool: from a command: helper status 7\\u{1b}[2J\n" in stderr and "\x1b" not in stderr, stderr
        assert "vault-tool: from a command: (a line not shown: it repeats what the command answered" in stderr, stderr
    if case == "sso-expired":
        assert "vault-tool: hint: log in, then run the command again: aws sso login --sso-session corp" in stderr


class Failing(http.server.BaseHTTPRequestHandler):
    """A credential source failing on its own side: every request answered `status` with `body`."""
    protocol_version = "HTTP/1.1"
    status, body, requests = 503, b"", 0

    def log_message(self, *args):
        pass

    def reply(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        type(self).requests += 1
        self.send_response(self.status)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    do_GET = do_PUT = do_POST = reply


@pytest.mark.parametrize("case, status, body", [
    ("web-identity", 503, b""),
    ("web-identity", 400, b"<ErrorResponse><Error><Code>Throttling</Code></Error></ErrorResponse>"),
    ("web-identity", 400, b"<ErrorResponse><Error><Code>IDPCommunicationError</Code></Error></ErrorResponse>"),
    ("container", 500, b"{}"),
    ("container", 429, b"{}"),
    ("instance-metadata", 503, b""),
    ("web-identity", None, b""),
    ("container", None, b""),
])
def test_a_source_failing_on_its_own_side_is_temporary_75(fake, tmp_path, case, status, body):
    """5xx, throttling, or a connection refused by STS, the container endpoint or instance
    metadata, through every attempt: exit 75, which a job engine retries; the refusals of the
    test above are 78."""
    fake.reset()
    env = base_environment(fake, tmp_path)
    Path(env["AWS_SHARED_CREDENTIALS_FILE"]).write_text("")
    Path(env["AWS_CONFIG_FILE"]).write_text("")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), type("Answer", (Failing,), {"status": status or 503, "body": body}))
    url = f"http://127.0.0.1:{server.server_address[1]}"
    if status is None:
        server.server_close()  # nothing listens there: the connection is refused
    else:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        if case == "web-identity":
            (tmp_path / "token").write_text(WEB_TOKEN)
            env.update(AWS_WEB_IDENTITY_TOKEN_FILE=str(tmp_path / "token"), AWS_ROLE_ARN="arn:aws:iam::1:role/irsa", AWS_ENDPOINT_URL_STS=url,
                       AWS_EC2_METADATA_DISABLED="true")
        elif case == "container":
            env.update(AWS_CONTAINER_CREDENTIALS_FULL_URI=f"{url}/container/credentials", AWS_CONTAINER_AUTHORIZATION_TOKEN=CONTAINER_TOKEN,
                       AWS_EC2_METADATA_DISABLED="true")
        else:
            env.update(AWS_EC2_METADATA_SERVICE_ENDPOINT=url)
        result = census(env)
    finally:
        if status is not None:
            server.shutdown()
            server.server_close()
    stderr = result.stderr.decode()
    assert result.returncode == 75, stderr
    assert "vault-tool: error: could not get credentials for the object store from " in stderr, stderr
    if status is not None:
        assert "a failure of its own that a later retry may get past" in stderr, stderr
        assert server.RequestHandlerClass.requests >= 1
    else:
        assert "could not be reached" in stderr, stderr
    assert WEB_TOKEN not in stderr and CONTAINER_TOKEN not in stderr


def test_nothing_found_names_every_source_tried(fake, tmp_path):
    fake.reset()
    env = base_environment(fake, tmp_path)
    result = census(env)
    stderr = result.stderr.decode()
    assert result.returncode == 78  # no credentials: configuration (EX_CONFIG)
    for source in ["the environment (AWS_ACCESS_KEY_ID unset)", "web identity (AWS_WEB_IDENTITY_TOKEN_FILE unset",
                   f"profile 'default' (in neither {env['AWS_SHARED_CREDENTIALS_FILE']} (no such file) nor {env['AWS_CONFIG_FILE']} (no such file))",
                   "the container endpoint (",
                   f"EC2 instance metadata at {fake.url} (the instance has no role (HTTP 404))"]:
        assert source in stderr, stderr


@pytest.mark.parametrize("variable", ["AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"])
def test_dev_null_as_a_configuration_file_means_none(fake, tmp_path, variable):
    """An operator's trial: `AWS_CONFIG_FILE=/dev/null` (how the AWS tools are told there is no
    such file) was refused as a character device (exit 2). It is no file now, and the rest of
    the chain (here the environment's keys) signs; any other device is still refused."""
    fake.reset()
    env = base_environment(fake, tmp_path)
    key_id, secret = fake.static("ENV")
    env.update(AWS_ACCESS_KEY_ID=key_id, AWS_SECRET_ACCESS_KEY=secret, AWS_EC2_METADATA_DISABLED="true")
    env[variable] = "/dev/null"
    result = census(env)
    assert result.returncode == 0, result.stderr.decode()
    env[variable] = "/dev/zero"
    assert census(env).returncode == 2
