-- A request can be shown in several chats at once (Telegram and Matrix), each message
-- with its own id: one row per message, so an answer to any of them finds its request.
-- `exec_approval.message_external_id` keeps the first message posted, as before.
CREATE TABLE exec_approval_message (
    external_id TEXT PRIMARY KEY NOT NULL,
    request_id TEXT NOT NULL REFERENCES exec_approval (id) ON DELETE CASCADE
) WITHOUT ROWID;

CREATE INDEX exec_approval_message_request ON exec_approval_message (request_id);

INSERT OR IGNORE INTO exec_approval_message (external_id, request_id)
    SELECT message_external_id, id FROM exec_approval WHERE message_external_id IS NOT NULL;
