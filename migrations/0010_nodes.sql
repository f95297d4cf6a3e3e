-- Nodes: daemons on several hosts may share one database (PostgreSQL), and each row
-- says which one wrote it. On SQLite there is one daemon, and its rows say so too.
--
-- exec_approval gains `node` (the daemon that took the request: where its agent waits)
-- and what a grant answering it would save (`grant_pattern`, `grant_kind`) or why none
-- may (`grant_refused`), judged when it was asked, so that any daemon can answer it.
-- exec_allowlist gains `node` (the daemon that saved the rule).
-- exec_state keeps small values across restarts (where Telegram's updates resume).

ALTER TABLE exec_approval ADD COLUMN node TEXT NOT NULL DEFAULT '';
ALTER TABLE exec_approval ADD COLUMN grant_pattern TEXT;
ALTER TABLE exec_approval ADD COLUMN grant_kind TEXT CHECK (grant_kind IN ('exact', 'glob', 'tool'));
ALTER TABLE exec_approval ADD COLUMN grant_refused TEXT;
ALTER TABLE exec_allowlist ADD COLUMN node TEXT NOT NULL DEFAULT '';

CREATE TABLE exec_state (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
) WITHOUT ROWID;
