-- +goose Up
-- The key ring (issue 25 item 1): the asymmetric keys that sign ID tokens
-- and logout tokens, published at /.well-known/jwks.json. public_jwk is the
-- public key as a JWK; private_key the PKCS#8 private key sealed under the
-- "signing-keys" key derived from GATEHOUSE_ENCRYPTION_KEY and bound to the
-- kid, base64. A key signs while retired_at is NULL; one such key per alg
-- (the partial unique index), so instances starting together, or rotating
-- together, end with one. A retired key stays published until expires_at.
CREATE TABLE signing_keys (
    kid         TEXT PRIMARY KEY,
    alg         TEXT NOT NULL,
    public_jwk  TEXT NOT NULL,
    private_key TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    retired_at  BIGINT,
    expires_at  BIGINT
);
CREATE UNIQUE INDEX signing_keys_current ON signing_keys (alg) WHERE retired_at IS NULL;

-- +goose Down
DROP TABLE signing_keys;
