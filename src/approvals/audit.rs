//! The audit trail's face (docs/audit.md): what `execgate audit verify` and `export` read,
//! and what the daemon does with the chain at start and on reload: log the head as an
//! anchor kept elsewhere, and check the whole chain in the background, starting a new
//! segment when the current one is broken. (Rows older than the chain are vouched for
//! by the store before the daemon writes anything, `Store::audit_adopt`.)

use std::sync::Arc;

use super::Approvals;
use crate::store::StoreError;
use crate::store::audit::{Exported, Report};

/// The most entries one page of `export` holds.
pub const EXPORT_PAGE: u32 = 5_000;

impl Approvals {
    /// Walks every chain; `head` (`NODE:SEQ:HASH`, as logged) is checked when given.
    pub async fn audit_verify(&self, head: Option<String>) -> Result<Report, StoreError> {
        self.store.audit_verify(head).await
    }

    /// A page of `export`: entries after `(node, seq)`, in chain order.
    pub async fn audit_entries(
        &self,
        after: Option<(String, i64)>,
        limit: u32,
    ) -> Result<Vec<Exported>, StoreError> {
        self.store
            .audit_entries(after, limit.min(EXPORT_PAGE))
            .await
    }

    /// Logs this node's chain head: an anchor to keep with the logs, elsewhere, so that
    /// whoever rewrites the chain must rewrite those too (`audit verify --head`).
    pub async fn log_audit_head(&self) {
        match self.store.audit_head().await {
            Ok(Some(head)) => tracing::info!(
                anchor = %head.anchor(),
                "audit chain head (check it later with `execgate audit verify --head ANCHOR`)"
            ),
            Ok(None) => tracing::info!(
                anchor = %format!("{}:0:{}", self.store.node(), crate::store::audit::GENESIS),
                "audit chain head (empty; check it later with `execgate audit verify --head ANCHOR`)"
            ),
            Err(e) => tracing::error!(error = %e, "cannot read the audit chain's head"),
        }
    }

    /// Checks the whole chain in the background and logs what it finds; a broken current
    /// segment is closed by a new one, so that what is written from now on verifies on
    /// its own. The daemon never stops for a broken chain: `audit verify` reports it.
    pub fn check_audit_in_background(self: &Arc<Self>) {
        let approvals = Arc::clone(self);
        tokio::spawn(async move {
            let report = match approvals.store.audit_verify(None).await {
                Ok(report) => report,
                Err(e) => {
                    tracing::error!(error = %e, "cannot check the audit chain");
                    return;
                }
            };
            if report.intact {
                tracing::info!(entries = report.entries, "the audit chain is intact");
                return;
            }
            let first = report.first().unwrap_or_default();
            tracing::error!(
                problems = report.problems,
                first = %first,
                "the audit chain is BROKEN: rows or entries were changed, removed or added behind execgate's back (`execgate audit verify` lists them)"
            );
            if report.breaks_current_segment(approvals.store.node()) {
                let why = format!("a new segment after a break: {first}");
                match approvals.store.audit_segment(&why).await {
                    Ok(()) => {
                        tracing::warn!("the audit chain goes on in a new segment, marked as such");
                        approvals.log_audit_head().await;
                    }
                    Err(e) => tracing::error!(error = %e, "cannot begin a new audit segment"),
                }
            }
        });
    }
}
