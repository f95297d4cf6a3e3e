//! The owner's side of a Matrix room, for the Matrix tests: a client of the same SDK
//! execgate uses (its own device, its own encryption store), syncing in the background
//! and keeping every message it sees, decrypted, so a test can read the bot's approval
//! messages and their edits and answer as a person would: a command, a reply, a
//! reaction, a reaction taken back.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use matrix_sdk::Client;
use matrix_sdk::config::SyncSettings;
use matrix_sdk::ruma::api::client::room::Visibility;
use matrix_sdk::ruma::api::client::room::create_room::v3::{Request as CreateRoom, RoomPreset};
use matrix_sdk::ruma::events::InitialStateEvent;
use matrix_sdk::ruma::events::reaction::ReactionEventContent;
use matrix_sdk::ruma::events::relation::{Annotation, InReplyTo, Reply};
use matrix_sdk::ruma::events::room::encryption::RoomEncryptionEventContent;
use matrix_sdk::ruma::events::room::message::{
    MessageType, OriginalSyncRoomMessageEvent, Relation, RoomMessageEventContent,
};
use matrix_sdk::ruma::{OwnedEventId, OwnedRoomId, OwnedUserId, RoomId, UserId};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::synapse::Account;

/// A message the owner's client saw in a room.
#[derive(Clone, Debug)]
pub struct Seen {
    pub room: OwnedRoomId,
    pub event_id: OwnedEventId,
    pub sender: OwnedUserId,
    pub body: String,
    pub html: Option<String>,
    /// m.notice (the bot's answers to commands) rather than m.text.
    pub notice: bool,
    /// The message it edits (`m.replace`), with the edit's new text in `body`/`html`.
    pub replaces: Option<OwnedEventId>,
    /// The message it replies to.
    pub in_reply_to: Option<OwnedEventId>,
}

/// The owner, logged in and syncing.
pub struct Owner {
    pub client: Client,
    pub user_id: OwnedUserId,
    seen: Arc<(Mutex<Vec<Seen>>, Notify)>,
    syncing: JoinHandle<()>,
}

impl Owner {
    /// Logs in as `account` with a store in `store`, syncs once (so that its device's keys
    /// are on the homeserver before anyone shares a room key with it), and keeps syncing.
    pub async fn login(homeserver: &str, account: &Account, store: &Path) -> Owner {
        let client = Client::builder()
            .homeserver_url(homeserver)
            .sqlite_store(store, None)
            .build()
            .await
            .expect("the owner's client builds");
        client
            .matrix_auth()
            .login_username(&account.user_id, &account.password)
            .initial_device_display_name("owner's phone")
            .send()
            .await
            .expect("the owner logs in");
        client
            .sync_once(SyncSettings::default().timeout(Duration::ZERO))
            .await
            .expect("the owner's first sync");
        let seen: Arc<(Mutex<Vec<Seen>>, Notify)> = Arc::default();
        let keep = Arc::clone(&seen);
        client.add_event_handler(
            move |ev: OriginalSyncRoomMessageEvent, room: matrix_sdk::Room| {
                let keep = Arc::clone(&keep);
                async move {
                    let (replaces, in_reply_to) = match &ev.content.relates_to {
                        Some(Relation::Replacement(r)) => (Some(r.event_id.clone()), None),
                        Some(Relation::Reply(r)) => (None, Some(r.in_reply_to.event_id.clone())),
                        _ => (None, None),
                    };
                    let content = match (&ev.content.relates_to, &ev.content.msgtype) {
                        (Some(Relation::Replacement(r)), _) => r.new_content.msgtype.clone(),
                        (_, m) => m.clone(),
                    };
                    let (body, html, notice) = match content {
                        MessageType::Text(t) => (t.body, t.formatted.map(|f| f.body), false),
                        MessageType::Notice(n) => (n.body, n.formatted.map(|f| f.body), true),
                        _ => return,
                    };
                    let (list, notify) = &*keep;
                    list.lock().unwrap().push(Seen {
                        room: room.room_id().to_owned(),
                        event_id: ev.event_id.clone(),
                        sender: ev.sender.clone(),
                        body,
                        html,
                        notice,
                        replaces,
                        in_reply_to,
                    });
                    notify.notify_waiters();
                }
            },
        );
        let syncer = client.clone();
        let syncing = tokio::spawn(async move {
            loop {
                let settings = SyncSettings::default().timeout(Duration::from_secs(5));
                if syncer.sync_once(settings).await.is_err() {
                    // The homeserver may be down on purpose: keep trying.
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        });
        Owner {
            user_id: client.user_id().expect("logged in").to_owned(),
            client,
            seen,
            syncing,
        }
    }

    /// Creates a private room (encrypted from its first event when `encrypted`, as
    /// clients do by default) and invites `guests`.
    pub async fn create_room(&self, encrypted: bool, guests: &[&UserId]) -> OwnedRoomId {
        self.make_room(encrypted.then_some(None), guests).await
    }

    /// An encrypted room whose senders must start a new group session every `messages`
    /// messages (clients' default is 100): what a long-lived room meets often.
    pub async fn create_rotating_room(&self, messages: u64, guests: &[&UserId]) -> OwnedRoomId {
        self.make_room(Some(Some(messages)), guests).await
    }

    /// `encryption`: None for a plain room; Some(rotation) for an encrypted one.
    async fn make_room(&self, encryption: Option<Option<u64>>, guests: &[&UserId]) -> OwnedRoomId {
        let mut request = CreateRoom::new();
        request.preset = Some(RoomPreset::PrivateChat);
        request.visibility = Visibility::Private;
        request.invite = guests.iter().map(|u| (*u).to_owned()).collect();
        if let Some(rotation) = encryption {
            let mut content = RoomEncryptionEventContent::with_recommended_defaults();
            if let Some(messages) = rotation {
                content.rotation_period_msgs = Some(messages.try_into().unwrap());
            }
            let event = InitialStateEvent::with_empty_state_key(content);
            request.initial_state = vec![event.to_raw_any()];
        }
        let room = self
            .client
            .create_room(request)
            .await
            .expect("the owner creates a room");
        room.room_id().to_owned()
    }

    /// Invites `user` to `room`.
    pub async fn invite(&self, room: &RoomId, user: &UserId) {
        self.room(room)
            .invite_user_by_id(user)
            .await
            .expect("the owner invites");
    }

    fn room(&self, room: &RoomId) -> matrix_sdk::Room {
        self.client
            .get_room(room)
            .expect("the owner's client knows the room")
    }

    /// Sends a plain text message.
    pub async fn say(&self, room: &RoomId, text: &str) -> OwnedEventId {
        self.send(room, RoomMessageEventContent::text_plain(text))
            .await
    }

    /// Replies to `to` with `text`, as clients do (`m.in_reply_to`, and the quoted
    /// fallback older clients add).
    pub async fn reply(&self, room: &RoomId, to: &OwnedEventId, text: &str) -> OwnedEventId {
        let mut content =
            RoomMessageEventContent::text_plain(format!("> <@bot> an approval message\n\n{text}"));
        content.relates_to = Some(Relation::Reply(Reply::new(InReplyTo::new(to.clone()))));
        self.send(room, content).await
    }

    async fn send(&self, room: &RoomId, content: RoomMessageEventContent) -> OwnedEventId {
        self.room(room)
            .send(content)
            .await
            .expect("the owner's message is sent")
            .response
            .event_id
    }

    /// Reacts to `to` with `key`.
    pub async fn react(&self, room: &RoomId, to: &OwnedEventId, key: &str) -> OwnedEventId {
        let content = ReactionEventContent::new(Annotation::new(to.clone(), key.into()));
        self.room(room)
            .send(content)
            .await
            .expect("the owner's reaction is sent")
            .response
            .event_id
    }

    /// Takes back a reaction (or deletes any message): a redaction.
    pub async fn redact(&self, room: &RoomId, event: &OwnedEventId) {
        self.room(room)
            .redact(event, None, None)
            .await
            .expect("the owner's redaction is sent");
    }

    /// Every message seen so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.0.lock().unwrap().clone()
    }

    /// Waits until a message matching `wanted` has been seen, up to `limit`.
    pub async fn wait_for(
        &self,
        what: &str,
        limit: Duration,
        wanted: impl Fn(&Seen) -> bool,
    ) -> Seen {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.seen.1.notified();
            if let Some(found) = self.seen().into_iter().find(|s| wanted(s)) {
                return found;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                let seen: Vec<String> = self
                    .seen()
                    .iter()
                    .map(|s| format!("{} {}: {:?}", s.sender, s.event_id, s.body))
                    .collect();
                panic!(
                    "the owner did not see {what} within {limit:?}; seen:\n{}",
                    seen.join("\n")
                );
            }
        }
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.syncing.abort();
    }
}
