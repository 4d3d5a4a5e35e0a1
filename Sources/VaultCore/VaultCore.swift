// VaultCore: every rule of Household Vault Tools that needs no object store, no picture and
// no database, and nothing that talks to a person: bytes in, bytes out.
//
// The module derives a household's keys from the parent's Nostr secret key, seals and opens the
// identity vault envelope, reads, writes, migrates and checks the vault document, splits keys
// into SLIP-0039 shares, plans rotations and revokes devices in a vault. It never prints, exits,
// reads the environment or looks at a terminal, and it touches no file, descriptor or process:
// the write path and child processes are VaultFiles', over it (age's `age.go` never opens a
// file either). It links libsodium, libsecp256k1 and libunistring only.
//
// Folders: Support/ (errors, secret bytes, encodings, limits), Crypto/ (one Swift layer over
// libsodium), Keys/ (bech32, NIP-19, NIP-49, BIP-39, secp256k1 and the household derivations),
// Vault/ (envelope, document, validation, migration), Shares/ (SLIP-0039), Codes/ (printed
// payloads), Rotation/, Revocation/. The layers above it are drawn in docs/architecture.md; the
// byte-level contract is docs/vault-format.md.
