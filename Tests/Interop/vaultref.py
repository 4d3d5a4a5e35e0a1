"""An independent implementation of the vault format (docs/vault-format.md), for interop tests.

It uses only other people's libraries: coincurve (libsecp256k1 x-only keys), cryptography
(HKDF-SHA256), PyNaCl (XChaCha20-Poly1305-IETF) and bech32 (BIP-173). Nothing here is shared
with the Swift code, so agreement between the two is evidence that both follow the document.
"""
import base64
import hashlib
import json
import os

import bech32
from coincurve import PrivateKey
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from nacl.bindings import (
    crypto_aead_xchacha20poly1305_ietf_decrypt,
    crypto_aead_xchacha20poly1305_ietf_encrypt,
)

MAGIC = b"MTVAULT"

# Where nonces come from. The testkit generator replaces it with a seeded stream so that
# regenerating leaves unchanged fixtures byte-for-byte the same; everything else uses the OS.
random_bytes = os.urandom
HEADER_SIZE = 66


def hkdf(ikm: bytes, salt: bytes, info: bytes, length: int = 32) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=salt, info=info).derive(ikm)


def xonly_pubkey(secret: bytes) -> str:
    return PrivateKey(secret).public_key_xonly.format().hex()


def nip19_encode(prefix: str, key: bytes) -> str:
    return bech32.bech32_encode(prefix, bech32.convertbits(key, 8, 5, True))


def nip19_decode(text: str, prefix: str) -> bytes:
    hrp, data = bech32.bech32_decode(text)
    assert hrp == prefix, f"expected {prefix}, got {hrp}"
    return bytes(bech32.convertbits(data, 5, 8, False))


class Household:
    """What follows from a parent secret key (docs/vault-format.md §2)."""

    def __init__(self, secret: bytes):
        self.secret = secret
        self.pubkey = xonly_pubkey(secret)
        self.npub = nip19_encode("npub", bytes.fromhex(self.pubkey))
        self.nsec = nip19_encode("nsec", secret)
        self.vault_key = hkdf(secret, b"mytube:vault:v1", self.pubkey.encode())
        # Schema 3 (docs/vault-format.md §9.1): what the secret fields are sealed under.
        self.secrets_key = hkdf(secret, b"mytube:secrets:v1", self.pubkey.encode())
        self.household_id = hashlib.sha256(self.pubkey.encode()).digest()
        self.vault_path = f"vaults/{self.household_id.hex()}.vault"

    def subkey_pubkey(self, device_id: str) -> str:
        return xonly_pubkey(hkdf(self.secret, device_id.encode(), b"mytube:subkey:v1"))


def field_ad(version: int, profile_id: str = None) -> bytes:
    """Associated data of a sealed field: none in v1; bound to its place in v2, and in v3 under
    its own prefix."""
    if version < 2:
        return b""
    prefix = b"mytube:v3:" if version >= 3 else b"mytube:v2:"
    return prefix + (b"wrap-key" if profile_id is None else b"child-nsec:" + profile_id.encode())


def field_key(household: "Household", version: int) -> bytes:
    """The key secret fields are sealed under: the vault key up to v2, the secrets key from v3."""
    return household.secrets_key if version >= 3 else household.vault_key


def seal_field(vault_key: bytes, secret: bytes, nonce: bytes = None, ad: bytes = b"") -> str:
    """base64(nonce ‖ ciphertext ‖ tag)."""
    nonce = nonce or random_bytes(24)
    return base64.b64encode(nonce + crypto_aead_xchacha20poly1305_ietf_encrypt(secret, ad, nonce, vault_key)).decode()


def open_field(vault_key: bytes, blob: str, ad: bytes = b"") -> bytes:
    raw = base64.b64decode(blob, validate=True)
    return crypto_aead_xchacha20poly1305_ietf_decrypt(raw[24:], ad, raw[:24], vault_key)


def seal_envelope(plaintext: bytes, household_id: bytes, vault_key: bytes, schema: int = 1,
                  format_byte: int = 1, suite: int = 1, nonce: bytes = None) -> bytes:
    nonce = nonce or random_bytes(24)
    header = MAGIC + bytes([format_byte, suite, schema]) + household_id + nonce
    assert len(header) == HEADER_SIZE
    return header + crypto_aead_xchacha20poly1305_ietf_encrypt(plaintext, header, nonce, vault_key)


def open_envelope(data: bytes, vault_key: bytes) -> dict:
    header = data[:HEADER_SIZE]
    assert header[:7] == MAGIC and header[7] == 1 and header[8] == 1
    plaintext = crypto_aead_xchacha20poly1305_ietf_decrypt(data[HEADER_SIZE:], header, header[42:66], vault_key)
    document = json.loads(plaintext)
    assert document["version"] == header[9]
    assert hashlib.sha256(document["parentPubkey"].encode()).digest() == header[10:42]
    return document


def seal_document(household: "Household", revealed: dict) -> bytes:
    """Turns a revealed document (nsec, parentWrapKey) into a sealed vault file."""
    return seal_envelope(json.dumps(sealed_document(household, revealed), indent=2).encode(),
                         household.household_id, household.vault_key, schema=revealed["version"])


def sealed_document(household: "Household", revealed: dict) -> dict:
    doc = json.loads(json.dumps(revealed))
    version = doc["version"]
    wrap = doc.pop("parentWrapKey")
    sealed = {}
    for key, value in doc.items():
        if key == "childProfiles":
            sealed[key] = [seal_child(household, child, version) for child in value]
        else:
            sealed[key] = value
        if key == "parentPubkey":
            sealed["parentWrapKeyEncrypted"] = seal_field(field_key(household, version), bytes.fromhex(wrap), ad=field_ad(version))
    return sealed


def seal_child(household: "Household", child: dict, version: int = 1) -> dict:
    out = {}
    for key, value in child.items():
        if key == "nsec":
            out["nsecEncrypted"] = seal_field(field_key(household, version), nip19_decode(value, "nsec"), ad=field_ad(version, child["profileId"]))
        else:
            out[key] = value
    return out


def reveal_document(household_vault_key: bytes, sealed: dict) -> dict:
    """The sealed fields opened with the key they are sealed under (field_key: the vault key up
    to v2, the secrets key from v3)."""
    version = sealed["version"]
    out = {}
    for key, value in sealed.items():
        if key == "parentWrapKeyEncrypted":
            out["parentWrapKey"] = open_field(household_vault_key, value, field_ad(version)).hex()
        elif key == "childProfiles":
            out[key] = [
                {("nsec" if k == "nsecEncrypted" else k):
                 (nip19_encode("nsec", open_field(household_vault_key, v, field_ad(version, child["profileId"]))) if k == "nsecEncrypted" else v)
                 for k, v in child.items()}
                for child in value
            ]
        else:
            out[key] = value
    return out
