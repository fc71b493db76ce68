-- +goose Up
-- Two-factor (issue 13 items 1, 3 and 4). A session keeps its assurance
-- so its refreshes keep it: the level, the methods presented (RFC 8176,
-- space-separated) and whether a second factor is still owed.
ALTER TABLE sessions ADD COLUMN aal TEXT NOT NULL DEFAULT 'aal1';
ALTER TABLE sessions ADD COLUMN amr TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN mfa_pending BOOLEAN NOT NULL DEFAULT FALSE;

-- A TOTP factor: its secret sealed (internal/seal, purpose "totp", bound to
-- the factor id), base64; last_step is the last time step accepted, so a
-- code is used once (a later code must name a strictly greater step).
CREATE TABLE mfa_factors (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind         TEXT NOT NULL CHECK (kind IN ('totp')),
    secret       TEXT NOT NULL,
    last_step    BIGINT NOT NULL DEFAULT 0,
    created_at   BIGINT NOT NULL,
    confirmed_at BIGINT
);
CREATE INDEX mfa_factors_user ON mfa_factors (user_id);

-- Recovery codes, stored as SHA-256 of the user id and the code; a use
-- sets used_at by a conditional UPDATE.
CREATE TABLE recovery_codes (
    code_hash  TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    used_at    BIGINT
);
CREATE INDEX recovery_codes_user ON recovery_codes (user_id);

-- Failed second-factor attempts per account: at most MFAAttempts in a
-- window of MFALockout, counted before each check, cleared by a success.
CREATE TABLE mfa_attempts (
    user_id      TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    failures     INTEGER NOT NULL,
    window_start BIGINT NOT NULL
);

-- +goose Down
DROP TABLE mfa_attempts;
DROP TABLE recovery_codes;
DROP TABLE mfa_factors;
ALTER TABLE sessions DROP COLUMN mfa_pending;
ALTER TABLE sessions DROP COLUMN amr;
ALTER TABLE sessions DROP COLUMN aal;
