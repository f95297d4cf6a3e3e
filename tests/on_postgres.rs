//! The store, the decision pipeline, the approval lifecycle, grants and the event stream
//! again, on PostgreSQL: every store and daemon gets a fresh database on a real server
//! this test process starts (`testkit::postgres`). The binary's name is what puts the
//! testkit on PostgreSQL (`on_postgres`); the suites are the SQLite ones, unchanged, save
//! the few checks of the SQLite file itself, which say so and return.

#[path = "audit.rs"]
mod audit;
#[path = "decisions.rs"]
mod decisions;
#[path = "events.rs"]
mod events;
#[path = "grants.rs"]
mod grants;
#[path = "run_mode.rs"]
mod run_mode;
#[path = "store.rs"]
mod store;
