//! The decision pipeline, the approval lifecycle, grants and the event stream again, with
//! every daemon on PostgreSQL: a fresh database per daemon on a real server this test
//! process starts (`testkit::postgres`). The binary's name is what puts the testkit on
//! PostgreSQL (`on_postgres`); the suites themselves are the SQLite ones, unchanged.

#[path = "decisions.rs"]
mod decisions;
#[path = "events.rs"]
mod events;
#[path = "grants.rs"]
mod grants;
#[path = "run_mode.rs"]
mod run_mode;
