-- execgate's first schema: every request and every decision (exec_approval), and the
-- rules that approve without asking (exec_allowlist).
--
-- Timestamps are TEXT in one fixed-width UTC form (2026-11-21T19:00:00.000Z) so that
-- string comparison is time comparison.

CREATE TABLE exec_approval (
    id                  TEXT PRIMARY KEY NOT NULL,            -- UUIDv7
    short_id            TEXT NOT NULL CHECK (length(short_id) = 4),
    agent_id            TEXT NOT NULL,
    session_id          TEXT,
    command             TEXT,                                 -- exactly one of command / argv
    argv                TEXT,                                 -- JSON array of strings
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
    message_external_id TEXT,
    peer_uid            INTEGER,
    peer_pid            INTEGER,
    run                 INTEGER NOT NULL DEFAULT 0 CHECK (run IN (0, 1)),
    exit_code           INTEGER,
    timed_out           INTEGER,
    duration_ms         INTEGER,
    CHECK ((command IS NULL) <> (argv IS NULL)),
    -- A request is resolved exactly when it has left 'pending'.
    CHECK ((status = 'pending') = (resolved_at IS NULL))
);

-- A short id names at most one pending request: the owner's "/approve a1b2" is never ambiguous.
CREATE UNIQUE INDEX exec_approval_pending_short_id ON exec_approval (short_id) WHERE status = 'pending';
CREATE INDEX exec_approval_short_id_created ON exec_approval (short_id, created_at);
CREATE INDEX exec_approval_status ON exec_approval (status);
CREATE INDEX exec_approval_agent_created ON exec_approval (agent_id, created_at);
CREATE INDEX exec_approval_created ON exec_approval (created_at);

CREATE TABLE exec_allowlist (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,            -- never reused after a delete
    agent_id     TEXT,                                         -- NULL: every agent
    pattern      TEXT NOT NULL CHECK (length(pattern) > 0),
    kind         TEXT NOT NULL CHECK (kind IN ('exact', 'glob')),
    created_at   TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    expires_at   TEXT,
    last_used_at TEXT,
    last_command TEXT,
    use_count    INTEGER NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX exec_allowlist_rule ON exec_allowlist (ifnull(agent_id, ''), kind, pattern);
