-- +goose Up
-- Sign reminders (issue 12 item 5): a pending document with
-- auto_remind_days > 0 mails its unsigned signers every that many days
-- after it was sent; last_reminded_at is claimed by the one sweep that
-- sends a round.
ALTER TABLE sign_documents ADD COLUMN auto_remind_days INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sign_documents ADD COLUMN last_reminded_at BIGINT;

-- +goose Down
ALTER TABLE sign_documents DROP COLUMN last_reminded_at;
ALTER TABLE sign_documents DROP COLUMN auto_remind_days;
