-- Grants: a human may approve for this session only (`allow-session`), and any grant
-- that saves a rule may be time-boxed (`/approve a1b2 30m`, `always 7d`, `session 2h`).
--
-- exec_approval: its decision CHECK gains 'allow-session', so the table is rebuilt
-- (created anew, filled from the old, the old dropped and the new renamed, its indexes
-- made again; every row kept), and it gains `rule_expires_at`. The migration runs with
-- foreign keys off, so dropping the old table does not cascade to the messages that
-- point at it; the runner checks every foreign key before it commits.
--
-- exec_allowlist gains `session_id` (NULL: every session), `source_request_id` (the
-- request whose decision saved the rule) and `memory` (1: the rule lasts until the
-- daemon stops and its row is removed at the next start). A rule is now unique by
-- agent, session, kind and pattern.

CREATE TABLE exec_approval_new (
    id                  TEXT PRIMARY KEY NOT NULL,            -- UUIDv7
    short_id            TEXT NOT NULL CHECK (length(short_id) = 4),
    agent_id            TEXT NOT NULL,
    session_id          TEXT,
    command             TEXT,                                 -- exactly one of command / argv / tool_name
    argv                TEXT,                                 -- JSON array of strings
    tool_name           TEXT,
    tool_input          TEXT,                                 -- JSON; set exactly with tool_name
    front               TEXT,
    cwd                 TEXT,
    reason              TEXT,
    risk                TEXT NOT NULL CHECK (risk IN ('safe', 'needs-review', 'dangerous')),
    risk_reasons        TEXT NOT NULL DEFAULT '[]',           -- JSON array of strings
    status              TEXT NOT NULL
                        CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'cancelled')),
    decision            TEXT CHECK (decision IN ('allow-once', 'allow-always', 'allow-session', 'deny')),
    -- When the rule a time-boxed grant saved expires (`/approve a1b2 30m`); else NULL.
    rule_expires_at     TEXT,
    via                 TEXT,
    decided_by          TEXT,
    error               TEXT,
    created_at          TEXT NOT NULL,
    expires_at          TEXT,
    resolved_at         TEXT,
    -- 1 when the request was put to a human: only those ids are kept from reuse.
    asked               INTEGER NOT NULL DEFAULT 0 CHECK (asked IN (0, 1)),
    shown               INTEGER NOT NULL DEFAULT 0 CHECK (shown IN (0, 1)),
    message_external_id TEXT,
    peer_uid            INTEGER,
    peer_pid            INTEGER,
    run                 INTEGER NOT NULL DEFAULT 0 CHECK (run IN (0, 1)),
    exit_code           INTEGER,
    signal              INTEGER,
    timed_out           INTEGER,
    duration_ms         INTEGER,
    stdout_bytes        INTEGER,
    stderr_bytes        INTEGER,
    input_bytes         INTEGER,
    input_sha256        TEXT,
    input_head          TEXT,
    CHECK ((command IS NOT NULL) + (argv IS NOT NULL) + (tool_name IS NOT NULL) = 1),
    CHECK ((tool_name IS NULL) = (tool_input IS NULL)),
    -- A tool call is never run by execgate: the agent makes it.
    CHECK (tool_name IS NULL OR run = 0),
    -- A request is resolved exactly when it has left 'pending'.
    CHECK ((status = 'pending') = (resolved_at IS NULL))
);

INSERT INTO exec_approval_new (
    id, short_id, agent_id, session_id, command, argv, cwd, reason, risk, risk_reasons,
    status, decision, via, decided_by, error, created_at, expires_at, resolved_at, asked,
    shown, message_external_id, peer_uid, peer_pid, run, exit_code, signal, timed_out,
    duration_ms, stdout_bytes, stderr_bytes, input_bytes, input_sha256, input_head,
    tool_name, tool_input, front)
SELECT
    id, short_id, agent_id, session_id, command, argv, cwd, reason, risk, risk_reasons,
    status, decision, via, decided_by, error, created_at, expires_at, resolved_at, asked,
    shown, message_external_id, peer_uid, peer_pid, run, exit_code, signal, timed_out,
    duration_ms, stdout_bytes, stderr_bytes, input_bytes, input_sha256, input_head,
    tool_name, tool_input, front
FROM exec_approval;

DROP TABLE exec_approval;
ALTER TABLE exec_approval_new RENAME TO exec_approval;

CREATE UNIQUE INDEX exec_approval_pending_short_id ON exec_approval (short_id) WHERE status = 'pending';
CREATE INDEX exec_approval_agent_created ON exec_approval (agent_id, created_at);
CREATE INDEX exec_approval_created ON exec_approval (created_at);
CREATE INDEX exec_approval_message_external_id
    ON exec_approval (message_external_id)
    WHERE message_external_id IS NOT NULL;
CREATE INDEX exec_approval_asked_short_id ON exec_approval (short_id, created_at) WHERE asked = 1;
CREATE INDEX exec_approval_pending ON exec_approval (created_at) WHERE status = 'pending';


ALTER TABLE exec_allowlist ADD COLUMN session_id TEXT;
ALTER TABLE exec_allowlist ADD COLUMN source_request_id TEXT;
ALTER TABLE exec_allowlist ADD COLUMN memory INTEGER NOT NULL DEFAULT 0 CHECK (memory IN (0, 1));

DROP INDEX exec_allowlist_rule;
CREATE UNIQUE INDEX exec_allowlist_rule
    ON exec_allowlist (ifnull(agent_id, ''), ifnull(session_id, ''), kind, pattern);
CREATE INDEX exec_allowlist_memory ON exec_allowlist (memory) WHERE memory = 1;
