-- +goose Up
-- Passkeys (issue 13 item 2): WebAuthn credentials of an account, and the
-- state of ceremonies begun but not yet finished. A credential id names one
-- key across all accounts (the unique index: registering it twice is a
-- conflict). Binary values are base64url text (credential id, public key)
-- or hex (AAGUID), one type on both databases.
CREATE TABLE passkeys (
    id            TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    credential_id TEXT NOT NULL,
    public_key    TEXT NOT NULL,
    sign_count    BIGINT NOT NULL DEFAULT 0,
    transports    TEXT NOT NULL DEFAULT '',
    aaguid        TEXT NOT NULL DEFAULT '',
    attestation   TEXT NOT NULL DEFAULT '',
    user_verified BOOLEAN NOT NULL DEFAULT FALSE,
    backup_eligible BOOLEAN NOT NULL DEFAULT FALSE,
    backed_up     BOOLEAN NOT NULL DEFAULT FALSE,
    name          TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    last_used_at  BIGINT
);
CREATE UNIQUE INDEX passkeys_credential ON passkeys (credential_id);
CREATE INDEX passkeys_user ON passkeys (user_id, created_at);

-- A ceremony is go-webauthn's SessionData (JSON) under the hash of the id
-- handed to the browser, used once (DELETE … RETURNING) before expires_at;
-- user_id is the account a registration (or second-factor check) is for,
-- NULL for a usernameless sign-in.
CREATE TABLE passkey_ceremonies (
    id_hash    TEXT PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('register', 'login')),
    user_id    TEXT REFERENCES users (id) ON DELETE CASCADE,
    session    TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX passkey_ceremonies_expiry ON passkey_ceremonies (expires_at);

-- +goose Down
DROP TABLE passkey_ceremonies;
DROP TABLE passkeys;
