"""The peer of a batch migration (issue 29): the in-process script an operator would write once
one tool process per vault felt slow. It reads the same manifest, migrates each vault from
version 1 to 2 as docs/vault-format.md describes (every sealed field re-encrypted under v2's
associated data, revision 1, an empty key history, revokedAt for revoked devices), seals it
with PyNaCl (libsodium) and writes it by rename into the output folder, one process, one thread.

    migrate_peer.py MANIFEST OUT_DIR [--sync-every N]

Without --sync-every nothing is flushed: the outputs are named before they are on disk. With
it, after every N outputs one syncfs(2) flushes them and the folder is synced, as the tool does
for each group of its batch (BatchMigration.groupSize), so the two can be compared like with like.
"""
import base64
import ctypes
import json
import os
import sys

import bech32
from coincurve import PrivateKey
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from nacl.bindings import crypto_aead_xchacha20poly1305_ietf_decrypt as aead_open
from nacl.bindings import crypto_aead_xchacha20poly1305_ietf_encrypt as aead_seal

HEADER = 66


def vault_key(key_file):
    hrp, data = bech32.bech32_decode(open(key_file).read().strip())
    secret = bytes(bech32.convertbits(data, 5, 8, False))
    pubkey = PrivateKey(secret).public_key_xonly.format().hex()
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=b"mytube:vault:v1", info=pubkey.encode()).derive(secret)


def reseal(key, blob, ad):
    raw = base64.b64decode(blob)
    secret = aead_open(raw[24:], b"", raw[:24], key)
    nonce = os.urandom(24)
    return base64.b64encode(nonce + aead_seal(secret, ad, nonce, key)).decode()


def migrate(data, key):
    header = data[:HEADER]
    document = json.loads(aead_open(data[HEADER:], header, header[42:66], key))
    if document["version"] != 1:
        raise ValueError("not a version 1 vault")
    out = {"version": 2, "revision": 1}
    for name, value in document.items():
        if name == "version":
            continue
        if name == "parentWrapKeyEncrypted":
            value = reseal(key, value, b"mytube:v2:wrap-key")
        elif name == "childProfiles":
            for child in value:
                child["nsecEncrypted"] = reseal(key, child["nsecEncrypted"], b"mytube:v2:child-nsec:" + child["profileId"].encode())
        elif name == "devices":
            for device in value:
                if device["status"] == "revoked":
                    device["revokedAt"] = document["updatedAt"]
        out[name] = value
    out["keyHistory"] = []
    nonce = os.urandom(24)
    header = header[:9] + bytes([2]) + header[10:42] + nonce
    return header + aead_seal(json.dumps(out, indent=2).encode(), header, nonce, key)


def main():
    manifest, out_dir = sys.argv[1], sys.argv[2]
    sync_every = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--sync-every" else 0
    libc = ctypes.CDLL(None, use_errno=True)
    base = os.path.dirname(manifest)
    os.makedirs(out_dir, exist_ok=True)
    folder = os.open(out_dir, os.O_RDONLY | os.O_DIRECTORY)
    keys, written = {}, 0
    for line in open(manifest):
        job = json.loads(line)
        key_file = os.path.join(base, job["keyFile"])
        if key_file not in keys:
            keys[key_file] = vault_key(key_file)
        with open(os.path.join(base, job["vault"]), "rb") as vault:
            migrated = migrate(vault.read(), keys[key_file])
        name = os.path.basename(job["vault"])
        with open(os.path.join(out_dir, name + ".tmp"), "wb") as output:
            output.write(migrated)
        os.replace(os.path.join(out_dir, name + ".tmp"), os.path.join(out_dir, name))
        written += 1
        if sync_every and written % sync_every == 0:
            if libc.syncfs(folder) != 0:
                raise OSError(ctypes.get_errno(), "syncfs")
            os.fsync(folder)
    if sync_every:
        libc.syncfs(folder)
        os.fsync(folder)


if __name__ == "__main__":
    main()
