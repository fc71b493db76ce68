-- +goose Up
-- Social sign-in (issue 27 item 1): an instance-wide upstream OpenID
-- provider's subject linked to an account. provider is the operator's
-- name for it (GATEHOUSE_SOCIAL_PROVIDERS); email is the address the
-- provider gave when the link was made, shown on the account page; the
-- identities go with the account.
CREATE TABLE social_identities (
    id         TEXT PRIMARY KEY,
    provider   TEXT NOT NULL,
    subject    TEXT NOT NULL,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    email      TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX social_identities_subject ON social_identities (provider, subject);
CREATE INDEX social_identities_user ON social_identities (user_id, created_at);

-- +goose Down
DROP TABLE social_identities;
