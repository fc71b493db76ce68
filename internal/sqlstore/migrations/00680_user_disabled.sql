-- +goose Up
-- An account an operator disabled (gatehouse users disable, issue 29 item
-- 10): every sign-in and key exchange of it is refused while disabled_at is
-- set (unix microseconds); enabling clears it.
ALTER TABLE users ADD COLUMN disabled_at BIGINT;

-- +goose Down
ALTER TABLE users DROP COLUMN disabled_at;
