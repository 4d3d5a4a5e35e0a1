"""The fleet image's check (scripts/image --check; docs/fleet.md): the OCI archive loaded into
podman and run with runc as a job engine would run it, every check ending the run on the first
failure with its message.

    image_check.py ARCHIVE REFERENCE VERSION

Needs the throwaway SeaweedFS server of scripts/lib/seaweedfs.sh (HVT_TEST_S3_*). The fleet is
made and read back by boto3 and vaultref.py (Tests/Interop), independent of the tool. The store's
credentials and the vault keys reach the container as read-only mounted files, the endpoint as
environment variables, as in the runbooks. The README's operator blocks marked for the image
(Tests/Interop/readme_blocks.py) run as pasted, with bash, against a fleet of their own. HTTPS: a loopback server with a certificate of a CA
made here, trusted through a copy of the image's own CA bundle with the CA added, mounted over
/etc/ssl/certs/ca-certificates.crt; without it the same request must fail at once, naming TLS.
"""
import http.server
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "Interop"))
import readme_blocks  # noqa: E402  (Tests/Interop on the path first)
import s3fleet  # noqa: E402

ARCHIVE, REFERENCE, VERSION = sys.argv[1:4]
# What podman needs on these machines: runc (crun refuses their cgroups), explicit limits (no
# CAP_SYS_RESOURCE to raise them) and the host's network (the servers are on its loopback).
PODMAN_RUN = ["podman", "run", "--rm", "--runtime", "runc", "--ulimit", "nofile=4096:4096",
              "--ulimit", "nproc=4096:4096", "--network", "host"]
USER = 65532
HOUSEHOLDS = 24


def ok(message):
    print(f"image check: ok: {message}", flush=True)


def fail(message):
    print(f"image check: FAILED: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def run(arguments, mounts=(), env=None, entrypoint=None, timeout=300):
    """vault-tool ARGUMENTS in the image, read-only root, /work a fresh folder of the user's."""
    work = Path(tempfile.mkdtemp(prefix="hvt-image-work."))
    os.chown(work, USER, USER)
    command = [*PODMAN_RUN, "--read-only", "-v", f"{work}:/work"]
    for source, target in mounts:
        command += ["-v", f"{source}:{target}:ro"]
    for name, value in (env or {}).items():
        command += ["-e", f"{name}={value}"]
    if entrypoint:
        command += ["--entrypoint", entrypoint]
    try:
        return subprocess.run([*command, REFERENCE, *arguments], capture_output=True, timeout=timeout)
    finally:
        shutil.rmtree(work)


def owned_copy(source, folder, name):
    """A copy the container's user can read and nobody else: as a Secret with fsGroup mounts it."""
    target = folder / name
    shutil.copyfile(source, target)
    os.chown(target, USER, USER)
    target.chmod(0o400)
    return target


def load_and_inspect():
    loaded = subprocess.run(["podman", "load", "-i", ARCHIVE], capture_output=True, text=True)
    if loaded.returncode != 0 or REFERENCE not in loaded.stdout:
        fail(f"podman load -i {ARCHIVE} did not load {REFERENCE}: {loaded.stdout}{loaded.stderr}")
    image = json.loads(subprocess.run(["podman", "image", "inspect", REFERENCE], capture_output=True, check=True).stdout)[0]
    config = image["Config"]
    labels = config.get("Labels") or {}
    if config.get("User") != f"{USER}:{USER}" or config.get("Entrypoint") != ["/usr/bin/vault-tool"] or config.get("WorkingDir") != "/work":
        fail(f"the image's user, entry point or working folder is not {USER}:{USER}, vault-tool, /work: {config}")
    wanted = {"org.opencontainers.image.version": VERSION, "org.opencontainers.image.title": "household-vault-tools-fleet",
              "org.opencontainers.image.licenses": "Apache-2.0"}
    if any(labels.get(k) != v for k, v in wanted.items()) or "org.opencontainers.image.source" not in labels:
        fail(f"the image's OCI labels are not {wanted} with a source: {labels}")
    ok(f"podman loaded {REFERENCE}: user {USER}, entry point vault-tool, labels version {VERSION}, title, source, licences")
    # What the image holds: no package manager, no manuals or documentation but the licences, no
    # apt lists or caches. Its one shell (the Essential set's) lists it.
    listing = run(["-c", "find /usr/share/man /usr/share/info /usr/share/locale /var/lib/apt/lists /var/cache/apt -type f 2>/dev/null; "
                   "find /usr/share/doc -type f ! -name copyright; command -v apt apt-get perl; "
                   "ls -d /usr/share/perl /usr/lib/x86_64-linux-gnu/perl-base /usr/lib/x86_64-linux-gnu/gconv/* /var/lib/dpkg/*-old 2>/dev/null; "
                   "echo licences: $(find /usr/share/doc -name copyright | wc -l)"], entrypoint="/bin/sh")
    lines = listing.stdout.decode().splitlines()
    if listing.returncode != 0 or len(lines) != 1 or not lines[0].startswith("licences: "):
        fail(f"the image holds manuals, documentation beyond copyright files, apt lists, a cache, apt, perl or iconv's modules: {listing.stdout.decode()}")
    ok(f"no manuals, locales, apt lists, apt cache, apt, perl or iconv modules; of the documentation only the {lines[0]}")


def version():
    result = run(["--version"])
    first = result.stdout.decode().splitlines()[:1]
    if result.returncode != 0 or first != [VERSION]:
        fail(f"vault-tool --version in the image says {result.stdout.decode()!r} {result.stderr.decode()!r}, not {VERSION}")
    ok(f"vault-tool --version says {VERSION}, as a container of the image (runc, read-only root, user {USER})")


def fleet_checks(secrets):
    s3 = s3fleet.client()
    bucket = s3fleet.new_bucket(s3)
    keys = secrets / "keys"
    fleet = s3fleet.Fleet(s3, bucket, HOUSEHOLDS, keys)
    os.chown(keys, USER, USER)
    for key in keys.iterdir():
        os.chown(key, USER, USER)
        key.chmod(0o400)
    credentials = owned_copy(os.environ["HVT_TEST_S3_CREDENTIALS_FILE"], secrets, "credentials")
    mounts = [(credentials, "/etc/vault-operator/aws/credentials"), (keys, "/keys")]
    env = {"AWS_ENDPOINT_URL": os.environ["HVT_TEST_S3_ENDPOINT"], "AWS_SHARED_CREDENTIALS_FILE": "/etc/vault-operator/aws/credentials",
           "AWS_CONFIG_FILE": "/nonexistent", "AWS_REGION": "us-east-1"}
    source = f"s3://{bucket}/vaults/"

    census = run(["census", "--json", source], mounts, env)
    counted = json.loads(census.stdout) if census.returncode == 0 else {}
    if counted.get("vaults") != HOUSEHOLDS or [(k["schemaVersion"], k["count"]) for k in counted.get("kinds", [])] != [(1, HOUSEHOLDS)]:
        fail(f"the census of {source} is not {HOUSEHOLDS} vaults of schema 1 (exit {census.returncode}): {census.stdout.decode()} {census.stderr.decode()}")
    ok(f"census of {source}: {HOUSEHOLDS} vaults of schema 1")

    # Two shards as two engines would give them: --shard 1/2, and a Kubernetes Indexed Job's index.
    common = ["migrate", "--source", source, "--to", "2", "--in-place", "--vault-key-dir", "/keys"]
    shards = [run([*common, "--shard", "1/2"], mounts, env),
              run([*common, "--shard", "auto", "--shard-count", "2"], mounts, {**env, "JOB_COMPLETION_INDEX": "1"})]
    migrated = []
    for number, result in enumerate(shards, 1):
        report = s3fleet.report_lines(result.stdout)
        if result.returncode != 0 or not report or {line["status"] for line in report} != {"migrated"}:
            fail(f"shard {number}/2 did not migrate its vaults (exit {result.returncode}): {result.stdout.decode()} {result.stderr.decode()}")
        migrated.append({line["vault"] for line in report})
    if migrated[0] & migrated[1] or len(migrated[0] | migrated[1]) != HOUSEHOLDS:
        fail(f"the two shards did not split the fleet: {len(migrated[0])} and {len(migrated[1])} vaults, {len(migrated[0] & migrated[1])} in both")
    schemas = {fleet.read(path)[2] for path in fleet.by_path}
    if schemas != {2}:
        fail(f"after the shards, the bucket holds vaults of schemas {schemas}, read by boto3, not only 2")
    ok(f"migration in two shards (--shard 1/2; JOB_COMPLETION_INDEX=1 --shard-count 2): {len(migrated[0])} + {len(migrated[1])} vaults, "
       "each once, all at schema 2 read back by boto3 and opened by vaultref")

    seen = set()
    for index in (1, 2):
        result = run(["check", "--source", source, "--subset", f"{index}/2", "--vault-key-dir", "/keys"], mounts, env)
        lines = s3fleet.report_lines(result.stdout)
        if result.returncode != 0 or {line["status"] for line in lines} - {"ok"}:
            fail(f"the rolling check of slice {index}/2 failed (exit {result.returncode}): {result.stdout.decode()} {result.stderr.decode()}")
        objects = {line["object"] for line in lines}
        if objects & seen:
            fail(f"slice {index}/2 checked objects slice 1/2 had checked: {objects & seen}")
        seen |= objects
    if len(seen) != HOUSEHOLDS:
        fail(f"the two slices of the rolling check read {len(seen)} objects, not the {HOUSEHOLDS} of the fleet")
    ok(f"rolling check in two slices (--subset 1/2, 2/2): every one of the {HOUSEHOLDS} vaults read once, all ok")


def readme_walkthrough(secrets):
    """The README's operator block(s) that use the fleet image, run as pasted with bash in a
    folder holding keys/ (the operator's vault keys) against a fleet of the test server's, with
    IMAGE the image loaded here, and a HOME whose ~/.aws/config profile has a credential_process
    (the /bin/cat of the image) instead of keys. Only the bucket's name is this check's own."""
    blocks = readme_blocks.image_blocks()
    if not blocks:
        fail("the README has no block marked to run here (readme_blocks.IMAGE_MARK)")
    s3 = s3fleet.client()
    bucket = s3fleet.new_bucket(s3)
    folder = secrets / "readme"
    fleet = s3fleet.Fleet(s3, bucket, HOUSEHOLDS, folder / "keys", without_keys=2)
    aws = secrets / "home" / ".aws"
    aws.mkdir(parents=True)
    import configparser
    parser = configparser.ConfigParser()
    parser.read(os.environ["HVT_TEST_S3_CREDENTIALS_FILE"])
    (aws / "session.json").write_text(json.dumps({"Version": 1, "AccessKeyId": parser["default"]["aws_access_key_id"],
                                                  "SecretAccessKey": parser["default"]["aws_secret_access_key"]}))
    (aws / "config").write_text("[default]\ncredential_process = /bin/cat /aws/session.json\n")
    env = {"PATH": os.environ["PATH"], "HOME": str(secrets / "home"), "IMAGE": REFERENCE, "AWS_REGION": "us-east-1",
           "AWS_ENDPOINT_URL": os.environ["HVT_TEST_S3_ENDPOINT"]}
    for heading, text in blocks:
        result = subprocess.run(["bash", "-euo", "pipefail", "-c", text.replace("s3://family-vaults/", f"s3://{bucket}/")],
                                cwd=folder, env=env, capture_output=True, timeout=900)
        if result.returncode != 0:
            fail(f"the README block under '{heading}' failed with the image (exit {result.returncode}):\n{text}\n{result.stderr.decode()[-3000:]}")
    statuses = lambda name: sorted(line["status"] for line in s3fleet.report_lines((folder / name).read_bytes()))
    keyed = HOUSEHOLDS - 2
    if statuses("plan.jsonl") != ["no-key"] * 2 + ["would-migrate"] * keyed or statuses("report.jsonl") != ["migrated"] * keyed + ["no-key"] * 2:
        fail(f"the README's dry run and migration did not plan and migrate the {keyed} vaults with keys: {statuses('plan.jsonl')} {statuses('report.jsonl')}")
    schemas = sorted(fleet.read(path)[2] for path in fleet.by_path)
    if schemas != [1] * 2 + [2] * keyed:
        fail(f"after the README's migration the bucket holds schemas {schemas}, read by boto3")
    if set(statuses("check.jsonl")) - {"ok", "no-key"} or not list(folder.glob("*.migrate-journal.sqlite")):
        fail(f"the README's rolling check found damage, or the migration left no journal in the folder: {statuses('check.jsonl')}")
    ok(f"the README's operator walk-through with the image: census, dry run, {keyed} vaults migrated in place (2 no-key), "
       f"tonight's check of {len(statuses('check.jsonl'))} objects, the profile's credential_process and no key in the environment")


class EmptyBucket(http.server.BaseHTTPRequestHandler):
    """An S3 endpoint that answers every ListObjectsV2 with an empty page."""
    requests = 0

    def do_GET(self):  # noqa: N802 (http.server's name)
        type(self).requests += 1
        body = (b'<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                b"<Name>family-vaults</Name><Prefix>vaults/</Prefix><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys>"
                b"<IsTruncated>false</IsTruncated></ListBucketResult>")
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *arguments):
        pass


def openssl(folder, *arguments):
    subprocess.run(["openssl", *arguments], cwd=folder, check=True, capture_output=True)


def https_checks(secrets):
    """libcurl in the image verifies against the image's trust store: trusted with the test CA
    added to it, refused (exit 78, configuration no retry mends: a TLS message, never 75) with
    the store as shipped."""
    tls = secrets / "tls"
    tls.mkdir()
    openssl(tls, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=household vault tools image check CA", "-keyout", "ca.key", "-out", "ca.pem",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
    openssl(tls, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=127.0.0.1",
            "-keyout", "server.key", "-out", "server.csr")
    (tls / "san.ext").write_text("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    openssl(tls, "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "2", "-extfile", "san.ext", "-out", "server.pem")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tls / "server.pem", tls / "server.key")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), EmptyBucket)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        # The image's own bundle, with the test CA added: what an operator's private CA would be.
        shipped = run(["/etc/ssl/certs/ca-certificates.crt"], entrypoint="/bin/cat")
        if shipped.returncode != 0 or shipped.stdout.count(b"BEGIN CERTIFICATE") < 100:
            fail(f"the image has no CA bundle from ca-certificates at /etc/ssl/certs/ca-certificates.crt: {shipped.stderr.decode()}")
        bundle = secrets / "ca-certificates.crt"
        bundle.write_bytes(shipped.stdout + (tls / "ca.pem").read_bytes())
        bundle.chmod(0o444)
        credentials = owned_copy(os.environ["HVT_TEST_S3_CREDENTIALS_FILE"], secrets, "https-credentials")
        endpoint = f"https://127.0.0.1:{server.server_address[1]}"
        env = {"AWS_ENDPOINT_URL": endpoint, "AWS_SHARED_CREDENTIALS_FILE": "/etc/vault-operator/aws/credentials",
               "AWS_CONFIG_FILE": "/nonexistent", "AWS_REGION": "us-east-1"}
        mounts = [(credentials, "/etc/vault-operator/aws/credentials")]

        trusted = run(["census", "--json", "s3://family-vaults/vaults/"], [*mounts, (bundle, "/etc/ssl/certs/ca-certificates.crt")], env)
        counted = json.loads(trusted.stdout) if trusted.returncode == 0 else {}
        if counted.get("vaults") != 0 or EmptyBucket.requests == 0:
            fail(f"the census over HTTPS with the test CA in the trust store failed (exit {trusted.returncode}): "
                 f"{trusted.stdout.decode()} {trusted.stderr.decode()}")
        ok(f"census over HTTPS ({endpoint}) with the test CA added to the image's trust store: verified, an empty bucket")

        answered = EmptyBucket.requests
        untrusted = run(["census", "--json", "s3://family-vaults/vaults/"], mounts, env, timeout=120)
        stderr = untrusted.stderr.decode()
        if untrusted.returncode != 78 or "could not verify the TLS certificate" not in stderr or EmptyBucket.requests != answered:
            fail(f"the census over HTTPS without the test CA did not fail at once with a TLS error and exit 78 "
                 f"(exit {untrusted.returncode}, {EmptyBucket.requests - answered} requests answered): {stderr}")
        ok(f"the same census with the image's trust store as shipped: exit 78, no request answered, "
           f"'{stderr.strip().splitlines()[0]}'")
    finally:
        server.shutdown()
        server.server_close()


def main():
    secrets = Path(tempfile.mkdtemp(prefix="hvt-image-check."))
    try:
        load_and_inspect()
        version()
        fleet_checks(secrets)
        readme_walkthrough(secrets)
        https_checks(secrets)
    finally:
        shutil.rmtree(secrets)
        subprocess.run(["podman", "rmi", "--force", REFERENCE], capture_output=True)


if __name__ == "__main__":
    main()
