-- Replies, reactions and button taps find their request by the chat message it was
-- posted as; without an index each of them would scan the whole history.
CREATE INDEX exec_approval_message_external_id
    ON exec_approval (message_external_id)
    WHERE message_external_id IS NOT NULL;
