-- execgate's schema on PostgreSQL: the same tables, columns and meanings as on SQLite
-- (migrations/0001 to 0010 there), in PostgreSQL's own types, plus what daemons sharing
-- the database need to act as one: `exec_node`, each daemon's heartbeat.

CREATE TABLE exec_approval (
    id                  TEXT PRIMARY KEY NOT NULL,            -- UUIDv7
    short_id            TEXT NOT NULL CHECK (length(short_id) = 4),
    agent_id            TEXT NOT NULL,
    session_id          TEXT,
    command             TEXT,                                 -- exactly one of command / argv / tool_name
    argv                TEXT,                                 -- JSON array of strings
    tool_name           TEXT,
    tool_input          TEXT,                                 -- JSON, as the agent sent it
    front               TEXT,
    cwd                 TEXT,
    reason              TEXT,
    risk                TEXT NOT NULL CHECK (risk IN ('safe', 'needs-review', 'dangerous')),
    risk_reasons        TEXT NOT NULL DEFAULT '[]',           -- JSON array of strings
    status              TEXT NOT NULL
                        CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'cancelled')),
    decision            TEXT CHECK (decision IN ('allow-once', 'allow-always', 'allow-session', 'deny')),
    rule_expires_at     TIMESTAMPTZ,
    via                 TEXT,
    decided_by          TEXT,
    error               TEXT,
    created_at          TIMESTAMPTZ NOT NULL,
    expires_at          TIMESTAMPTZ,
    resolved_at         TIMESTAMPTZ,
    -- Put to a human: only those ids are kept from reuse.
    asked               BOOLEAN NOT NULL DEFAULT false,
    shown               BOOLEAN NOT NULL DEFAULT false,
    message_external_id TEXT,
    peer_uid            BIGINT,
    peer_pid            BIGINT,
    run                 BOOLEAN NOT NULL DEFAULT false,
    exit_code           BIGINT,
    signal              BIGINT,
    timed_out           BOOLEAN,
    duration_ms         BIGINT,
    stdout_bytes        BIGINT,
    stderr_bytes        BIGINT,
    input_bytes         BIGINT,
    input_sha256        TEXT,
    input_head          TEXT,
    -- The daemon that took the request: where its agent waits.
    node                TEXT NOT NULL,
    -- What a grant answering it would save, or why none may, judged when it was asked.
    grant_pattern       TEXT,
    grant_kind          TEXT CHECK (grant_kind IN ('exact', 'glob', 'tool')),
    grant_refused       TEXT,
    CHECK (num_nonnulls(command, argv, tool_name) = 1),
    CHECK ((tool_name IS NULL) = (tool_input IS NULL)),
    -- A tool call is never run by execgate: the agent makes it.
    CHECK (tool_name IS NULL OR NOT run),
    -- A request is resolved exactly when it has left 'pending'.
    CHECK ((status = 'pending') = (resolved_at IS NULL))
);

-- A short id names at most one pending request across every node: the owner's
-- "/approve a1b2" is never ambiguous.
CREATE UNIQUE INDEX exec_approval_pending_short_id ON exec_approval (short_id) WHERE status = 'pending';
CREATE INDEX exec_approval_agent_created ON exec_approval (agent_id, created_at);
CREATE INDEX exec_approval_created ON exec_approval (created_at, id);
CREATE INDEX exec_approval_asked_short_id ON exec_approval (short_id, created_at) WHERE asked;
CREATE INDEX exec_approval_pending ON exec_approval (node, created_at) WHERE status = 'pending';

CREATE TABLE exec_approval_message (
    external_id TEXT PRIMARY KEY NOT NULL,
    request_id  TEXT NOT NULL REFERENCES exec_approval (id) ON DELETE CASCADE
);
CREATE INDEX exec_approval_message_request ON exec_approval_message (request_id);

CREATE TABLE exec_allowlist (
    id                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- never reused
    agent_id          TEXT,                                  -- NULL: every agent
    session_id        TEXT,                                  -- NULL: every session
    pattern           TEXT NOT NULL CHECK (length(pattern) > 0),
    -- exact and glob match commands; tool is a glob over a tool call's name.
    kind              TEXT NOT NULL CHECK (kind IN ('exact', 'glob', 'tool')),
    created_at        TIMESTAMPTZ NOT NULL,
    created_by        TEXT NOT NULL,
    expires_at        TIMESTAMPTZ,
    last_used_at      TIMESTAMPTZ,
    last_command      TEXT,
    use_count         BIGINT NOT NULL DEFAULT 0,
    source_request_id TEXT,
    -- Lasts until the daemon that saved it stops: removed at its next start.
    memory            BOOLEAN NOT NULL DEFAULT false,
    node              TEXT NOT NULL
);
CREATE UNIQUE INDEX exec_allowlist_rule
    ON exec_allowlist (coalesce(agent_id, ''), coalesce(session_id, ''), kind, pattern);

-- Small values kept across restarts and nodes (where Telegram's updates resume).
CREATE TABLE exec_state (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);

-- Every daemon sharing the database, and when it last said it was alive: the chat
-- leader cancels the pending requests of a node silent for `cluster.node_timeout_secs`.
CREATE TABLE exec_node (
    node         TEXT PRIMARY KEY NOT NULL,
    started_at   TIMESTAMPTZ NOT NULL,
    heartbeat_at TIMESTAMPTZ NOT NULL,
    version      TEXT NOT NULL
);
