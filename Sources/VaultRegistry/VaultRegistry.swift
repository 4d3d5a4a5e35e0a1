// VaultRegistry: the chat app's device registry. The rules (import, revoke in bulk, the read
// views, the log) are written once over one engine interface, with SQLite (through VaultSQLite,
// its one owner) and PostgreSQL (libpq, its one owner) behind it. Layers: docs/architecture.md;
// the schema and rules: docs/device-registry.md.
