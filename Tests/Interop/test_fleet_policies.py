"""Least privilege (issue 38): every request of a fleet job stays under the prefixes its command
names, and each job succeeds under the smallest IAM policy docs/fleet.md gives for it.

Against the SeaweedFS server scripts/test starts, through s3fleet.CountingProxy, which here
enforces a policy: each request is mapped to the action S3 authorises it as (ListObjectsV2 to
s3:ListBucket with its s3:prefix, GET and HEAD of an object to s3:GetObject, PUT to
s3:PutObject, DELETE to s3:DeleteObject, or s3:DeleteObjectVersion with a versionId) and
evaluated against the policy's Allow statements (Action, Resource, and a StringLike condition
on s3:prefix, with IAM's * and ? wildcards); anything no statement allows, a bucket-level
request among them, is answered 403 AccessDenied without reaching the server.
"""
import json
import re
import subprocess
import urllib.parse

import pytest

import s3fleet
from s3fleet import Fleet, migrate, report_lines, tool_environment
from workspace import ROOT, VAULT_TOOL

pytestmark = pytest.mark.usefixtures("s3_server")

PROBE = ".hvt-conditional-write-check-"


def policy(name, bucket):
    """The policy docs/fleet.md gives for a job, for `bucket` instead of family-vaults."""
    text = (ROOT / "docs" / "fleet.md").read_text()
    match = re.search(rf"<!-- iam-policy: {re.escape(name)} -->\n```json\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
    assert match, f"docs/fleet.md has no policy {name}"
    return json.loads(match.group(1).replace("family-vaults", bucket))


def wildcard(pattern):
    """IAM's wildcards: * any run of characters, ? one; nothing else is special."""
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern) + r"\Z", re.DOTALL)


def as_list(value):
    return value if isinstance(value, list) else [value]


def request_context(method, path, query):
    """(action, resource, condition keys) of one path-style S3 request, as IAM authorises it."""
    bucket, _, key = urllib.parse.unquote(path).lstrip("/").partition("/")
    if not key:
        if method == "GET" and query.get("list-type") == "2" and set(query) <= {"list-type", "prefix", "max-keys", "start-after", "continuation-token", "encoding-type"}:
            return "s3:ListBucket", f"arn:aws:s3:::{bucket}", {"s3:prefix": query.get("prefix", "")}
        return f"s3:Bucket{method.title()}", f"arn:aws:s3:::{bucket}", {}  # no policy here allows one
    action = {"GET": "s3:GetObject", "HEAD": "s3:GetObject", "PUT": "s3:PutObject",
              "DELETE": "s3:DeleteObjectVersion" if "versionId" in query else "s3:DeleteObject"}.get(method, f"s3:Object{method.title()}")
    extra = set(query) - ({"versionId"} if method == "DELETE" else set())
    if extra:
        action += "?" + ",".join(sorted(extra))  # a subresource (?acl, ?tagging): none allowed
    return action, f"arn:aws:s3:::{bucket}/{key}", {}


def allows(document, method, path, query):
    action, resource, keys = request_context(method, path, query)
    for statement in document["Statement"]:
        if statement["Effect"] != "Allow":
            continue
        if not any(wildcard(a).match(action) for a in as_list(statement["Action"])):
            continue
        if not any(wildcard(r).match(resource) for r in as_list(statement["Resource"])):
            continue
        condition = statement.get("Condition", {})
        assert set(condition) <= {"StringLike"}, condition  # the evaluator's subset
        if all(key in keys and any(wildcard(p).match(keys[key]) for p in as_list(patterns))
               for key, patterns in condition.get("StringLike", {}).items()):
            return True
    return False


def enforce(proxy, document):
    proxy.reset()
    proxy.refuse = lambda method, path, query: not allows(document, method, path, query)


def denied(proxy):
    with proxy.lock:
        return [(method, path, query) for method, path, query, _, status in proxy.requests if status == 403]


def object_keys(proxy, bucket):
    """Every object key the requests named, and every listing's prefix."""
    with proxy.lock:
        requests = list(proxy.requests)
    keys = []
    for method, path, query, _, _ in requests:
        name, _, key = urllib.parse.unquote(path).lstrip("/").partition("/")
        assert name == bucket, path
        keys.append(key if key else query.get("prefix", ""))
    return keys


def test_the_evaluator_denies_what_the_policies_do_not_name():
    """The proxy is only a test if it refuses: the requests the tools sent before (the probe at
    the bucket's root) and the ones no job needs are denied by every policy."""
    document = policy("migrate-in-place", "b-test")
    assert allows(document, "GET", "/b-test", {"list-type": "2", "prefix": "vaults/", "max-keys": "1000"})
    assert allows(document, "PUT", "/b-test/vaults/x.vault", {})
    assert allows(document, "DELETE", "/b-test/vaults/.hvt-conditional-write-check-0011", {"versionId": "v1"})
    assert not allows(document, "PUT", "/b-test/.hvt-conditional-write-check-0011", {})
    assert not allows(document, "DELETE", "/b-test/vaults/x.vault", {})
    assert not allows(document, "GET", "/b-test", {"list-type": "2", "prefix": "", "max-keys": "1"})
    assert not allows(document, "GET", "/b-test", {"list-type": "2", "prefix": "other/"})
    assert not allows(document, "GET", "/b-test", {"versioning": ""})
    assert not allows(document, "PUT", "/b-test/vaults/x.vault", {"tagging": ""})
    assert not allows(policy("census", "b-test"), "PUT", "/b-test/vaults/x.vault", {})


def run_tool(arguments, env, cwd):
    result = subprocess.run([VAULT_TOOL, *arguments], env=env, cwd=cwd, capture_output=True, timeout=600)
    return result.returncode, report_lines(result.stdout) if arguments[0] != "census" else result.stdout, result.stderr.decode()


@pytest.mark.parametrize("versioned", [False, True])
def test_each_job_succeeds_under_its_policy_and_every_request_stays_under_its_prefixes(s3, proxy, tmp_path, versioned):
    """A census, a dry run, the migration to another prefix, the migration in place and the
    rolling check, in that order, each under exactly its policy: no request denied, every key
    and listing prefix under the command's prefixes, and no probe (nor a version or a delete
    marker of one) left in the bucket, with versioning on or off."""
    bucket = s3fleet.new_bucket(s3)
    if versioned:
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
        assert s3.get_bucket_versioning(Bucket=bucket).get("Status") == "Enabled"
    fleet = Fleet(s3, bucket, 12, tmp_path / "keys", without_keys=2)
    env = tool_environment(endpoint=proxy.endpoint)
    keys = ["--vault-key-dir", str(tmp_path / "keys")]
    source = f"s3://{bucket}/vaults/"
    jobs = [
        ("census", ["census", "--json", source], ["vaults/"]),
        ("dry-run", ["migrate", "--source", source, "--to", "2", "--in-place", "--dry-run", *keys], ["vaults/"]),
        ("migrate-to-prefix", ["migrate", "--source", source, "--to", "2", "--out", f"s3://{bucket}/v2/", *keys,
                               "--journal", str(tmp_path / "out.sqlite")], ["vaults/", "v2/"]),
        # Twelve random household ids split into two ranges: a shard may hold only the two
        # households whose key is not here (exit 66 by design), which is not this test's subject.
        ("migrate-in-place", ["migrate", "--source", source, "--to", "2", "--in-place", *keys, "--shard", "1/2",
                              "--journal", str(tmp_path / "s1.sqlite"), "--allow-no-keys"], ["vaults/"]),
        ("migrate-in-place", ["migrate", "--source", source, "--to", "2", "--in-place", *keys, "--shard", "2/2",
                              "--journal", str(tmp_path / "s2.sqlite"), "--allow-no-keys"], ["vaults/"]),
        ("rolling-check", ["check", "--source", source, "--subset", "1/1", *keys], ["vaults/"]),
    ]
    for name, arguments, prefixes in jobs:
        enforce(proxy, policy(name, bucket))
        code, report, stderr = run_tool(arguments, env, tmp_path)
        assert code == 0, (name, stderr)
        assert denied(proxy) == [], (name, denied(proxy))
        keys_named = object_keys(proxy, bucket)
        assert keys_named and all(any(k.startswith(p) for p in prefixes) for k in keys_named), (name, keys_named)
        if name.startswith("migrate"):
            # The probe ran first, under the prefix written to, and was deleted.
            probes = [k for k in keys_named if PROBE in k]
            written = prefixes[-1]
            assert probes and all(k.startswith(written + PROBE) for k in probes), (name, probes)
            with proxy.lock:
                first_write = next(path for method, path, _, _, _ in proxy.requests if method == "PUT")
            assert PROBE in first_write, first_write
    statuses = {line["status"] for line in report}
    assert statuses == {"ok", "no-key"}, statuses
    for path in fleet.by_path:
        assert fleet.read(path)[2] == (1 if path in fleet.keyless else 2)
    # Nothing of the probes is left: no object, no version, no delete marker.
    listed = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
    assert not [k for k in listed if PROBE in k], listed
    versions = s3.list_object_versions(Bucket=bucket)
    left = [v["Key"] for v in versions.get("Versions", []) + versions.get("DeleteMarkers", []) if PROBE in v["Key"]]
    assert left == [], left


def test_under_a_policy_that_allows_writes_only_under_the_prefix_the_old_root_probe_is_what_fails(s3, proxy, tmp_path):
    """The enforcing proxy has teeth: the in-place run under the read-only policy is refused at
    its first write (the probe, under the prefix), naming AccessDenied, and no vault changed."""
    bucket = s3fleet.new_bucket(s3)
    fleet = Fleet(s3, bucket, 3, tmp_path / "keys")
    enforce(proxy, policy("census", bucket))
    code, report, stderr = run_tool(["migrate", "--source", f"s3://{bucket}/vaults/", "--to", "2", "--in-place",
                                     "--vault-key-dir", str(tmp_path / "keys"), "--journal", str(tmp_path / "j.sqlite")],
                                    tool_environment(endpoint=proxy.endpoint), tmp_path)
    assert code == 78 and "AccessDenied" in stderr, stderr  # denied access: configuration (EX_CONFIG)
    refused = denied(proxy)
    assert refused and all(method == "PUT" and f"/{bucket}/vaults/{PROBE}" in path for method, path, _ in refused), refused
    assert not (tmp_path / "j.sqlite").exists()
    for path, etag in fleet.uploaded.items():
        assert s3.head_object(Bucket=bucket, Key=path)["ETag"] == etag
