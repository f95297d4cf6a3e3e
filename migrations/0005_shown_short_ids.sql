-- A short id is kept out of circulation for a day only once a human may have seen it:
-- posted by a transport, or listed to the owner while pending. An id nobody saw (the
-- agent asked and hung up before any transport posted it) goes back at once, so that an
-- agent asking and hanging up in a loop cannot use up the 65,536 ids.
ALTER TABLE exec_approval ADD COLUMN shown INTEGER NOT NULL DEFAULT 0 CHECK (shown IN (0, 1));

-- Requests asked before this column existed may have been seen.
UPDATE exec_approval SET shown = 1 WHERE asked = 1;
