//! (being written)

use super::Profile;

pub const PROFILES: &[&Profile] = &[];
