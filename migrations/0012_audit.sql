-- The audit trail (docs/audit.md): changes to the allowlist as events, and a hash chain
-- over request records and those events.
--
-- exec_rule_event: every change to a rule, one row each, never updated or deleted (the
-- triggers refuse it; they stop mistakes and casual edits, not someone who can drop
-- them, which is what the chain is for). A removed rule's row leaves exec_allowlist;
-- its events keep what it was.
--
-- exec_audit: one chain per node, in the order its writes were committed. An entry
-- names what it vouches for (`kind`, `subject`) and the digest of that row's chained
-- columns as committed; `hash` links it to the entry before (`prev`). A `segment`
-- entry begins a new chain after a break, and says so.

CREATE TABLE exec_rule_event (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,           -- never reused
    rule_id    INTEGER NOT NULL,
    event      TEXT NOT NULL CHECK (event IN ('added', 'renewed', 'expired', 'removed')),
    at         TEXT NOT NULL,
    actor      TEXT NOT NULL,                               -- who: a person, or execgate
    via        TEXT,                                        -- from which front
    request_id TEXT,                                        -- whose answer made it
    agent_id   TEXT,
    session_id TEXT,
    pattern    TEXT NOT NULL,
    kind       TEXT NOT NULL,
    expires_at TEXT,
    memory     INTEGER NOT NULL CHECK (memory IN (0, 1)),
    node       TEXT NOT NULL
);
CREATE INDEX exec_rule_event_rule ON exec_rule_event (rule_id, id);

CREATE TRIGGER exec_rule_event_kept_update BEFORE UPDATE ON exec_rule_event
BEGIN SELECT RAISE(ABORT, 'rule events are never changed'); END;
CREATE TRIGGER exec_rule_event_kept_delete BEFORE DELETE ON exec_rule_event
BEGIN SELECT RAISE(ABORT, 'rule events are never deleted'); END;

-- The rules that exist already were added before events were kept: each gets the event
-- its row still tells of (who made it, when, answering which request).
INSERT INTO exec_rule_event (rule_id, event, at, actor, via, request_id, agent_id, session_id,
                             pattern, kind, expires_at, memory, node)
SELECT id, 'added', created_at, created_by, NULL, source_request_id, agent_id, session_id,
       pattern, kind, expires_at, memory, node
FROM exec_allowlist ORDER BY id;

CREATE TABLE exec_audit (
    node    TEXT NOT NULL,
    seq     INTEGER NOT NULL CHECK (seq > 0),
    at      TEXT NOT NULL,
    kind    TEXT NOT NULL CHECK (kind IN ('request', 'resolution', 'decided', 'rule', 'segment')),
    subject TEXT NOT NULL,
    digest  TEXT NOT NULL,
    prev    TEXT NOT NULL,
    hash    TEXT NOT NULL,
    PRIMARY KEY (node, seq)
) WITHOUT ROWID;

CREATE TRIGGER exec_audit_kept_update BEFORE UPDATE ON exec_audit
BEGIN SELECT RAISE(ABORT, 'audit entries are never changed'); END;
CREATE TRIGGER exec_audit_kept_delete BEFORE DELETE ON exec_audit
BEGIN SELECT RAISE(ABORT, 'audit entries are never deleted'); END;
