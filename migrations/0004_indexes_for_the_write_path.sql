-- Indexes shaped by what reads them, so that every insert touches few pages.
--
-- A policy-decided request gets a random short id that no human sees and that is not
-- unique. Indexing it put every insert on a random page of a large index; and a lookup
-- by such an id could only pick one of ~15 rows that share it. Short ids are now looked
-- up among asked requests only, whose ids are unique within 24 hours.
DROP INDEX exec_approval_short_id_created;
CREATE INDEX exec_approval_asked_short_id ON exec_approval (short_id, created_at) WHERE asked = 1;

-- Only the pending rows are ever selected by status (the startup sweep, `execgate
-- pending`); a full index on status also grew with every decided request.
DROP INDEX exec_approval_status;
CREATE INDEX exec_approval_pending ON exec_approval (created_at) WHERE status = 'pending';
