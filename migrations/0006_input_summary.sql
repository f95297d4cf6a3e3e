-- A request's stdin (`input`) is part of what is approved: the owner is shown its size,
-- its sha256 and its first characters, and the record keeps them. The input itself goes
-- to the command only and is never stored.
ALTER TABLE exec_approval ADD COLUMN input_bytes INTEGER;
ALTER TABLE exec_approval ADD COLUMN input_sha256 TEXT;
ALTER TABLE exec_approval ADD COLUMN input_head TEXT;
