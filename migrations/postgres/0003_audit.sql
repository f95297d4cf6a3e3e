-- The audit trail (docs/audit.md): changes to the allowlist as events, and a hash chain
-- over request records and those events; as migrations/0012_audit.sql on SQLite.
--
-- One chain per node: each node appends to its own under a transaction-level advisory
-- lock of its own, so nodes never wait on each other's writes, and each node's log
-- anchors its own head.

CREATE TABLE exec_rule_event (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    rule_id    BIGINT NOT NULL,
    event      TEXT NOT NULL CHECK (event IN ('added', 'renewed', 'expired', 'removed')),
    at         TIMESTAMPTZ NOT NULL,
    actor      TEXT NOT NULL,
    via        TEXT,
    request_id TEXT,
    agent_id   TEXT,
    session_id TEXT,
    pattern    TEXT NOT NULL,
    kind       TEXT NOT NULL,
    expires_at TIMESTAMPTZ,
    memory     BOOLEAN NOT NULL,
    node       TEXT NOT NULL
);
CREATE INDEX exec_rule_event_rule ON exec_rule_event (rule_id, id);

-- The rules that exist already were added before events were kept: each gets the event
-- its row still tells of (who made it, when, answering which request).
INSERT INTO exec_rule_event (rule_id, event, at, actor, via, request_id, agent_id, session_id,
                             pattern, kind, expires_at, memory, node)
SELECT id, 'added', created_at, created_by, NULL, source_request_id, agent_id, session_id,
       pattern, kind, expires_at, memory, node
FROM exec_allowlist ORDER BY id;

CREATE TABLE exec_audit (
    node    TEXT NOT NULL,
    seq     BIGINT NOT NULL CHECK (seq > 0),
    at      TIMESTAMPTZ NOT NULL,
    kind    TEXT NOT NULL CHECK (kind IN ('request', 'resolution', 'decided', 'rule', 'segment')),
    subject TEXT NOT NULL,
    digest  TEXT NOT NULL,
    prev    TEXT NOT NULL,
    hash    TEXT NOT NULL,
    PRIMARY KEY (node, seq)
);

CREATE FUNCTION exec_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% rows are never changed or deleted', TG_TABLE_NAME;
END $$;
CREATE TRIGGER exec_rule_event_kept BEFORE UPDATE OR DELETE ON exec_rule_event
    FOR EACH ROW EXECUTE FUNCTION exec_kept();
CREATE TRIGGER exec_audit_kept BEFORE UPDATE OR DELETE ON exec_audit
    FOR EACH ROW EXECUTE FUNCTION exec_kept();
