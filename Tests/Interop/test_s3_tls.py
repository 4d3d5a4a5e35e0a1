"""An object store whose TLS certificate does not verify against the system's trust store: every
command that talks to a store fails at once with exit 1 and a message naming the certificate,
and is not retried as a temporary failure (exit 75 would have a job engine retry it forever).
The trusted case is scripts/image --check's: it adds a test CA to a copy of the image's trust
store, which the host's cannot be made to hold here.
"""
import socket
import ssl
import subprocess
import threading

import pytest

from workspace import VAULT_TOOL


class CountingTLSServer:
    """Accepts TCP connections on loopback, counts them, and offers a certificate no system trusts."""

    def __init__(self, folder):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                        "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem")], check=True, capture_output=True)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            try:
                with self.context.wrap_socket(connection, server_side=True) as tls:
                    tls.recv(1)
            except (ssl.SSLError, OSError):
                pass

    def close(self):
        self.listener.close()


@pytest.mark.parametrize("arguments", [
    ["census", "s3://family-vaults/vaults/"],
    ["inspect", "s3://family-vaults/vaults/x.vault"],
    ["check", "--source", "s3://family-vaults/vaults/", "--subset", "1/2", "--vault-key-dir", "keys"],
    ["migrate", "--source", "s3://family-vaults/vaults/", "--to", "2", "--in-place", "--vault-key-dir", "keys"],
])
def test_a_certificate_that_does_not_verify_fails_at_once_and_is_not_temporary(tmp_path, arguments):
    server = CountingTLSServer(tmp_path)
    credentials = tmp_path / "credentials"
    credentials.write_text("[default]\naws_access_key_id = AKIDTLSTEST\naws_secret_access_key = not-a-secret\n")
    credentials.chmod(0o600)
    # A key folder that passes its own checks (one household's key), so the store is reached.
    (tmp_path / "keys").mkdir(mode=0o700)
    (tmp_path / "keys" / ("ab" * 32 + ".vaultkey")).write_text("cd" * 32 + "\n")
    (tmp_path / "keys" / ("ab" * 32 + ".vaultkey")).chmod(0o600)
    env = {"PATH": "/usr/bin:/bin", "AWS_ENDPOINT_URL": f"https://127.0.0.1:{server.port}", "AWS_REGION": "us-east-1",
           "AWS_SHARED_CREDENTIALS_FILE": str(credentials), "AWS_CONFIG_FILE": "/nonexistent", "AWS_EC2_METADATA_DISABLED": "true"}
    try:
        result = subprocess.run([VAULT_TOOL, *arguments], env=env, cwd=tmp_path, capture_output=True, timeout=120)
    finally:
        server.close()
    stderr = result.stderr.decode()
    # Configuration no retry mends (78, EX_CONFIG): the same certificate comes back every time.
    assert result.returncode == 78, stderr
    assert f"could not verify the TLS certificate of the object store at https://127.0.0.1:{server.port}" in stderr, stderr
    assert "system trust store" in stderr and "\n" == stderr[-1]
    # One connection: a certificate is not a temporary failure, so nothing is retried.
    assert server.connections == 1, (server.connections, stderr)
