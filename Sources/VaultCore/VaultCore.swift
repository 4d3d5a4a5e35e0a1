// VaultCore: every rule of Household Vault Tools, and nothing that talks to a person.
//
// The module derives a household's keys from the parent's Nostr secret key, seals and opens the
// identity vault envelope, reads and writes the vault document, and checks it. It never prints,
// exits, reads the environment or looks at a terminal: the executables do that.
//
// Folders: Support/ (errors, secret bytes, encodings), Crypto/ (one Swift layer over libsodium),
// Keys/ (bech32, NIP-19, secp256k1 and the household derivations), Vault/ (envelope, document,
// validation). The byte-level contract is docs/vault-format.md.
