-- Tool calls are the third kind of request (a `Write`, an `mcp__github__…` call), and
-- tool rules the third kind of allowlist rule. A request is exactly one of `command`,
-- `argv` and `tool_name` (with `tool_input`, its JSON input); `front` names the door it
-- came through (`api`, `cli`, `hook:claude-code`, …).
--
-- SQLite cannot change a table's CHECK constraints, so both tables are rebuilt: created
-- anew, filled from the old, the old dropped and the new renamed, and their indexes made
-- again. Every row and every id is kept.

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
    decision            TEXT CHECK (decision IN ('allow-once', 'allow-always', 'deny')),
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
    duration_ms, stdout_bytes, stderr_bytes, input_bytes, input_sha256, input_head)
SELECT
    id, short_id, agent_id, session_id, command, argv, cwd, reason, risk, risk_reasons,
    status, decision, via, decided_by, error, created_at, expires_at, resolved_at, asked,
    shown, message_external_id, peer_uid, peer_pid, run, exit_code, signal, timed_out,
    duration_ms, stdout_bytes, stderr_bytes, input_bytes, input_sha256, input_head
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

CREATE TABLE exec_allowlist_new (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,            -- never reused after a delete
    agent_id     TEXT,                                         -- NULL: every agent
    pattern      TEXT NOT NULL CHECK (length(pattern) > 0),
    -- exact and glob match commands; tool is a glob over a tool call's name.
    kind         TEXT NOT NULL CHECK (kind IN ('exact', 'glob', 'tool')),
    created_at   TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    expires_at   TEXT,
    last_used_at TEXT,
    last_command TEXT,
    use_count    INTEGER NOT NULL DEFAULT 0
);

INSERT INTO exec_allowlist_new (
    id, agent_id, pattern, kind, created_at, created_by, expires_at, last_used_at,
    last_command, use_count)
SELECT
    id, agent_id, pattern, kind, created_at, created_by, expires_at, last_used_at,
    last_command, use_count
FROM exec_allowlist;

-- The id sequence goes along, so an id freed by a delete is still never reused.
DELETE FROM sqlite_sequence WHERE name = 'exec_allowlist_new';
INSERT INTO sqlite_sequence (name, seq)
    SELECT 'exec_allowlist_new', seq FROM sqlite_sequence WHERE name = 'exec_allowlist';

DROP TABLE exec_allowlist;
ALTER TABLE exec_allowlist_new RENAME TO exec_allowlist;

CREATE UNIQUE INDEX exec_allowlist_rule ON exec_allowlist (ifnull(agent_id, ''), kind, pattern);
