//! The owner's answers, the same in every chat once the chat has checked who gave them:
//! a command of the chat grammar (by id, or as a reply to one of our messages), a
//! reaction on our message, a button under it. A digest message shows several requests,
//! so only an answer that names one of them (a button, a command with its id) answers
//! there.

use std::future::Future;
use std::sync::Arc;

use super::{Service, Trouble};
use crate::model::{Answer, Via};
use crate::shutdown::Shutdown;
use crate::transport::grammar::{self, ChatCommand};
use crate::transport::health::Backoff;
use crate::transport::posted::Target;
use crate::transport::{self, listing, named_request};

/// Hands an answer to `handle` now, unless it answers (`to`) one of our messages that
/// may not be known yet (a post is in flight, and the chat may show it before the post
/// has told us its id): then it is held until those posts land (at most the chat's
/// `HOLD_LIMIT`), aside so that reading goes on, and handled in full, owner checks and
/// all. Shutdown drops what is held: it cancels every request, nothing is left to answer.
pub async fn when_known<S, F, Fut>(
    svc: &Arc<S>,
    to: Option<S::Message>,
    shutdown: &Shutdown,
    handle: F,
) where
    S: Service + 'static,
    F: FnOnce(Arc<S>) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    let unsettled = to.and_then(|message| {
        let pending = svc.posted().unsettled(&message)?;
        Some((message, pending))
    });
    let Some((message, pending)) = unsettled else {
        return handle(Arc::clone(svc)).await;
    };
    tracing::debug!(
        ?message,
        "holding an answer to a {} message not known yet, until the posts in flight land",
        S::NAME
    );
    match svc.posted().hold() {
        Some(permit) => {
            let svc = Arc::clone(svc);
            let mut shutdown = shutdown.clone();
            tokio::spawn(async move {
                tokio::select! {
                    _ = shutdown.recv() => return,
                    _ = svc.posted().settle(&message, pending, S::HOLD_LIMIT) => {}
                }
                handle(Arc::clone(&svc)).await;
                drop(permit);
            });
        }
        // Too many held already: this one holds reading too, but is not lost.
        None => {
            svc.posted().settle(&message, pending, S::HOLD_LIMIT).await;
            handle(Arc::clone(svc)).await;
        }
    }
}

/// Who answered, and how, as a command or reaction is heard.
pub struct Heard<'a, S: Service> {
    /// `decided_by`: `telegram:ID (@name)`, `matrix:@user:server`.
    pub by: &'a str,
    pub via: Via,
    /// The message of ours the owner replied to, if any.
    pub replied: Option<&'a S::Message>,
    /// Whether the owner replied to any message.
    pub replying: bool,
}

/// The requests a message of ours shows.
#[derive(Debug, PartialEq, Eq)]
pub enum Shown {
    /// None: not an approval message (or its request is long gone).
    Nothing,
    One(Target),
    /// A digest's requests.
    Several(Vec<Target>),
}

/// An owner's message to the chat (already known to be the owner's, and new): a command
/// of the chat grammar answered in a reply to `message`; a resolving one names its
/// request by id or by `replied` (the message of ours it replies to, if any;
/// `replying`: whether it replies to any). Other talk gets `talk` as its reply, if the
/// chat gives one (in a private chat nothing else can be meant), else nothing.
pub async fn command<S: Service>(
    svc: &S,
    message: &S::Message,
    heard: Heard<'_, S>,
    text: &str,
    talk: Option<&str>,
) {
    let command = match grammar::parse(text) {
        Some(Ok(c)) => c,
        Some(Err(e)) => return reply(svc, message, &e.to_string()).await,
        None => {
            if let Some(hint) = talk {
                reply(svc, message, hint).await;
            }
            return;
        }
    };
    let text = match command {
        ChatCommand::Resolve { short_id, answer } => {
            let found = match heard.replied {
                Some(original) => match request_at(svc, original).await {
                    Ok(Shown::Nothing) => None,
                    Ok(Shown::One(target)) => Some(target),
                    Ok(Shown::Several(targets)) => match in_digest(short_id.as_deref(), &targets) {
                        Ok(target) => Some(target),
                        Err(text) => return reply(svc, message, &text).await,
                    },
                    Err(text) => return reply(svc, message, &text).await,
                },
                None => None,
            };
            match named_request(short_id, found, heard.replying) {
                Ok((target, label)) => {
                    transport::answer(
                        svc.approvals(),
                        &target,
                        &label,
                        answer,
                        heard.via,
                        heard.by,
                    )
                    .await
                    .text
                }
                Err(text) => text,
            }
        }
        reading => listing(svc.approvals(), &reading, svc.reactions())
            .await
            .unwrap_or_default(),
    };
    reply(svc, message, &text).await;
}

/// The request of a digest that a reply to it names by `short_id`. Err: what to tell the
/// owner; nothing was changed.
fn in_digest(short_id: Option<&str>, targets: &[Target]) -> Result<Target, String> {
    let ids = || {
        targets
            .iter()
            .map(|t| t.short_id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match short_id {
        Some(id) => targets
            .iter()
            .find(|t| t.short_id.eq_ignore_ascii_case(id))
            .cloned()
            .ok_or_else(|| {
                format!(
                    "You replied to a message showing {} but named {id}; nothing was changed.",
                    ids()
                )
            }),
        None => Err(format!(
            "That message shows several requests ({}): name one, e.g. /approve {}",
            ids(),
            targets.first().map_or("a1b2", |t| t.short_id.as_str())
        )),
    }
}

/// The owner's answering reaction (`decision`) on `message`: the request it shows is
/// answered; a reaction on any other message is just a reaction. Success shows as the
/// message's edit; anything else is said in a reply.
pub async fn react<S: Service>(
    svc: &S,
    message: &S::Message,
    decision: impl Into<Answer>,
    by: &str,
    via: Via,
) {
    let target = match request_at(svc, message).await {
        Ok(Shown::Nothing) => return,
        Ok(Shown::One(target)) => target,
        Ok(Shown::Several(_)) => {
            let text = "That message shows several requests, and a reaction cannot say which \
                        it means; nothing was changed. Use the buttons in a request's row, or \
                        /approve ID.";
            return reply(svc, message, text).await;
        }
        Err(text) => return reply(svc, message, &text).await,
    };
    let result = transport::answer(
        svc.approvals(),
        &target.id,
        &target.short_id,
        decision,
        via,
        by,
    )
    .await;
    if !result.resolved {
        reply(svc, message, &result.text).await;
    }
}

/// The owner's button on `message`, which says it answers request `claimed` with
/// `decision`: carried out only when `claimed` is a request that very message shows (a
/// button's data is whatever the client sends). The text is shown to whoever pressed
/// it.
pub async fn press<S: Service>(
    svc: &S,
    message: &S::Message,
    claimed: &str,
    decision: impl Into<Answer>,
    by: &str,
    via: Via,
) -> String {
    let shown = match request_at(svc, message).await {
        Ok(Shown::Nothing) => Vec::new(),
        Ok(Shown::One(target)) => vec![target],
        Ok(Shown::Several(targets)) => targets,
        Err(text) => return text,
    };
    if shown.is_empty() {
        let short = claimed.get(..8).unwrap_or(claimed);
        return format!("approval {short} not found or already resolved");
    }
    let Some(target) = shown.into_iter().find(|t| t.id == claimed) else {
        tracing::warn!("a button's data names another request than its message shows; ignored");
        return "This button does not belong to this request; nothing was changed.".into();
    };
    transport::answer(
        svc.approvals(),
        &target.id,
        &target.short_id,
        decision,
        via,
        by,
    )
    .await
    .text
}

/// Sends `text` as a reply to `to`. Best effort: three tries, then it is logged and
/// dropped; an answer to a command never holds up a decision.
pub async fn reply<S: Service>(svc: &S, to: &S::Message, text: &str) {
    let mut backoff = Backoff::new();
    let attempt = svc.attempt();
    for tries in 1..=3 {
        let failure = match svc.reply(to, text, &attempt).await {
            Ok(()) => {
                svc.health().succeeded();
                return;
            }
            Err(failure) => failure,
        };
        if tries == 3 || failure.kind == Trouble::Gone {
            tracing::warn!(error = %failure.error, "could not send a {} reply; dropping it", S::NAME);
            return;
        }
        svc.health().failed(failure.what, &failure.error);
        backoff.wait(failure.told, svc.health()).await;
    }
}

/// The requests `message` shows in this chat: known at once while their deliveries run,
/// else from the store (a digest's requests are stored as `CHAT:MESSAGE#ID`). Err: a
/// reply saying the lookup failed.
pub async fn request_at<S: Service>(svc: &S, message: &S::Message) -> Result<Shown, String> {
    let posted = svc.posted();
    if let Some(target) = posted.get(message) {
        return Ok(Shown::One(target));
    }
    let external = format!("{}{}", svc.prefix(), svc.name_of(message));
    let failed = |e: crate::store::StoreError| {
        tracing::error!(error = %e, "cannot look up a request by its message");
        "could not look up that request (storage error); nothing was changed".to_string()
    };
    // A digest whose other requests have ended still shows them all.
    let mut digest: Vec<Target> = svc
        .approvals()
        .find_by_message_prefix(&format!("{external}#"))
        .await
        .map_err(failed)?
        .iter()
        .map(Target::from)
        .collect();
    if posted.is_digest(message) {
        // Its requests whose ids the store has not taken yet.
        for target in posted.all(message) {
            if !digest.contains(&target) {
                digest.push(target);
            }
        }
    }
    if !digest.is_empty() {
        return Ok(Shown::Several(digest));
    }
    let found = svc
        .approvals()
        .find_by_message(&external)
        .await
        .map_err(failed)?;
    Ok(found
        .as_ref()
        .map_or(Shown::Nothing, |r| Shown::One(Target::from(r))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(short: &str) -> Target {
        Target {
            id: format!("{short}-full"),
            short_id: short.into(),
        }
    }

    #[test]
    fn a_reply_to_a_digest_must_name_one_of_its_requests() {
        let shown = [target("a1b2"), target("c3d4")];
        assert_eq!(in_digest(Some("C3D4"), &shown), Ok(target("c3d4")));
        let other = in_digest(Some("ffff"), &shown).unwrap_err();
        assert!(
            other.contains("showing a1b2, c3d4 but named ffff"),
            "{other}"
        );
        let none = in_digest(None, &shown).unwrap_err();
        assert!(none.contains("name one, e.g. /approve a1b2"), "{none}");
    }
}
