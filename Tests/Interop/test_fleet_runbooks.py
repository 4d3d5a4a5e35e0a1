"""The runbooks of docs/fleet.md, checked as an engine would take them: each manifest (the fenced
block after its `<!-- runbook: NAME -->` marker) against its engine's published schema, and its
command line parsed by the tool itself.

- Kubernetes: `kubernetes-validate` (PyPI), Kubernetes' own OpenAPI schemas, strict (no unknown
  field), at 1.33, where `backoffLimitPerIndex`, `podFailurePolicy` with `FailIndex` and
  `podReplacementPolicy` are generally available;
- AWS Batch: botocore's parameter validator against the `RegisterJobDefinition` input of the
  Batch API model AWS publishes (what `aws batch register-job-definition` checks first);
- Cloud Run: every field against the `Job` schema of Cloud Run's v1 discovery document (as
  shipped in google-api-python-client), names and JSON types;
- systemd: `systemd-analyze verify` of the service and timer, the tool's path pointed at the
  binary under test.
"""
import hashlib
import json
import re
import shlex
import subprocess
from importlib import resources
from pathlib import Path

import botocore.session
import botocore.validate
import kubernetes_validate
import pytest
import yaml

from workspace import BIN, ROOT

RUNBOOK = ROOT / "docs" / "fleet.md"


def block(name):
    text = RUNBOOK.read_text()
    match = re.search(rf"<!-- runbook: {re.escape(name)} -->\n```[a-z]*\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
    assert match, f"docs/fleet.md has no runbook block {name}"
    return match.group(1)


def key_folder(tmp_path):
    """A folder of vault keys as a job mounts it: one <household id>.vaultkey file (an empty or
    mis-mounted folder is refused with exit 64 before anything is listed)."""
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / (hashlib.sha256(b"runbook household").hexdigest() + ".vaultkey")).write_text(hashlib.sha256(b"runbook key").hexdigest() + "\n")
    return keys


def parses(argv, env_extra=None):
    """The tool takes the runbook's arguments: whatever else fails (no store here, no keys), it
    is not the command line (exit 64) and no option is unknown."""
    assert argv[0] == "vault-tool", argv
    env = {"PATH": "/usr/bin:/bin", "AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_ACCESS_KEY_ID": "AKIDRUNBOOK",
           "AWS_SECRET_ACCESS_KEY": "not-a-secret", "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
           **(env_extra or {})}
    result = subprocess.run([str(BIN / "vault-tool"), *argv[1:]], env=env, capture_output=True, timeout=120)
    stderr = result.stderr.decode()
    assert result.returncode != 64 and "Unknown option" not in stderr and "usage" not in stderr.lower(), (argv, stderr)
    return result


def test_the_kubernetes_indexed_job_is_valid_and_its_command_parses(tmp_path):
    job = yaml.safe_load(block("kubernetes-job"))
    kubernetes_validate.validate(job, "1.33", strict=True)
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["template"]["spec"]["restartPolicy"] == "Never"
    # Every code a retry cannot mend fails the index at once (docs/conventions.md): 1, invalid
    # input 2, a failed check 3, refused 4, usage 64 (a wrong command or key folder, an empty
    # prefix), keys that are not this fleet's 66, configuration 78; 75 is retried.
    fail_index = [rule for rule in spec["podFailurePolicy"]["rules"] if rule["action"] == "FailIndex"]
    assert [sorted(rule["onExitCodes"]["values"]) for rule in fail_index] == [[1, 2, 3, 4, 64, 66, 69, 78]]
    assert all(rule["onExitCodes"]["operator"] == "In" for rule in fail_index)
    container = spec["template"]["spec"]["containers"][0]
    # The fleet image's entry point is vault-tool; the manifest names it (docs/fleet.md).
    assert container["image"].endswith("/household-vault-tools-fleet:0.2.0") and container["command"] == ["vault-tool"]
    args = container["command"] + container["args"]
    assert args[args.index("--shard") + 1] == "auto" and int(args[args.index("--shard-count") + 1]) == spec["completions"]
    # Secrets reach the pod as files only; the store's credentials are the service account's role.
    assert all("valueFrom" not in variable for variable in container.get("env", []))
    assert not any(v["name"].startswith("AWS_") and ("KEY" in v["name"] or "SECRET" in v["name"] or "CREDENTIALS" in v["name"])
                   for v in container.get("env", []))
    assert spec["template"]["spec"]["serviceAccountName"]
    assert "envFrom" not in container
    secrets = {v["name"] for v in spec["template"]["spec"]["volumes"] if "secret" in v}
    assert {m["name"] for m in container["volumeMounts"] if m.get("readOnly")} >= secrets
    # Kubernetes expands $(JOB_COMPLETION_INDEX) in args; index 2 of 8 is shard 3/8.
    expanded = [a.replace("$(JOB_COMPLETION_INDEX)", "2") for a in args]
    key_folder(tmp_path)
    result = parses([a.replace("/keys", str(tmp_path / "keys")) for a in expanded], {"JOB_COMPLETION_INDEX": "2"})
    assert result.returncode == 75, result.stderr.decode()  # the store of the test is unreachable: a retry's worth


def test_the_aws_batch_job_definition_is_valid_and_its_command_parses(tmp_path):
    definition = json.loads(block("aws-batch-job-definition"))
    model = botocore.session.get_session().get_service_model("batch")
    report = botocore.validate.ParamValidator().validate(definition, model.operation_model("RegisterJobDefinition").input_shape)
    assert not report.has_errors(), report.generate_report()
    properties = definition["containerProperties"]
    assert {"onExitCode": "75", "action": "RETRY"} in definition["retryStrategy"]["evaluateOnExit"]
    assert not any("SECRET" in e["name"] or "KEY" in e["name"].replace("KEY_DIR", "") or "CREDENTIALS" in e["name"]
                   for e in properties["environment"])
    # The job role gives the credentials; the image's entry point (vault-tool) takes the command.
    assert properties["jobRoleArn"].startswith("arn:aws:iam::") and properties["image"].endswith("/household-vault-tools-fleet:0.2.0")
    argv = ["vault-tool", *properties["command"]]
    assert argv[1] == "migrate"
    environment = {e["name"]: e["value"] for e in properties["environment"]}
    keys = key_folder(tmp_path)
    argv = [str(keys) if a == "/mnt/vault-operator/keys" else a for a in argv]
    result = parses(argv, {"AWS_BATCH_JOB_ARRAY_INDEX": "5", "HVT_SHARD_COUNT": environment["HVT_SHARD_COUNT"]})
    assert result.returncode == 75, result.stderr.decode()


def discovery_schema():
    document = json.loads(resources.files("googleapiclient").joinpath("discovery_cache/documents/run.v1.json").read_text())
    return document["schemas"]


def unknown_fields(value, schema, schemas, path="Job"):
    """Every field the discovery document does not name, or whose JSON type it contradicts."""
    if "$ref" in schema:
        schema = schemas[schema["$ref"]]
    kind = schema.get("type")
    problems = []
    if kind == "object" and "properties" in schema:
        if not isinstance(value, dict):
            return [f"{path}: an object, not {value!r}"]
        for key, item in value.items():
            if key not in schema["properties"]:
                problems.append(f"{path}.{key}: no such field")
            else:
                problems += unknown_fields(item, schema["properties"][key], schemas, f"{path}.{key}")
    elif kind == "object" and "additionalProperties" in schema:
        problems += [p for key, item in value.items() for p in unknown_fields(item, schema["additionalProperties"], schemas, f"{path}.{key}")]
    elif kind == "array":
        if not isinstance(value, list):
            return [f"{path}: an array, not {value!r}"]
        for index, item in enumerate(value):
            problems += unknown_fields(item, schema["items"], schemas, f"{path}[{index}]")
    elif kind == "integer" and not isinstance(value, int):
        problems.append(f"{path}: an integer, not {value!r}")
    elif kind == "string" and schema.get("format") in ("int64", "uint64"):
        # proto3's JSON takes a 64-bit integer as a number or a string.
        if not isinstance(value, (int, str)) or isinstance(value, bool):
            problems.append(f"{path}: an integer, not {value!r}")
    elif kind == "string" and not isinstance(value, str):
        problems.append(f"{path}: a string, not {value!r}")
    elif kind == "boolean" and not isinstance(value, bool):
        problems.append(f"{path}: a boolean, not {value!r}")
    return problems


def test_the_cloud_run_job_has_only_fields_cloud_run_knows_and_its_command_parses(tmp_path):
    job = yaml.safe_load(block("cloud-run-job"))
    schemas = discovery_schema()
    assert unknown_fields(job, schemas["Job"], schemas) == []
    assert job["apiVersion"] == "run.googleapis.com/v1" and job["kind"] == "Job"
    task = job["spec"]["template"]["spec"]["template"]["spec"]
    container = task["containers"][0]
    argv = container["command"] + container["args"]
    assert argv[argv.index("--shard") + 1] == "auto" and "--shard-count" not in argv
    keys = key_folder(tmp_path)
    argv = [str(keys) if a == "/keys" else a for a in argv]
    count = str(job["spec"]["template"]["spec"]["taskCount"])
    result = parses(argv, {"CLOUD_RUN_TASK_INDEX": "7", "CLOUD_RUN_TASK_COUNT": count})
    assert result.returncode == 75, result.stderr.decode()


def unit_words(text):
    """A unit line's words as systemd splits them: quotes as a shell's, then `$$` to a `$` (the
    runbook's lines use no other `$`, which systemd would expand itself)."""
    words = shlex.split(text)
    assert all("$" not in word.replace("$$", "") for word in words), words
    return [word.replace("$$", "$") for word in words]


def test_the_systemd_timer_and_service_verify(tmp_path):
    service = block("systemd-service").replace("/usr/bin/vault-tool", str(BIN / "vault-tool"))
    # systemd-analyze looks the user up; the runbook creates it, this machine need not have it.
    service = re.sub(r"^(User|Group)=.*\n", "", service, flags=re.MULTILINE)
    (tmp_path / "vault-check.service").write_text(service)
    (tmp_path / "vault-check.timer").write_text(block("systemd-timer"))
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", str(tmp_path / "vault-check.service"), str(tmp_path / "vault-check.timer")],
                            capture_output=True, timeout=120)
    messages = [line for line in result.stderr.decode().splitlines() if "vault-check" in line]
    assert result.returncode == 0 and messages == [], result.stderr.decode()


@pytest.mark.usefixtures("s3_server")
def test_the_systemd_service_checks_tonights_slice_with_its_keys_from_systemd_credentials(tmp_path):
    """The service's ExecStart as written, its Environment= with %d the credentials folder, run
    with $CREDENTIALS_DIRECTORY laid out as systemd lays out LoadCredentialEncrypted= of a folder
    (`vaultkey_<household id>`, 0400) and the store's profile there as `aws-config`: a profile
    whose credential_process prints the test server's credentials, no key in the environment.
    Only the bucket's name is this test's own."""
    import s3fleet
    s3 = s3fleet.client()
    bucket = s3fleet.new_bucket(s3)
    # 84 households, 80 with a key: tonight's slice of 7 holds one of those but for a chance of 1 in 200,000.
    fleet = s3fleet.Fleet(s3, bucket, 84, tmp_path / "keys", without_keys=4)
    service = block("systemd-service")
    settings = dict(line.split("=", 1) for line in service.splitlines() if "=" in line and not line.startswith("#"))
    loaded = [line.split("=", 1)[1].split(":")[0] for line in service.splitlines() if line.startswith("LoadCredentialEncrypted=")]
    assert loaded == ["vaultkey", "aws-config"], loaded
    credentials = tmp_path / "run-credentials" / "vault-check.service"
    credentials.mkdir(parents=True)
    for h in fleet.households:
        if h.vault_path not in fleet.keyless:
            path = credentials / f"vaultkey_{h.household_id.hex()}"
            path.write_text(h.vault_key.hex() + "\n")
            path.chmod(0o400)
    import configparser
    parser = configparser.ConfigParser()
    parser.read(s3fleet.CREDENTIALS_FILE)
    answer = tmp_path / "process.json"
    answer.write_text(json.dumps({"Version": 1, "AccessKeyId": parser["default"]["aws_access_key_id"],
                                  "SecretAccessKey": parser["default"]["aws_secret_access_key"]}))
    (credentials / "aws-config").write_text(f"[default]\ncredential_process = /bin/cat {answer}\n")
    env = {"PATH": "/usr/bin:/bin", "CREDENTIALS_DIRECTORY": str(credentials), "AWS_ENDPOINT_URL": s3fleet.ENDPOINT,
           "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_EC2_METADATA_DISABLED": "true"}
    for assignment in unit_words(settings["Environment"]):
        name, value = assignment.split("=", 1)
        env[name] = value.replace("%d", str(credentials))
    assert env["AWS_CONFIG_FILE"] == str(credentials / "aws-config") and not any(k.startswith("AWS_ACCESS") for k in env)
    argv = unit_words(settings["ExecStart"])
    assert argv[0] == "/usr/bin/vault-tool"
    argv = [str(BIN / "vault-tool")] + [a.replace("s3://family-vaults/", f"s3://{bucket}/") for a in argv[1:]]
    result = subprocess.run(argv, env=env, capture_output=True, timeout=600)
    stderr = result.stderr.decode()
    assert result.returncode == 0, stderr
    lines = s3fleet.report_lines(result.stdout)
    statuses = {line["object"].removeprefix(f"s3://{bucket}/"): line["status"] for line in lines}
    assert lines and all(line["subsetFrom"].startswith("auto/7 on ") for line in lines)
    assert statuses == {path: "no-key" if path in fleet.keyless else "ok" for path in statuses}, statuses
    assert "ok" in statuses.values(), statuses
    assert all(h.vault_key.hex() not in stderr for h in fleet.households)
    # A credential that cannot be read (here a folder where its file was) is no answer about a
    # household: the night stops (78), quoting nothing.
    opened = next(path for path, status in statuses.items() if status == "ok")
    household = next(h for h in fleet.households if h.vault_path == opened)
    unreadable = credentials / f"vaultkey_{household.household_id.hex()}"
    unreadable.unlink()
    unreadable.mkdir()
    result = subprocess.run(argv, env=env, capture_output=True, timeout=600)
    stderr = result.stderr.decode()
    assert result.returncode == 78 and "the vault-key command '/bin/sh' exited with status 1" in stderr, stderr
    assert all(h.vault_key.hex() not in stderr for h in fleet.households)
