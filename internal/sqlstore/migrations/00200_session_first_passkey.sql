-- +goose Up
-- Two factors are two credentials (issue 23 item 5): a sign-in session
-- opened by a passkey remembers which one, so that the second factor it
-- owes (a passkey without user verification is one factor) is taken with
-- another credential. No foreign key: a removed passkey matches nothing.
ALTER TABLE sessions ADD COLUMN first_passkey_id TEXT;

-- +goose Down
ALTER TABLE sessions DROP COLUMN first_passkey_id;
