// VaultCore: every rule of Household Vault Tools that needs no object store, no picture and
// no database, and nothing that talks to a person.
//
// The module derives a household's keys from the parent's Nostr secret key, seals and opens the
// identity vault envelope, reads, writes, migrates and checks the vault document, splits keys
// into SLIP-0039 shares, plans rotations and revokes devices in a vault, and holds the write
// path's rules. It never prints, exits, reads the environment or looks at a terminal: the
// executables do that. It links libsodium and libsecp256k1 only.
//
// Folders: Support/ (errors, secret bytes, encodings), Crypto/ (one Swift layer over libsodium),
// Keys/ (bech32, NIP-19, NIP-49, BIP-39, secp256k1 and the household derivations), Vault/
// (envelope, document, validation, migration), Shares/ (SLIP-0039), Codes/ (printed payloads),
// Rotation/, Revocation/, Files/ (outputs, the same-file rule, limits, s3:// names). The layers
// above it are drawn in docs/architecture.md; the byte-level contract is docs/vault-format.md.
