//! The oracle (issue 32): execgate's verdict of "harmless" checked against what the real
//! program does. A command runs in a throwaway [`Sandbox`] (decoy secrets, a FIFO,
//! links out, a git repository with a submodule), as an unprivileged uid, without a
//! network, under `strace` ([`trace::run`]); [`judge`] says where what it did disagrees
//! with "harmless"; [`generate`] draws commands from execgate's own option tables.
//! docs/oracle.md describes it.

mod check;
pub mod generate;
mod judge;
mod sandbox;
pub mod trace;

pub use check::{CI_INSTALLS, Checker, Count, installed};
pub use judge::{Claim, Disagreement, judge};
pub use sandbox::{PLAIN_FILES, RUN_GID, RUN_UID, RUN_USER, SECRETS, Sandbox};
pub use trace::Trace;
