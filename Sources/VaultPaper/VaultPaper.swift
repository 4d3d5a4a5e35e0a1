// VaultPaper: what a family prints. The recovery, share and code sheets laid out from their
// templates, text through FreeType, the family-medical recovery codes (AES-256-GCM through
// libcrypto's EVP), and the strength of a new passphrase (zxcvbn). Layers: docs/architecture.md.
