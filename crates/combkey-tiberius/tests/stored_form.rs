//! Without a server: the values that reach tiberius, the bytes tiberius puts on the wire,
//! SQL Server's order of stored values, and the T-SQL helpers' byte arithmetic.

use std::cmp::Ordering;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use combkey::layouts::{Layout, RtCombLayout};
use combkey::{RandomSource, SeededRandom};
use combkey_tiberius::{Comb, OptionalComb};
use futures_util::io::{AsyncRead, AsyncWrite};
use tiberius::{ColumnData, FromSql, FromSqlOwned, IntoSql, ToSql};

/// SQL Server's `uniqueidentifier` order as docs/design.md states it (display bytes).
fn sqlserver_order(a: &[u8; 16], b: &[u8; 16]) -> Ordering {
    const ORDER: [usize; 16] = [10, 11, 12, 13, 14, 15, 8, 9, 7, 6, 5, 4, 3, 2, 1, 0];
    ORDER.iter().map(|&i| a[i].cmp(&b[i])).find(|o| o.is_ne()).unwrap_or(Ordering::Equal)
}

fn stored(id: Comb) -> [u8; 16] {
    match id.to_sql() {
        ColumnData::Guid(Some(u)) => u.into_bytes(),
        other => panic!("{id} went to tiberius as {other:?}"),
    }
}

#[test]
fn the_value_tiberius_gets() {
    let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse().unwrap();
    assert_eq!(uuid::Uuid::from_bytes(stored(id)).to_string(), "8f39070c-0cdc-c498-7cc3-017f22e279b0");
    assert!(matches!(id.into_sql(), ColumnData::Guid(Some(u)) if u.into_bytes() == stored(id)));
    assert!(matches!(OptionalComb(None).to_sql(), ColumnData::Guid(None)));
    assert!(matches!(OptionalComb::from(id).into_sql(), ColumnData::Guid(Some(_))));
    // And back: the public id, NULL as None.
    let data = ColumnData::Guid(Some(uuid::Uuid::from_bytes(stored(id))));
    assert_eq!(Comb::from_sql(&data).unwrap(), Some(id));
    assert_eq!(Comb::from_sql_owned(data).unwrap(), Some(id));
    assert_eq!(Comb::from_sql(&ColumnData::Guid(None)).unwrap(), None);
}

#[test]
fn other_column_types_are_errors() {
    for data in [
        ColumnData::I32(Some(7)),
        ColumnData::String(Some("017f22e2-79b0-7cc3-98c4-dc0c0c07398f".into())),
        ColumnData::Binary(Some(vec![0u8; 16].into())),
    ] {
        let err = Comb::from_sql(&data).unwrap_err().to_string();
        assert!(err.contains("expected a uniqueidentifier"), "{err}");
        assert!(!err.contains("017f22e2"), "the message does not echo the value: {err}");
    }
}

#[test]
fn sql_server_order_of_stored_values_is_public_order() {
    let r = SeededRandom::new(77);
    let random = || Comb::from(combkey::Comb::from_u128((u128::from(r.next_u64()) << 64) | u128::from(r.next_u64())));
    for _ in 0..100_000 {
        let (a, b) = (random(), random());
        assert_eq!(sqlserver_order(&stored(a), &stored(b)), a.cmp(&b), "{a} vs {b}");
    }
    // Ids from one millisecond (a frozen clock): the counter decides, and SQL Server agrees.
    let g =
        combkey::V7Generator::with_clock(combkey::FixedClock::new(combkey::Timestamp::from_unix_ms(1_700_000_000_000)));
    let ids: Vec<Comb> = (0..20_000).map(|_| Comb::from(g.generate())).collect();
    let mut by_server: Vec<Comb> = ids.iter().rev().copied().collect();
    by_server.sort_by(|a, b| sqlserver_order(&stored(*a), &stored(*b)));
    assert_eq!(by_server, ids);
}

/// The T-SQL of `dbo.combkey_from_rtcomb_sql`, transcribed byte for byte on SQL Server's own
/// (`CAST(id AS BINARY(16))`) bytes; 1-based SUBSTRING positions as in the T-SQL.
fn tsql_from_rtcomb_sql(b: [u8; 16]) -> [u8; 16] {
    let sub = |i: usize| u32::from(b[i - 1]);
    let a = sub(9) & 0x3F;
    let bb = sub(10);
    let c = sub(7);
    let d = sub(8) & 0x0F;
    let byte = |v: u32| u8::try_from(v & 0xff).unwrap();
    let mut out = [0u8; 16];
    out[..6].copy_from_slice(&b[..6]);
    out[6] = byte(0x80 | ((bb % 4) * 16 + c / 16));
    out[7] = byte((c % 16) * 16 + d);
    out[8] = byte(0x70 | (a / 4));
    out[9] = byte((a % 4) * 64 + bb / 4);
    out[10..].copy_from_slice(&b[10..]);
    out
}

/// The T-SQL of `dbo.combkey_v7`, transcribed the same way.
fn tsql_v7(r: [u8; 16], ms: u64, micros_in_ms: u32) -> [u8; 16] {
    let sub = micros_in_ms * 4096 / 1000;
    let mut out = [0u8; 16];
    out[..6].copy_from_slice(&r[..6]);
    out[6] = 0x80 | (r[6] & 0x3F);
    out[7] = r[7];
    out[8] = u8::try_from(0x70 | (sub / 256)).unwrap();
    out[9] = u8::try_from(sub % 256).unwrap();
    out[10..].copy_from_slice(&ms.to_be_bytes()[2..]);
    out
}

#[test]
fn tsql_helpers_compute_the_stored_form() {
    let r = SeededRandom::new(5);
    for _ in 0..10_000 {
        // A .NET RT.Comb Sql id: a v4 GUID with the milliseconds in bytes 10..15.
        let mut base = [0u8; 16];
        r.fill_bytes(&mut base);
        let ms = r.next_u64() >> 16;
        let rt = RtCombLayout::Sql
            .create(combkey::Timestamp::from_unix_ms(i64::try_from(ms).unwrap()), combkey::Comb::from_bytes(base))
            .unwrap();
        let mut rt_bytes = rt.into_bytes();
        rt_bytes[6] = 0x40 | (rt_bytes[6] & 0x0f);
        rt_bytes[8] = 0x80 | (rt_bytes[8] & 0x3f);
        let rt = combkey::Comb::from_bytes(rt_bytes);
        // What the T-SQL function stores equals our stored form of the converted public id.
        let public = Layout::convert(&rt, Layout::RtCombSql, Layout::V7).unwrap();
        let server_bytes = rt.to_sqlserver_bytes_le_of_display();
        assert_eq!(tsql_from_rtcomb_sql(server_bytes), public.to_sqlserver_bytes_le(), "{rt}");

        // combkey_v7(): a v7 public id with the time given, whatever the random bytes.
        let mut random = [0u8; 16];
        r.fill_bytes(&mut random);
        let micros = u32::try_from(r.next_u64() % 1000).unwrap();
        let id = combkey::Comb::from_sqlserver_bytes_le(tsql_v7(random, ms, micros));
        assert_eq!((id.version(), id.is_rfc_variant(), id.unix_ms()), (7, true, Some(ms.cast_signed())));
    }
}

/// SQL Server's own bytes of a `uniqueidentifier` shown as `display`.
trait DisplayToServerBytes {
    fn to_sqlserver_bytes_le_of_display(self) -> [u8; 16];
}

impl DisplayToServerBytes for combkey::Comb {
    fn to_sqlserver_bytes_le_of_display(self) -> [u8; 16] {
        let b = self.into_bytes();
        [b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]
    }
}

// ---- The wire: an in-memory TDS peer that answers the handshake and records what tiberius sends.

#[derive(Default)]
struct Peer {
    written: Vec<u8>,
    messages_seen: usize,
    replies: Vec<Vec<u8>>,
    read_pos: usize,
    waker: Option<Waker>,
}

#[derive(Clone)]
struct FakeServer(Arc<Mutex<Peer>>);

fn packet(ty: u8, payload: &[u8]) -> Vec<u8> {
    let len = u16::try_from(payload.len() + 8).unwrap().to_be_bytes();
    let mut p = vec![ty, 0x01, len[0], len[1], 0, 0, 1, 0];
    p.extend_from_slice(payload);
    p
}

fn prelogin_reply() -> Vec<u8> {
    // VERSION at offset 11 (6 bytes), ENCRYPTION at 17 (1 byte: not supported), terminator.
    let payload = [0x00, 0, 11, 0, 6, 0x01, 0, 17, 0, 1, 0xFF, 16, 0, 0, 0, 0, 0, 0x02];
    packet(0x04, &payload)
}

fn done_token() -> Vec<u8> {
    let mut t = vec![0xFD, 0, 0, 0, 0];
    t.extend_from_slice(&0u64.to_le_bytes());
    t
}

fn login_reply() -> Vec<u8> {
    let name: Vec<u8> = "fake".encode_utf16().flat_map(u16::to_le_bytes).collect();
    let mut body = vec![1u8];
    body.extend_from_slice(&0x7400_0004u32.to_be_bytes());
    body.push(4);
    body.extend_from_slice(&name);
    body.extend_from_slice(&[16, 0, 0, 0]);
    let mut payload = vec![0xAD];
    payload.extend_from_slice(&u16::try_from(body.len()).unwrap().to_le_bytes());
    payload.extend_from_slice(&body);
    payload.extend_from_slice(&done_token());
    packet(0x04, &payload)
}

impl Peer {
    /// Counts the client's complete messages (packets with the end-of-message bit).
    fn count_messages(&mut self) {
        let mut pos = 0;
        let mut messages = 0;
        while pos + 8 <= self.written.len() {
            let len = usize::from(u16::from_be_bytes([self.written[pos + 2], self.written[pos + 3]]));
            if len < 8 || pos + len > self.written.len() {
                break;
            }
            if self.written[pos + 1] & 0x01 == 0x01 {
                messages += 1;
            }
            pos += len;
        }
        self.messages_seen = messages;
    }

    /// The bytes the client may read: one reply per complete message.
    fn available(&self) -> Vec<u8> {
        self.replies.iter().take(self.messages_seen).flatten().copied().collect()
    }
}

impl AsyncRead for FakeServer {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let mut peer = self.0.lock().unwrap();
        let available = peer.available();
        if peer.read_pos >= available.len() {
            peer.waker = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let n = (available.len() - peer.read_pos).min(buf.len());
        buf[..n].copy_from_slice(&available[peer.read_pos..peer.read_pos + n]);
        peer.read_pos += n;
        Poll::Ready(Ok(n))
    }
}

impl AsyncWrite for FakeServer {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let mut peer = self.0.lock().unwrap();
        peer.written.extend_from_slice(buf);
        peer.count_messages();
        if let Some(w) = peer.waker.take() {
            w.wake();
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn bytes_on_the_wire_are_sql_servers_own_bytes_of_the_stored_form() {
    let peer = Arc::new(Mutex::new(Peer {
        replies: vec![prelogin_reply(), login_reply(), packet(0x04, &done_token())],
        ..Peer::default()
    }));
    let mut config = tiberius::Config::new();
    config.encryption(tiberius::EncryptionLevel::NotSupported);
    config.authentication(tiberius::AuthMethod::sql_server("sa", "x"));
    let mut client =
        tiberius::Client::connect(config, FakeServer(Arc::clone(&peer))).await.expect("handshake with the fake peer");
    let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse().unwrap();
    client.execute("INSERT INTO t (id) VALUES (@P1)", &[&id]).await.expect("the fake peer's DONE");

    let written = peer.lock().unwrap().written.clone();
    // A GUIDN parameter: type 0x24, max length 16, length 16, then the 16 bytes.
    let at =
        written.windows(3).rposition(|w| w == [0x24, 0x10, 0x10]).expect("a uniqueidentifier parameter on the wire");
    let wire: [u8; 16] = written[at + 3..at + 19].try_into().unwrap();
    // SQL Server's own bytes of the value it shows as 8F39070C-0CDC-C498-7CC3-017F22E279B0:
    // what CAST(id AS BINARY(16)) returns, milliseconds in bytes 11..16.
    assert_eq!(wire, [0x0c, 0x07, 0x39, 0x8f, 0xdc, 0x0c, 0x98, 0xc4, 0x7c, 0xc3, 0x01, 0x7f, 0x22, 0xe2, 0x79, 0xb0]);
    assert_eq!(wire, id.to_comb().to_sqlserver_bytes_le());
}
