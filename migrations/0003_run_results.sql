-- Run mode records how a command ended: the terminating signal, and how much it wrote
-- to each stream (the output itself is returned to the agent, never stored).
ALTER TABLE exec_approval ADD COLUMN signal INTEGER;
ALTER TABLE exec_approval ADD COLUMN stdout_bytes INTEGER;
ALTER TABLE exec_approval ADD COLUMN stderr_bytes INTEGER;
