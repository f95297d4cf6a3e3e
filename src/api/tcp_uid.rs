//! Whose process is on the other end of a loopback TCP connection, as identd would say:
//! the uid that owns the client's socket, from the kernel's socket tables. A TCP socket
//! has no `SO_PEERCRED`, but both ends of a loopback connection live in this host's (this
//! network namespace's) tables, and the client's end records the uid that made it.
//!
//! The table is asked through NETLINK_SOCK_DIAG (the interface `ss` uses) rather than by
//! reading `/proc/net/tcp` and `/proc/net/tcp6`: the kernel looks the one socket up by
//! its four addresses and ports in its hash, where the text files list every TCP socket
//! of the host, TIME_WAIT ones included, so a local user who churns connections could
//! make each accept read and parse an ever longer file; and the answer is one fixed
//! binary record, with no hexadecimal addresses in host byte order to get wrong. It needs
//! no privilege: any process may ask about sockets in its network namespace.

use std::io;
use std::mem::size_of;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `linux/sock_diag.h`: the request and answer type for one address family.
const SOCK_DIAG_BY_FAMILY: u16 = 20;
/// `linux/inet_diag.h`: a cookie that matches any socket.
const NO_COOKIE: u32 = !0;
/// `include/net/tcp_states.h`.
const TIME_WAIT: u8 = 6;
const LISTEN: u8 = 10;

/// `struct inet_diag_sockid`: ports and addresses in network byte order.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct SockId {
    sport: [u8; 2],
    dport: [u8; 2],
    src: [u8; 16],
    dst: [u8; 16],
    interface: u32,
    cookie: [u32; 2],
}

/// `struct nlmsghdr` followed by `struct inet_diag_req_v2`.
#[repr(C)]
struct Request {
    len: u32,
    kind: u16,
    flags: u16,
    seq: u32,
    pid: u32,
    family: u8,
    protocol: u8,
    ext: u8,
    pad: u8,
    states: u32,
    id: SockId,
}

/// Where `struct inet_diag_msg`'s `idiag_uid` lies in an answer: after the 16-byte
/// `nlmsghdr`, four one-byte fields, the 48-byte socket id, and `expires`, `rqueue` and
/// `wqueue` (4 bytes each).
const UID_AT: usize = 16 + 4 + size_of::<SockId>() + 12;

/// The uid owning the client end of the TCP connection that we accepted from `peer` on
/// our `local` address, when that client is on this host (loopback). None otherwise, or
/// when the kernel does not know it (the client has gone already).
pub fn loopback_peer_uid(local: SocketAddr, peer: SocketAddr) -> Option<u32> {
    let (local, peer) = (plain(local), plain(peer));
    if !peer.ip().is_loopback() || !local.ip().is_loopback() {
        return None;
    }
    match ask(local, peer) {
        Ok(uid) => Some(uid),
        Err(e) => {
            tracing::debug!(%peer, error = %e, "cannot tell the uid of a loopback client");
            None
        }
    }
}

/// An IPv4 address that a dual-stack socket reports as `::ffff:a.b.c.d`, as IPv4: the
/// client's socket is an IPv4 one.
fn plain(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), addr.port()),
            None => addr,
        },
        IpAddr::V4(_) => addr,
    }
}

/// Asks for the socket whose own end is `peer` and whose other end is `local`: the
/// client's.
fn ask(local: SocketAddr, peer: SocketAddr) -> io::Result<u32> {
    let mut id = SockId {
        sport: peer.port().to_be_bytes(),
        dport: local.port().to_be_bytes(),
        cookie: [NO_COOKIE, NO_COOKIE],
        ..SockId::default()
    };
    let family = match (peer.ip(), local.ip()) {
        (IpAddr::V4(p), IpAddr::V4(l)) => {
            id.src[..4].copy_from_slice(&p.octets());
            id.dst[..4].copy_from_slice(&l.octets());
            libc::AF_INET
        }
        (IpAddr::V6(p), IpAddr::V6(l)) => {
            id.src = p.octets();
            id.dst = l.octets();
            libc::AF_INET6
        }
        _ => return Err(io::Error::other("the two ends are of different families")),
    };
    let request = Request {
        len: size_of::<Request>() as u32,
        kind: SOCK_DIAG_BY_FAMILY,
        // One socket, looked up exactly: no NLM_F_DUMP.
        flags: libc::NLM_F_REQUEST as u16,
        seq: 1,
        pid: 0,
        family: family as u8,
        protocol: libc::IPPROTO_TCP as u8,
        ext: 0,
        pad: 0,
        states: !0,
        id,
    };
    // SAFETY: a plain socket(2) call; the descriptor is owned (and closed) by `socket`.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            libc::NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by socket(2) and is owned by nothing else.
    let socket = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: a zeroed sockaddr_nl (the kernel: pid 0, no groups) with its family set.
    let mut kernel: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    kernel.nl_family = libc::AF_NETLINK as u16;
    // SAFETY: the request is a repr(C) value of the length given; the address is a valid
    // sockaddr_nl of the length given.
    let sent = unsafe {
        libc::sendto(
            socket.as_raw_fd(),
            (&raw const request).cast(),
            size_of::<Request>(),
            0,
            (&raw const kernel).cast(),
            size_of::<libc::sockaddr_nl>() as u32,
        )
    };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    // The kernel answers at once, from memory; the socket is blocking but the wait is
    // not a wait on anyone else.
    let mut answer = [0u8; 512];
    // SAFETY: `answer` is writable for its whole length.
    let got = unsafe {
        libc::recv(
            socket.as_raw_fd(),
            answer.as_mut_ptr().cast(),
            answer.len(),
            0,
        )
    };
    if got < 0 {
        return Err(io::Error::last_os_error());
    }
    uid_of(&answer[..got as usize])
}

/// The uid in the kernel's answer, or the error it sent instead.
fn uid_of(answer: &[u8]) -> io::Result<u32> {
    let u16_at = |i: usize| {
        answer
            .get(i..i + 2)
            .map(|b| u16::from_ne_bytes([b[0], b[1]]))
    };
    let u32_at = |i: usize| {
        answer
            .get(i..i + 4)
            .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
    };
    match u16_at(4) {
        // A socket in TIME_WAIT is reported with uid 0, and a listening one is what the
        // lookup falls back to when no connection has those ends: neither is the client.
        Some(SOCK_DIAG_BY_FAMILY) => match answer.get(17) {
            Some(&state) if state == TIME_WAIT || state == LISTEN => {
                Err(io::Error::other("the client's end is gone"))
            }
            _ => u32_at(UID_AT).ok_or_else(|| io::Error::other("a short answer from sock_diag")),
        },
        Some(kind) if kind == libc::NLMSG_ERROR as u16 => {
            // `struct nlmsgerr`: a negative errno after the header.
            let errno = u32_at(16).map_or(0, |e| -(e as i32));
            Err(io::Error::from_raw_os_error(errno))
        }
        _ => Err(io::Error::other("an unexpected answer from sock_diag")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Our own connection's client end is ours: the kernel says so by uid.
    #[test]
    fn a_loopback_client_is_known_by_its_uid() {
        for bind in ["127.0.0.1:0", "[::1]:0"] {
            let Ok(listener) = std::net::TcpListener::bind(bind) else {
                continue; // no IPv6 loopback here
            };
            let local = listener.local_addr().unwrap();
            let _client = std::net::TcpStream::connect(local).unwrap();
            let (_server, peer) = listener.accept().unwrap();
            assert_eq!(
                loopback_peer_uid(local, peer),
                Some(crate::sys::effective_uid()),
                "{bind}"
            );
            // A port nobody uses: no such socket.
            let gone = SocketAddr::new(peer.ip(), 1);
            assert_eq!(loopback_peer_uid(local, gone), None);
        }
    }

    #[test]
    fn a_mapped_address_is_asked_as_ipv4() {
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:80".parse().unwrap();
        assert_eq!(plain(mapped), "127.0.0.1:80".parse().unwrap());
        let other: SocketAddr = "10.0.0.1:80".parse().unwrap();
        assert_eq!(loopback_peer_uid(other, other), None);
    }
}
