-- +goose Up
-- Workspace applications (issue 25 item 3): OAuth clients that a team
-- org's owners and admins register for their own products. The client_id
-- is 'app_' and the id. Lists are JSON arrays of strings; jwks the inline
-- JSON Web Key Set of a private_key_jwt application ('' for none). The
-- secret of the two secret methods is kept as its SHA-256 (secret_hash);
-- after a rotation with grace the previous hash keeps working until
-- prev_secret_until (unix micros). A deleted application keeps its row
-- (deleted_at) so its id is never reused.
CREATE TABLE applications (
    id                        TEXT PRIMARY KEY,
    org_id                    TEXT NOT NULL,
    client_name               TEXT NOT NULL,
    redirect_uris             TEXT NOT NULL,
    post_logout_redirect_uris TEXT NOT NULL,
    scope                     TEXT NOT NULL,
    auth_method               TEXT NOT NULL,
    jwks_uri                  TEXT NOT NULL,
    jwks                      TEXT NOT NULL,
    id_token_alg              TEXT NOT NULL,
    backchannel_logout_uri    TEXT NOT NULL,
    first_party               BOOLEAN NOT NULL,
    secret_hash               TEXT NOT NULL,
    prev_secret_hash          TEXT NOT NULL,
    prev_secret_until         BIGINT NOT NULL,
    created_by                TEXT NOT NULL,
    created_at                BIGINT NOT NULL,
    updated_at                BIGINT NOT NULL,
    deleted_at                BIGINT
);
CREATE INDEX applications_org ON applications (org_id, created_at) WHERE deleted_at IS NULL;

-- The jti of every client assertion (RFC 7523) accepted, until it expires:
-- the primary key refuses a replay on every instance.
CREATE TABLE client_assertions (
    client_id  TEXT NOT NULL,
    jti        TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (client_id, jti)
);
CREATE INDEX client_assertions_expiry ON client_assertions (expires_at);

-- +goose Down
DROP TABLE client_assertions;
DROP TABLE applications;
