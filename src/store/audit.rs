//! The audit chain (docs/audit.md): what each entry vouches for, how its hashes are
//! made, and how a chain is checked, the same on both backends.
//!
//! An entry vouches for one row as committed: a request when it is created, the same
//! request when it is resolved, or a rule event. Its `digest` is the SHA-256 of that
//! row's chained columns ([`REQUEST`], [`RESOLUTION`], [`RULE_EVENT`]) read back from the
//! database, so a backend hashes exactly what it stored, in its own types made one. Its
//! `hash` covers the digest, what the entry names, its place (`node`, `seq`) and the
//! hash of the entry before (`prev`): changing a row breaks its digest; changing,
//! removing or slipping in an entry breaks the links after it. Each node keeps its own
//! chain; `seq` counts its entries from 1 without a gap.
//!
//! What a backend supplies is reading: the entries in order, each subject's columns, and
//! which rows no entry vouches for. [`Verifier`] judges, so both backends judge alike.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The `prev` of a chain's first entry, and of the first entry of every new segment.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// What an entry vouches for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    /// A request as created (subject: its id).
    Request,
    /// A request as resolved (subject: its id).
    Resolution,
    /// A request created and resolved at once, by policy or a rule (subject: its id):
    /// one entry for both, as one write made both.
    Decided,
    /// A rule event (subject: its id).
    Rule,
    /// A new chain after a break (subject: what was found broken); its `prev` is
    /// [`GENESIS`].
    Segment,
}

impl EntryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Request => "request",
            EntryKind::Resolution => "resolution",
            EntryKind::Decided => "decided",
            EntryKind::Rule => "rule",
            EntryKind::Segment => "segment",
        }
    }

    pub fn parse(s: &str) -> Option<EntryKind> {
        [
            EntryKind::Request,
            EntryKind::Resolution,
            EntryKind::Decided,
            EntryKind::Rule,
            EntryKind::Segment,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }

    /// The table its subject is a row of, and the columns its digest covers, in order
    /// (the first is the row's key); `None` for a segment, which vouches for its own
    /// words.
    pub fn subject(self) -> Option<(&'static str, Vec<Column>)> {
        let (table, groups): (&str, &[&[Column]]) = match self {
            EntryKind::Request => ("exec_approval", &[REQUEST]),
            EntryKind::Resolution => ("exec_approval", &[RESOLUTION]),
            EntryKind::Decided => ("exec_approval", &[REQUEST, RESOLUTION]),
            EntryKind::Rule => ("exec_rule_event", &[RULE_EVENT]),
            EntryKind::Segment => return None,
        };
        Some((table, groups.concat()))
    }

    /// What a finding calls its subject: `request ID`, `rule event ID`.
    pub fn name(self) -> &'static str {
        match self {
            EntryKind::Rule => "rule event",
            kind => kind.as_str(),
        }
    }
}

/// A chained column and how PostgreSQL types it (SQLite's values are read as stored).
#[derive(Clone, Copy, Debug)]
pub enum Column {
    Text(&'static str),
    Int(&'static str),
    /// 0 or 1.
    Bool(&'static str),
    /// As `store::ts` writes it.
    Time(&'static str),
}

impl Column {
    pub fn name(self) -> &'static str {
        match self {
            Column::Text(n) | Column::Int(n) | Column::Bool(n) | Column::Time(n) => n,
        }
    }
}

use Column::{Bool, Int, Text, Time};

/// A request as created: what was asked, by whom, where, and how it was judged. Not
/// what changes after by design: its resolution (an entry of its own), which messages
/// show it, whether its id was shown, how its run ended, and the confinement a run
/// records as applied.
pub const REQUEST: &[Column] = &[
    Text("id"),
    Text("short_id"),
    Text("agent_id"),
    Text("session_id"),
    Text("command"),
    Text("argv"),
    Text("tool_name"),
    Text("tool_input"),
    Text("cwd"),
    Text("reason"),
    Text("risk"),
    Text("risk_reasons"),
    Time("created_at"),
    Time("expires_at"),
    Bool("asked"),
    Int("peer_uid"),
    Int("peer_pid"),
    Bool("run"),
    Int("input_bytes"),
    Text("input_sha256"),
    Text("input_head"),
    Text("front"),
    Text("node"),
    Text("grant_pattern"),
    Text("grant_kind"),
    Text("grant_refused"),
];

/// A request as resolved: its one transition out of `pending`.
pub const RESOLUTION: &[Column] = &[
    Text("id"),
    Text("status"),
    Text("decision"),
    Text("via"),
    Text("decided_by"),
    Time("resolved_at"),
    Text("error"),
    Time("rule_expires_at"),
];

/// A rule event, whole.
pub const RULE_EVENT: &[Column] = &[
    Int("id"),
    Int("rule_id"),
    Text("event"),
    Time("at"),
    Text("actor"),
    Text("via"),
    Text("request_id"),
    Text("agent_id"),
    Text("session_id"),
    Text("pattern"),
    Text("kind"),
    Time("expires_at"),
    Bool("memory"),
    Text("node"),
];

/// The rows of each kind no entry vouches for, as text: the same SQL on both backends.
/// Set differences, which both compute by sorting or hashing each side once: a verify
/// stays O(n log n) without an index on what entries name, which every write would pay.
pub(crate) const UNCHAINED: [(&str, &str); 3] = [
    (
        "request",
        "SELECT id FROM exec_approval \
         EXCEPT SELECT subject FROM exec_audit WHERE kind IN ('request', 'decided') ORDER BY 1",
    ),
    (
        "resolution",
        "SELECT id FROM exec_approval WHERE status <> 'pending' \
         EXCEPT SELECT subject FROM exec_audit WHERE kind IN ('resolution', 'decided') ORDER BY 1",
    ),
    (
        "rule event",
        "SELECT CAST(id AS TEXT) FROM exec_rule_event \
         EXCEPT SELECT subject FROM exec_audit WHERE kind = 'rule' ORDER BY 1",
    ),
];

/// The rows more than one entry vouches for (a creation twice, a resolution twice, a
/// rule event twice), named as findings name them: the same SQL on both backends.
pub(crate) const DUPLICATED: &str = "SELECT what || ' ' || subject FROM ( \
     SELECT 'request' AS what, subject FROM exec_audit WHERE kind IN ('request', 'decided') \
     UNION ALL SELECT 'resolution', subject FROM exec_audit WHERE kind IN ('resolution', 'decided') \
     UNION ALL SELECT 'rule event', subject FROM exec_audit WHERE kind = 'rule') AS vouched \
     GROUP BY what, subject HAVING count(*) > 1 ORDER BY what, subject";

/// A column's value as read back, in the few shapes both backends share.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Text(String),
    /// What SQLite may hold where execgate writes neither (a hand edit): kept apart so
    /// that it never hashes like a value execgate writes.
    Other(Vec<u8>),
}

impl Value {
    fn encode(&self, out: &mut Vec<u8>) {
        let bytes = |out: &mut Vec<u8>, tag: u8, b: &[u8]| {
            out.push(tag);
            out.extend_from_slice(&(b.len() as u64).to_be_bytes());
            out.extend_from_slice(b);
        };
        match self {
            Value::Null => out.push(b'n'),
            Value::Int(i) => {
                out.push(b'i');
                out.extend_from_slice(&i.to_be_bytes());
            }
            Value::Text(t) => bytes(out, b't', t.as_bytes()),
            Value::Other(b) => bytes(out, b'o', b),
        }
    }

    /// For export: the value as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Null => serde_json::Value::Null,
            Value::Int(i) => (*i).into(),
            Value::Text(t) => t.clone().into(),
            Value::Other(b) => crate::model::sha256_hex(b).into(),
        }
    }
}

/// SHA-256, in lowercase hex, of values encoded without ambiguity (each tagged, each
/// text with its length).
fn hash_of(values: &[Value]) -> String {
    let mut encoded = Vec::with_capacity(256);
    for v in values {
        v.encode(&mut encoded);
    }
    Sha256::digest(&encoded)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The digest of a subject's chained columns, in their order.
pub fn digest(values: &[Value]) -> String {
    hash_of(values)
}

/// The digest a segment entry vouches for: its own words.
pub fn segment_digest(subject: &str) -> String {
    hash_of(&[Value::Text(subject.to_string())])
}

/// One entry of a chain, as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub node: String,
    pub seq: i64,
    /// When the write it vouches for happened (`store::ts`).
    pub at: String,
    pub kind: EntryKind,
    pub subject: String,
    pub digest: String,
    pub prev: String,
    pub hash: String,
}

impl Entry {
    /// A new entry after `prev` (its hash made here).
    pub fn after(
        node: &str,
        seq: i64,
        at: String,
        kind: EntryKind,
        subject: String,
        digest: String,
        prev: String,
    ) -> Entry {
        let mut entry = Entry {
            node: node.to_string(),
            seq,
            at,
            kind,
            subject,
            digest,
            prev,
            hash: String::new(),
        };
        entry.hash = entry.expected_hash();
        entry
    }

    /// The entry after `last` in `node`'s chain (the first when `last` is None): a
    /// segment begins anew, any other links to `last`.
    pub fn next(
        node: &str,
        last: Option<&Entry>,
        at: String,
        kind: EntryKind,
        subject: &str,
        digest: String,
    ) -> Entry {
        let seq = last.map_or(1, |l| l.seq + 1);
        let prev = match (last, kind) {
            (Some(l), k) if k != EntryKind::Segment => l.hash.clone(),
            _ => GENESIS.to_string(),
        };
        Entry::after(node, seq, at, kind, subject.to_string(), digest, prev)
    }

    /// The hash this entry's other fields make.
    pub fn expected_hash(&self) -> String {
        hash_of(&[
            Value::Text(self.prev.clone()),
            Value::Text(self.node.clone()),
            Value::Int(self.seq),
            Value::Text(self.at.clone()),
            Value::Text(self.kind.as_str().to_string()),
            Value::Text(self.subject.clone()),
            Value::Text(self.digest.clone()),
        ])
    }

    /// `NODE:SEQ:HASH`: how a head is logged, and given back to `audit verify --head`.
    pub fn anchor(&self) -> String {
        format!("{}:{}:{}", self.node, self.seq, self.hash)
    }
}

/// Who writes, and whether their writes are chained (`audit.chain`): what each backend's
/// writes carry.
#[derive(Clone, Debug)]
pub(crate) struct Scope {
    pub node: std::sync::Arc<str>,
    pub chain: bool,
}

/// The digest an entry of `kind` for `subject` carries, from the subject's columns as
/// read back inside the writing transaction (a segment vouches for its own words). A
/// subject missing right after it was written is a corrupt database: the write fails.
pub(crate) fn digest_for(
    kind: EntryKind,
    subject: &str,
    values: Option<Vec<Value>>,
) -> Result<String, crate::store::StoreError> {
    match (kind, values) {
        (EntryKind::Segment, _) => Ok(segment_digest(subject)),
        (_, Some(values)) => Ok(digest(&values)),
        (_, None) => Err(crate::store::StoreError::Corrupt {
            id: subject.to_string(),
            what: format!("no {} to chain right after it was written", kind.as_str()),
        }),
    }
}

/// What the first start with the chain vouches for, on a database written without one:
/// the words of the segment that begins it, then each row in order (every request as
/// created, every resolution, every rule event). None when there is nothing.
pub(crate) fn adoption<'a>(
    requests: &'a [String],
    resolved: &'a [String],
    events: &'a [String],
) -> Option<(String, Vec<(EntryKind, &'a str)>)> {
    if requests.is_empty() && resolved.is_empty() && events.is_empty() {
        return None;
    }
    let why = format!(
        "the chain begins: {} requests and {} rule events written before it are vouched for as found",
        requests.len(),
        events.len()
    );
    let rows = requests
        .iter()
        .map(|id| (EntryKind::Request, id.as_str()))
        .chain(
            resolved
                .iter()
                .map(|id| (EntryKind::Resolution, id.as_str())),
        )
        .chain(events.iter().map(|id| (EntryKind::Rule, id.as_str())))
        .collect();
    Some((why, rows))
}

/// `NODE:SEQ:HASH` → (node, seq); the node may itself hold colons.
pub fn parse_anchor(anchor: &str) -> Option<(String, i64)> {
    let mut parts = anchor.rsplitn(3, ':');
    let _hash = parts.next()?;
    let seq = parts.next()?.parse().ok()?;
    let node = parts.next()?;
    Some((node.to_string(), seq))
}

/// A line of `audit export`: an entry and the row it vouches for, its chained columns
/// by name as they read now (`None`: the row is gone).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Exported {
    #[serde(flatten)]
    pub entry: Entry,
    pub record: Option<serde_json::Map<String, serde_json::Value>>,
}

impl Exported {
    /// `entry` with `values`, named by its kind's columns.
    pub fn new(entry: Entry, values: Option<Vec<Value>>) -> Exported {
        let columns = entry.kind.subject().map(|(_, c)| c).unwrap_or_default();
        let record = values.map(|values| {
            columns
                .iter()
                .zip(values)
                .map(|(c, v)| (c.name().to_string(), v.to_json()))
                .collect()
        });
        Exported { entry, record }
    }
}

/// What `verify` found wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Problem {
    /// A row's chained columns no longer make its entry's digest.
    Edited,
    /// An entry's subject is gone.
    Deleted,
    /// An entry is missing (a gap in `seq`), or does not link to the one before.
    Unlinked,
    /// An entry's own hash does not match its fields.
    Forged,
    /// A row no entry vouches for: inserted behind execgate's back (or written while
    /// `audit.chain` was off).
    Unchained,
    /// Two entries vouch for the same row.
    Duplicated,
    /// The head given to `--head` is not in the chain as given.
    HeadMismatch,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub problem: Problem,
    /// The entry it concerns, when one does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<i64>,
    /// The row it concerns (`request ID`, `resolution ID`, `rule event ID`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    pub detail: String,
}

/// A node's chain as `verify` walked it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainSummary {
    pub node: String,
    pub entries: u64,
    /// The last entry: what the daemon logs as its anchor.
    pub head: String,
    /// Where each segment after the first begins, and why.
    pub segments: Vec<SegmentStart>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentStart {
    pub seq: i64,
    pub at: String,
    pub why: String,
}

/// What `verify` says: intact when there are no findings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub intact: bool,
    pub entries: u64,
    /// How many things were found wrong (the list stops at [`MAX_FINDINGS`]).
    pub problems: u64,
    pub chains: Vec<ChainSummary>,
    /// In the chain's order first (the first is the first thing wrong), then the rows no
    /// entry vouches for.
    pub findings: Vec<Finding>,
    /// Findings after the last segment began, per node: what a new segment would be
    /// started for (see [`Verifier::breaks_current_segment`]).
    #[serde(skip)]
    current: Vec<String>,
}

/// The most findings a report lists: a wholesale rewrite would otherwise make a report
/// as large as the database. The count is kept.
pub const MAX_FINDINGS: usize = 1000;

/// Walks chains entry by entry, in `(node, seq)` order, and judges each.
#[derive(Debug, Default)]
pub struct Verifier {
    chains: Vec<ChainSummary>,
    last: Option<Entry>,
    findings: Vec<Finding>,
    found: u64,
    entries: u64,
    /// Nodes whose current segment has a finding.
    current: Vec<String>,
}

impl Verifier {
    pub fn new() -> Verifier {
        Verifier::default()
    }

    /// Judges the next entry, with its subject's columns as they read now (`None`: the
    /// row is gone; a segment has none).
    pub fn entry(&mut self, entry: Entry, subject: Option<Vec<Value>>) {
        self.entries += 1;
        let starts_chain = self.last.as_ref().is_none_or(|l| l.node != entry.node);
        if starts_chain {
            self.chains.push(ChainSummary {
                node: entry.node.clone(),
                entries: 0,
                head: String::new(),
                segments: Vec::new(),
            });
        }
        let expected_seq = match &self.last {
            Some(l) if !starts_chain => l.seq + 1,
            _ => 1,
        };
        if entry.seq != expected_seq {
            let detail = match entry.seq > expected_seq {
                true => format!("entries {expected_seq} to {} are missing", entry.seq - 1),
                false => format!("entry {} is out of order", entry.seq),
            };
            self.find(Problem::Unlinked, &entry, detail);
        }
        if entry.kind == EntryKind::Segment {
            if entry.prev != GENESIS {
                self.find(
                    Problem::Unlinked,
                    &entry,
                    "a segment must begin anew".into(),
                );
            }
            self.current.retain(|n| *n != entry.node);
            if let Some(chain) = self.chains.last_mut() {
                chain.segments.push(SegmentStart {
                    seq: entry.seq,
                    at: entry.at.clone(),
                    why: entry.subject.clone(),
                });
            }
        } else {
            let expected_prev = match &self.last {
                Some(l) if !starts_chain => l.hash.as_str(),
                _ => GENESIS,
            };
            if entry.prev != expected_prev {
                self.find(
                    Problem::Unlinked,
                    &entry,
                    "does not link to the entry before it".into(),
                );
            }
        }
        if entry.hash != entry.expected_hash() {
            self.find(
                Problem::Forged,
                &entry,
                "its hash does not match its fields".into(),
            );
        }
        let digest = match (entry.kind, subject) {
            (EntryKind::Segment, _) => Some(segment_digest(&entry.subject)),
            (_, Some(values)) => Some(digest(&values)),
            (_, None) => None,
        };
        match digest {
            None => self.find(
                Problem::Deleted,
                &entry,
                format!("the {} it vouches for is gone", entry.kind.name()),
            ),
            Some(d) if d != entry.digest => self.find(
                Problem::Edited,
                &entry,
                format!(
                    "the {} was changed after it was committed",
                    entry.kind.name()
                ),
            ),
            Some(_) => {}
        }
        if let Some(chain) = self.chains.last_mut() {
            chain.entries += 1;
            chain.head = entry.anchor();
        }
        self.last = Some(entry);
    }

    /// A row no entry vouches for (`what`: `request ID`, `resolution ID`, `rule event
    /// ID`).
    pub fn unchained(&mut self, what: String) {
        self.push(Finding {
            problem: Problem::Unchained,
            node: None,
            seq: None,
            detail: format!("no entry vouches for {what}"),
            subject: Some(what),
        });
    }

    /// A row more than one entry vouches for.
    pub fn duplicated(&mut self, what: String) {
        self.push(Finding {
            problem: Problem::Duplicated,
            node: None,
            seq: None,
            detail: format!("more than one entry vouches for {what}"),
            subject: Some(what),
        });
    }

    /// The report, with `head` (`NODE:SEQ:HASH`, as logged) checked when given.
    pub fn finish(mut self, head: Option<&str>, head_entry: Option<Entry>) -> Report {
        if let Some(head) = head {
            // `NODE:0:GENESIS` is what an empty chain logs: every chain began so.
            let empty = parse_anchor(head)
                .is_some_and(|(node, seq)| seq == 0 && head == format!("{node}:0:{GENESIS}"));
            let matches = empty || head_entry.as_ref().is_some_and(|e| e.anchor() == head);
            if !matches {
                let detail = match head_entry {
                    Some(e) => format!("entry {}:{} is {}, not {head}", e.node, e.seq, e.anchor()),
                    None => format!("the chain has no entry {head} names"),
                };
                self.push(Finding {
                    problem: Problem::HeadMismatch,
                    node: None,
                    seq: None,
                    subject: None,
                    detail,
                });
            }
        }
        Report {
            intact: self.found == 0,
            entries: self.entries,
            problems: self.found,
            chains: self.chains,
            findings: self.findings,
            current: self.current,
        }
    }

    fn find(&mut self, problem: Problem, entry: &Entry, detail: String) {
        if !self.current.contains(&entry.node) {
            self.current.push(entry.node.clone());
        }
        let subject = match entry.kind {
            EntryKind::Segment => None,
            kind => Some(format!("{} {}", kind.name(), entry.subject)),
        };
        self.push(Finding {
            problem,
            node: Some(entry.node.clone()),
            seq: Some(entry.seq),
            subject,
            detail,
        });
    }

    fn push(&mut self, finding: Finding) {
        self.found += 1;
        if self.findings.len() < MAX_FINDINGS {
            self.findings.push(finding);
        }
    }
}

impl Report {
    /// Whether `node`'s current segment (since its last segment entry, or from the
    /// start) has something wrong in it: the daemon then starts a new one, so that what
    /// it writes from now on verifies on its own.
    pub fn breaks_current_segment(&self, node: &str) -> bool {
        self.current.iter().any(|n| n == node)
    }

    /// The first finding, in words, for a log line.
    pub fn first(&self) -> Option<String> {
        self.findings.first().map(|f| {
            let place = match (&f.node, f.seq) {
                (Some(n), Some(s)) => format!("entry {n}:{s}: "),
                _ => String::new(),
            };
            let subject = f
                .subject
                .as_deref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            format!("{place}{}{subject}", f.detail)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: i64) -> Vec<Entry> {
        let mut prev = GENESIS.to_string();
        (1..=n)
            .map(|seq| {
                let e = Entry::after(
                    "a",
                    seq,
                    format!("t{seq}"),
                    EntryKind::Request,
                    format!("r{seq}"),
                    digest(&[Value::Text(format!("r{seq}"))]),
                    prev.clone(),
                );
                prev = e.hash.clone();
                e
            })
            .collect()
    }

    fn verify(entries: &[Entry]) -> Report {
        let mut v = Verifier::new();
        for e in entries {
            v.entry(e.clone(), Some(vec![Value::Text(e.subject.clone())]));
        }
        v.finish(None, None)
    }

    #[test]
    fn an_intact_chain_verifies() {
        let report = verify(&chain(5));
        assert!(report.intact, "{report:?}");
        assert_eq!(report.entries, 5);
        assert_eq!(report.chains[0].head, chain(5)[4].anchor());
    }

    #[test]
    fn a_missing_entry_is_found_where_it_was() {
        let mut entries = chain(5);
        entries.remove(2);
        let report = verify(&entries);
        assert_eq!(report.findings[0].problem, Problem::Unlinked);
        assert_eq!(report.findings[0].seq, Some(4));
        assert!(report.breaks_current_segment("a"));
    }

    #[test]
    fn an_entry_slipped_in_breaks_the_links() {
        let mut entries = chain(3);
        let forged = Entry::after(
            "a",
            2,
            "t".into(),
            EntryKind::Request,
            "x".into(),
            digest(&[Value::Text("x".into())]),
            entries[0].hash.clone(),
        );
        entries.insert(1, forged);
        let report = verify(&entries);
        assert!(!report.intact);
        assert_eq!(report.findings[0].seq, Some(2));
    }

    #[test]
    fn a_changed_row_and_a_changed_entry_are_told_apart() {
        let entries = chain(3);
        let mut v = Verifier::new();
        v.entry(entries[0].clone(), Some(vec![Value::Text("r1".into())]));
        v.entry(entries[1].clone(), Some(vec![Value::Text("edited".into())]));
        let mut forged = entries[2].clone();
        forged.at = "later".into();
        v.entry(forged, None);
        let report = v.finish(None, None);
        let problems: Vec<Problem> = report.findings.iter().map(|f| f.problem).collect();
        assert_eq!(
            problems,
            [Problem::Edited, Problem::Forged, Problem::Deleted]
        );
    }

    #[test]
    fn a_segment_begins_anew_and_clears_the_current_break() {
        let mut entries = chain(3);
        entries[1].digest = "0".repeat(64);
        entries[1].hash = entries[1].expected_hash();
        let segment = Entry::after(
            "a",
            4,
            "t4".into(),
            EntryKind::Segment,
            "after a break".into(),
            segment_digest("after a break"),
            GENESIS.into(),
        );
        entries.push(segment);
        let report = verify(&entries);
        assert!(!report.intact);
        assert!(!report.breaks_current_segment("a"));
        assert_eq!(report.chains[0].segments[0].seq, 4);
    }

    #[test]
    fn the_head_given_must_be_in_the_chain() {
        let entries = chain(3);
        let mut v = Verifier::new();
        for e in &entries {
            v.entry(e.clone(), Some(vec![Value::Text(e.subject.clone())]));
        }
        let report = v.finish(Some(&entries[2].anchor()), Some(entries[2].clone()));
        assert!(report.intact);
        let mut v = Verifier::new();
        for e in &entries {
            v.entry(e.clone(), Some(vec![Value::Text(e.subject.clone())]));
        }
        let report = v.finish(Some("a:3:beef"), Some(entries[2].clone()));
        assert_eq!(report.findings[0].problem, Problem::HeadMismatch);
    }
}
