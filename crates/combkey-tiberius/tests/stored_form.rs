//! Without a server: the values that reach tiberius, the bytes tiberius puts on the wire,
//! SQL Server's order of stored values (from .NET's `SqlGuid`, run in Mono: an implementation
//! that is not ours), and the T-SQL helpers' byte arithmetic.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use combkey::layouts::{Layout, RtCombLayout};
use combkey::{RandomSource, SeededRandom};
use combkey_tiberius::{
    Comb, CombBinary, CombPublic, CombText, OptionalComb, OptionalCombBinary, OptionalCombPublic, OptionalCombText,
};
use futures_util::io::{AsyncRead, AsyncWrite};
use tiberius::{ColumnData, FromSql, FromSqlOwned, IntoSql, ToSql};

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
fn binary16_and_text_columns_read_other_types_are_errors() {
    let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse().unwrap();
    // binary(16) holds the public bytes (as on MySQL and SQLite); nvarchar(36) UUID text.
    let binary = ColumnData::Binary(Some(id.to_comb().as_bytes().to_vec().into()));
    assert_eq!(Comb::from_sql(&binary).unwrap(), Some(id));
    let text = ColumnData::String(Some("017F22E2-79B0-7CC3-98C4-DC0C0C07398F".into()));
    assert_eq!(Comb::from_sql_owned(text).unwrap(), Some(id));
    assert_eq!(Comb::from_sql(&ColumnData::Binary(None)).unwrap(), None);
    assert_eq!(Comb::from_sql(&ColumnData::String(None)).unwrap(), None);
    for (data, message) in [
        (ColumnData::I32(Some(7)), "cannot read a I32 column value as a combkey id"),
        (ColumnData::Binary(Some(vec![0u8; 15].into())), "expected 16 bytes, found 15"),
        (ColumnData::String(Some("garbage".into())), "invalid UUID length"),
    ] {
        let err = Comb::from_sql(&data).unwrap_err().to_string();
        assert!(err.contains(message), "{err}");
    }
    // A wrong type's message does not echo the value.
    let err = Comb::from_sql(&ColumnData::I64(Some(1_645_557_742))).unwrap_err().to_string();
    assert!(!err.contains("1645557742"), "{err}");
}

/// The stored value tiberius is given for `id`, as SQL Server shows it.
fn shown(id: Comb) -> String {
    uuid::Uuid::from_bytes(stored(id)).hyphenated().to_string().to_uppercase()
}

#[test]
fn the_oracle_agrees_with_sql_server_as_observed() {
    // Lambert's "Custom UUID as primary key": SQL Server returned these in this order from
    // ORDER BY, the first although 0x0001ABD9 > 0x0001A3DB; and NEWSEQUENTIALID() values in
    // ORDER BY order.
    let observed = [
        ["0001ABD9-3F62-E111-B305-0FCE8C655371", "0001A3DB-3F62-E111-B305-0FCE8C655371"].as_slice(),
        &[
            "B8586BD7-2062-E111-B36C-CC52AFC9F2ED",
            "B9586BD7-2062-E111-B36C-CC52AFC9F2ED",
            "BA586BD7-2062-E111-B36C-CC52AFC9F2ED",
            "BB586BD7-2062-E111-B36C-CC52AFC9F2ED",
        ],
        // RT.Comb's README: the last six bytes are compared first.
        &["FFFFFFFF-FFFF-FFFF-FFFF-000000000001", "00000000-0000-0000-0000-000000000002"],
    ];
    for order in observed {
        let reversed: Vec<String> = order.iter().rev().map(|s| s.to_string()).collect();
        assert_eq!(combkey_testutil::sqlserver_sort(&reversed), order, "SqlGuid sorts as SQL Server did");
    }
}

#[test]
fn sql_server_order_of_stored_values_is_public_order() {
    let r = SeededRandom::new(77);
    let random = || Comb::from(combkey::Comb::from_u128((u128::from(r.next_u64()) << 64) | u128::from(r.next_u64())));
    // Random ids over the whole space, and ids from one millisecond (a frozen clock), where
    // the counter decides the order.
    let g =
        combkey::V7Generator::with_clock(combkey::FixedClock::new(combkey::Timestamp::from_unix_ms(1_700_000_000_000)));
    let mut ids: Vec<Comb> = (0..30_000).map(|_| random()).collect();
    ids.extend((0..20_000).map(|_| Comb::from(g.generate())));
    // Handed to SqlGuid in another order than the public one.
    let mut input = ids.clone();
    input.sort_by_key(|id| std::cmp::Reverse(stored(*id)));
    let by_server = combkey_testutil::sqlserver_sort(&input.iter().map(|id| shown(*id)).collect::<Vec<_>>());
    let back: Vec<Comb> = by_server.iter().map(|s| Comb::from_stored_uuid(s.parse().unwrap())).collect();
    ids.sort();
    assert!(back == ids, "SQL Server's order of the stored values is the public order");
    // Without the permutation (the public bytes stored as they are) SQL Server's order is
    // not the public order: the check above is not vacuous.
    let unpermuted: Vec<String> = ids.iter().map(|id| id.to_string().to_uppercase()).collect();
    let by_server = combkey_testutil::sqlserver_sort(&unpermuted);
    assert_ne!(by_server, unpermuted, "public bytes stored as they are do not sort in public order");
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

/// `SUBSTRING(@b, start, len) + ...` in T-SQL: the parts' bytes, concatenated (1-based).
fn substrings(b: [u8; 16], parts: &[(usize, usize)]) -> [u8; 16] {
    let bytes: Vec<u8> = parts.iter().flat_map(|&(start, len)| b[start - 1..start - 1 + len].iter().copied()).collect();
    bytes.try_into().expect("the parts make 16 bytes")
}

/// `dbo.combkey_stored` and `dbo.combkey_public`, transcribed from their SUBSTRING lists.
fn tsql_stored(public_le: [u8; 16]) -> [u8; 16] {
    substrings(public_le, &[(13, 4), (11, 2), (9, 2), (8, 1), (7, 1), (4, 1), (3, 1), (2, 1), (1, 1), (6, 1), (5, 1)])
}

fn tsql_public(stored_le: [u8; 16]) -> [u8; 16] {
    substrings(
        stored_le,
        &[(14, 1), (13, 1), (12, 1), (11, 1), (16, 1), (15, 1), (10, 1), (9, 1), (7, 2), (5, 2), (1, 4)],
    )
}

/// `dbo.combkey_from_newsequentialid`, transcribed: BIGINT and INT arithmetic on the v1 bytes
/// (SQL Server's own bytes of a NEWSEQUENTIALID value; T-SQL's `/` and `%` truncate, as
/// Rust's do), then the SUBSTRING list.
fn tsql_from_newsequentialid(b: [u8; 16]) -> [u8; 16] {
    let big = |start: usize, len: usize| -> i64 {
        b[start - 1..start - 1 + len].iter().fold(0i64, |acc, &x| acc * 256 + i64::from(x))
    };
    let t = (big(7, 2) & 4095) * 281_474_976_710_656 + big(5, 2) * 4_294_967_296 + big(1, 4);
    let u = t - 122_192_928_000_000_000;
    let (ms, sub) = (u / 10_000, u % 10_000);
    let cs = big(9, 2) & 16383;
    // CAST(n AS BINARY(k)): the last k bytes of its big-endian bytes.
    let mut q = [0u8; 16];
    q[..6].copy_from_slice(&ms.to_be_bytes()[2..]);
    q[6..8].copy_from_slice(&(28672 | (sub / 4)).to_be_bytes()[6..]);
    q[8..10].copy_from_slice(&(32768 | ((sub % 4) * 4096) | (cs / 4)).to_be_bytes()[6..]);
    q[10] = (((cs % 4) * 64) | (big(11, 1) / 4)).to_be_bytes()[7];
    q[11..].copy_from_slice(&b[11..]);
    substrings(q, &[(13, 4), (11, 2), (9, 2), (7, 2), (1, 6)])
}

/// NEWSEQUENTIALID values (v1 ids: SQL Server's own bytes of one are the v1 bytes), converted
/// by the T-SQL, are combkey's stored form of their v7 id (the same millisecond, what
/// `KeyMigration` `newsequentialid -> v7` gives); in SQL Server's order (SqlGuid) the
/// converted values keep creation order, and ids made later sort after them.
#[test]
fn tsql_newsequentialid_to_v7_stored_form() {
    let clock = Arc::new(combkey::FixedClock::new(combkey::Timestamp::from_unix_ms(1_700_000_000_000)));
    let g = combkey::layouts::V1Generator::with_clock_and_random(Arc::clone(&clock), SeededRandom::new(12));
    let mut made = Vec::new();
    for i in 0..3000u64 {
        clock.advance(std::time::Duration::from_micros(1 + (i * 7919) % 5000));
        let v1 = g.generate();
        let nsid = Layout::convert(&v1, Layout::V1, Layout::NewSequentialId).unwrap();
        // SQL Server's own bytes of the value it shows as `nsid`.
        let own = nsid.to_sqlserver_bytes_le_of_display();
        assert_eq!(own, v1.into_bytes(), "NEWSEQUENTIALID's own bytes are the v1 id's");
        let v7 =
            combkey::layouts::KeyMigration::new(Layout::NewSequentialId, Layout::V7).unwrap().convert(&nsid).unwrap();
        assert_eq!(v7.timestamp(), Layout::NewSequentialId.timestamp(&nsid).unwrap());
        assert_eq!(tsql_from_newsequentialid(own), v7.to_sqlserver_bytes_le(), "{nsid}");
        made.push(v7);
    }
    made.push(combkey::Comb::new());
    let shown: Vec<String> =
        made.iter().rev().map(|v7| Comb::from(*v7).to_stored_uuid().to_string().to_uppercase()).collect();
    let by_server = combkey_testutil::sqlserver_sort(&shown);
    let back: Vec<combkey::Comb> =
        by_server.iter().map(|s| Comb::from_stored_uuid(s.parse().unwrap()).to_comb()).collect();
    assert_eq!(back, made, "SQL Server's order of the converted values is creation order, a new id last");
    let text = combkey::Backend::SqlServer.install_functions();
    assert!(text.contains("+ CAST(SUBSTRING(@b, 5, 2) AS BIGINT) * 4294967296"), "{text}");
    assert!(text.contains("+ CAST(32768 | ((@sub % 4) * 4096) | (@cs / 4) AS BINARY(2))"), "{text}");
    assert!(text.contains("CAST(((@cs % 4) * 64) | (CAST(SUBSTRING(@b, 11, 1) AS INT) / 4) AS BINARY(1))"), "{text}");
    let script = combkey::sql::sqlserver_convert_table("dbo.t", "id", combkey::sql::ExistingKeys::NewSequentialId, &[]);
    assert!(script.contains("SELECT [id] AS old_key, dbo.combkey_from_newsequentialid([id]) AS new_key INTO dbo.[combkey_keymap_t] FROM dbo.t;"), "{script}");
    assert!(text.contains(
        "SUBSTRING(@q, 13, 4) + SUBSTRING(@q, 11, 2) + SUBSTRING(@q, 9, 2) + SUBSTRING(@q, 7, 2) + SUBSTRING(@q, 1, 6)"
    ));
}

/// Existing public ids (v7 written as `uuid::Uuid` would), converted by `dbo.combkey_stored`
/// as `convert_table` runs it, keep their public ids and sort in creation order in SQL Server.
#[test]
fn converted_public_ids_sort_in_creation_order() {
    let made: Vec<combkey::Comb> = (0..3000).map(|_| combkey::Comb::new()).collect();
    let converted: Vec<[u8; 16]> = made.iter().map(|id| tsql_stored(id.to_sqlserver_bytes_le_of_display())).collect();
    for (id, own) in made.iter().zip(&converted) {
        assert_eq!(*own, id.to_sqlserver_bytes_le());
    }
    let shown: Vec<String> =
        made.iter().rev().map(|id| Comb::from(*id).to_stored_uuid().to_string().to_uppercase()).collect();
    let back: Vec<combkey::Comb> = combkey_testutil::sqlserver_sort(&shown)
        .iter()
        .map(|s| Comb::from_stored_uuid(s.parse().unwrap()).to_comb())
        .collect();
    assert_eq!(back, made);
    let sql = combkey::sql::sqlserver_convert_table("dbo.t", "id", combkey::sql::ExistingKeys::Public, &[]);
    assert!(sql.contains("UPDATE dbo.t SET [id] = dbo.combkey_stored([id]);"), "{sql}");
}

#[test]
fn tsql_conversions_between_public_and_stored() {
    let r = SeededRandom::new(9);
    for _ in 0..10_000 {
        let id = combkey::Comb::from_u128((u128::from(r.next_u64()) << 64) | u128::from(r.next_u64()));
        let public_le = id.to_sqlserver_bytes_le_of_display();
        assert_eq!(tsql_stored(public_le), id.to_sqlserver_bytes_le(), "dbo.combkey_stored({id})");
        assert_eq!(tsql_public(id.to_sqlserver_bytes_le()), public_le, "dbo.combkey_public of {id}'s stored form");
    }
    // The installed text holds exactly these SUBSTRING lists.
    let text = combkey::Backend::SqlServer.install_functions();
    assert!(text.contains("SUBSTRING(@b, 13, 4) + SUBSTRING(@b, 11, 2) + SUBSTRING(@b, 9, 2)"), "{text}");
    assert!(text.contains("+ SUBSTRING(@s, 7, 2) + SUBSTRING(@s, 5, 2) + SUBSTRING(@s, 1, 4)"), "{text}");
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

/// A tiberius client logged in to the fake peer, which then answers with `replies`, one
/// per message.
async fn fake_client(answers: Vec<Vec<u8>>) -> (Arc<Mutex<Peer>>, tiberius::Client<FakeServer>) {
    let mut replies = vec![prelogin_reply(), login_reply()];
    replies.extend(answers);
    let peer = Arc::new(Mutex::new(Peer { replies, ..Peer::default() }));
    let mut config = tiberius::Config::new();
    config.encryption(tiberius::EncryptionLevel::NotSupported);
    config.authentication(tiberius::AuthMethod::sql_server("sa", "x"));
    let client =
        tiberius::Client::connect(config, FakeServer(Arc::clone(&peer))).await.expect("handshake with the fake peer");
    (peer, client)
}

#[tokio::test]
async fn bytes_on_the_wire_are_sql_servers_own_bytes_of_the_stored_form() {
    let (peer, mut client) = fake_client(vec![packet(0x04, &done_token())]).await;
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

/// The ids in the wire bytes of a parameter of GUIDN type (0x24, length 16) in `written`,
/// last first.
fn guid_params(written: &[u8]) -> Vec<[u8; 16]> {
    let mut out = Vec::new();
    let mut end = written.len();
    while let Some(at) = written[..end].windows(3).rposition(|w| w == [0x24, 0x10, 0x10]) {
        out.push(written[at + 3..at + 19].try_into().unwrap());
        end = at;
    }
    out
}

/// Existing `uniqueidentifier` ids (written by NEWID(), .NET or `uuid::Uuid`): `CombPublic`
/// sends exactly what `uuid::Uuid` sends through tiberius (tiberius' own conversion is the
/// oracle) and reads the same id back, where `Comb` would read another id, the hazard the
/// crate docs describe.
#[tokio::test]
async fn existing_uniqueidentifier_ids_read_and_write_unchanged() {
    let known: uuid::Uuid = "6f9619ff-8b86-d011-b42d-00c04fc964ff".parse().unwrap();
    let public = CombPublic::from(known);
    assert_eq!(public.to_sql(), known.to_sql());
    assert_eq!(public.into_sql(), known.into_sql());
    let as_stored = tiberius::ColumnData::Guid(Some(known));
    assert_eq!(<CombPublic as tiberius::FromSql>::from_sql(&as_stored).unwrap(), Some(public));
    assert_eq!(<CombPublic as tiberius::FromSqlOwned>::from_sql_owned(as_stored.clone()).unwrap(), Some(public));
    let misread = <Comb as tiberius::FromSql>::from_sql(&as_stored).unwrap().unwrap();
    assert_eq!(misread.to_string(), "00c04fc9-64ff-b42d-11d0-868bff19966f", "Comb reads its own stored form");
    assert_eq!(OptionalCombPublic(None).to_sql(), tiberius::ColumnData::Guid(None));

    // On the wire: the same 16 bytes as uuid::Uuid's parameter.
    let (peer, mut client) = fake_client(vec![packet(0x04, &done_token()); 2]).await;
    client.execute("INSERT INTO t (id) VALUES (@P1)", &[&known]).await.expect("DONE");
    client.execute("INSERT INTO t (id) VALUES (@P1)", &[&public]).await.expect("DONE");
    let params = guid_params(&peer.lock().unwrap().written);
    assert_eq!(params.len(), 2);
    assert_eq!(params[0], params[1], "CombPublic's bytes are uuid::Uuid's");
    // tiberius sends .NET's Guid byte order: the first three groups little-endian.
    assert_eq!(params[0][..4], [0xff, 0x19, 0x96, 0x6f]);
}

/// New v7 ids kept as they are in a `uniqueidentifier` do not sort in creation order in SQL
/// Server (SqlGuid, run in Mono): what the docs tell users of `CombPublic`.
#[test]
fn public_ids_in_a_uniqueidentifier_are_not_in_creation_order() {
    let ids: Vec<CombPublic> = (0..2000).map(|_| CombPublic::new()).collect();
    let shown: Vec<String> = ids.iter().map(|id| id.to_string().to_uppercase()).collect();
    let by_server = combkey_testutil::sqlserver_sort(&shown);
    assert_ne!(by_server, shown);
}

/// `binary(16)` and `nvarchar(36)`: written as the public bytes and as the canonical text,
/// read back as the same id; `NULL` through the optional forms.
#[test]
fn binary16_and_text_writers_round_trip() {
    let id: combkey::Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse().unwrap();
    let bin = CombBinary::from(id);
    match bin.into_sql() {
        ColumnData::Binary(Some(b)) => assert_eq!(b[..], id.as_bytes()[..]),
        other => panic!("{other:?}"),
    }
    let text = CombText::from(id);
    match text.to_sql() {
        ColumnData::String(Some(t)) => assert_eq!(t, "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"),
        other => panic!("{other:?}"),
    }
    // What was written reads back as the same id, with every type that reads the column.
    let written = [bin.into_sql(), text.into_sql()];
    for value in &written {
        let value: ColumnData<'static> = match value {
            ColumnData::Binary(b) => ColumnData::Binary(b.as_ref().map(|b| b.clone().into_owned().into())),
            ColumnData::String(t) => ColumnData::String(t.as_ref().map(|t| t.clone().into_owned().into())),
            other => panic!("{other:?}"),
        };
        assert_eq!(CombBinary::from_sql(&value).unwrap(), Some(bin), "{value:?}");
        assert_eq!(CombText::from_sql(&value).unwrap(), Some(text), "{value:?}");
        assert_eq!(Comb::from_sql(&value).unwrap(), Some(Comb::from(id)), "{value:?}");
    }
    assert_eq!(OptionalCombBinary(None).to_sql(), ColumnData::Binary(None));
    assert_eq!(OptionalCombText(None).to_sql(), ColumnData::String(None));
    assert_eq!(OptionalCombBinary::from(bin).0, Some(bin));
    // Bad values are errors, not panics.
    assert!(CombBinary::from_sql(&ColumnData::Binary(Some(vec![1u8; 15].into()))).is_err());
    assert!(CombText::from_sql(&ColumnData::String(Some("not a uuid".into()))).is_err());
}

/// Code written for `uuid::Uuid` compiles with only the type changed to each column type.
mod swap_public {
    combkey_testutil::uuid_swap_test!(combkey_tiberius::CombPublic);
}
mod swap_binary {
    combkey_testutil::uuid_swap_test!(combkey_tiberius::CombBinary);
}
mod swap_text {
    combkey_testutil::uuid_swap_test!(combkey_tiberius::CombText);
}

/// A time range's bounds in the stored form enclose, in SQL Server's order (SqlGuid), exactly
/// the stored ids made in the range, edges included.
#[test]
fn time_range_bounds_in_sql_servers_order() {
    let (a, b) = (1_700_000_000_000i64, 1_700_000_060_000i64);
    let range = combkey::Comb::range(combkey::Timestamp::from_unix_ms(a)..combkey::Timestamp::from_unix_ms(b)).unwrap();
    let g = combkey::V7Generator::new();
    let mut ids = Vec::new();
    for ms in (a - 2..a + 2).chain(b - 2..b + 2).chain([a + 30_000]) {
        ids.extend((0..50).map(|_| Comb::from(g.generate_at(combkey::Timestamp::from_unix_ms(ms)))));
    }
    let (lo, hi) = range.stored(combkey::Backend::SqlServer);
    let text = |b: [u8; 16]| uuid::Uuid::from_bytes(b).hyphenated().to_string().to_uppercase();
    let mut input: Vec<String> = ids.iter().map(|id| shown(*id)).collect();
    input.push(text(lo));
    input.push(text(hi));
    let sorted = combkey_testutil::sqlserver_sort(&input);
    let (i_lo, i_hi) =
        (sorted.iter().position(|s| *s == text(lo)).unwrap(), sorted.iter().position(|s| *s == text(hi)).unwrap());
    let between: Vec<Comb> =
        sorted[i_lo + 1..i_hi].iter().map(|s| Comb::from_stored_uuid(s.parse().unwrap())).collect();
    let mut expected: Vec<Comb> =
        ids.iter().copied().filter(|id| (a..b).contains(&id.to_comb().unix_ms().unwrap())).collect();
    expected.sort();
    assert_eq!(between, expected, "exactly the range's ids lie between its stored bounds");
}

/// The T-SQL partition function's boundaries (`Partitioning::create` for SQL Server): listed
/// in SQL Server's order, and each interval's ids between its two boundaries.
#[test]
fn partition_boundaries_in_sql_servers_order() {
    use combkey::sql::{Interval, Partitioning};
    let t = |s: &str| s.parse::<combkey::Timestamp>().unwrap();
    let p = Partitioning::new("orders", Interval::Week).unwrap();
    let (from, to) = (t("2026-01-01T00:00:00Z"), t("2026-03-01T00:00:00Z"));
    let bounds: Vec<String> = p
        .sqlserver_boundaries(from, to)
        .unwrap()
        .into_iter()
        .map(|b| uuid::Uuid::from_bytes(b).hyphenated().to_string().to_uppercase())
        .collect();
    let ddl = p.create(combkey::Backend::SqlServer, from, to, false).unwrap();
    let listed = ddl.find(&bounds[0]).unwrap();
    assert!(bounds.windows(2).all(|w| ddl.find(&w[0]) < ddl.find(&w[1])), "listed in this order:\n{ddl}");
    assert!(listed > 0 && ddl.contains("AS RANGE RIGHT FOR VALUES"), "{ddl}");
    // SQL Server's order of the boundaries is the listed one.
    let mut reversed = bounds.clone();
    reversed.reverse();
    assert_eq!(combkey_testutil::sqlserver_sort(&reversed), bounds);
    // Ids made in each week (first and last millisecond, and between) sort between its
    // boundaries.
    let g = combkey::V7Generator::new();
    let mut start = Interval::Week.start_of(from);
    let mut interval = 0;
    let mut input = bounds.clone();
    let mut made = Vec::new();
    while start < to {
        let end = Interval::Week.next(start);
        for at in [start, start.saturating_add_ms(3 * 86_400_000), end.saturating_add_ms(-1)] {
            let id = Comb::from(g.generate_at(at));
            input.push(shown(id));
            made.push((interval, shown(id)));
        }
        start = end;
        interval += 1;
    }
    let sorted = combkey_testutil::sqlserver_sort(&input);
    let pos = |s: &String| sorted.iter().position(|x| x == s).unwrap();
    for (interval, id) in &made {
        assert!(pos(&bounds[*interval]) < pos(id) && pos(id) < pos(&bounds[interval + 1]), "week {interval}: {id}");
    }
}

/// COLMETADATA for one nullable `uniqueidentifier` column named `id` that may be written: what
/// SQL Server answers to the `SELECT TOP 0 ... FROM t` tiberius sends before a bulk insert,
/// which loads the columns it may write. Its `usUpdateable` field (MS-TDS 2.2.7.4, bits 2 and
/// 3) is 2, "unknown" (bit 3): tiberius 0.13 reads the field as the specification does, 0.12
/// reads bit 3 alone as "updateable", and both load such a column.
fn guid_column_metadata() -> Vec<u8> {
    let mut t = vec![0x81, 1, 0]; // COLMETADATA, one column
    t.extend_from_slice(&0u32.to_le_bytes()); // user type
    t.extend_from_slice(&0x0009u16.to_le_bytes()); // nullable | usUpdateable = 2
    t.extend_from_slice(&[0x24, 0x10]); // GUIDN, 16 bytes
    t.push(2); // column name: 2 UTF-16 characters
    t.extend("id".encode_utf16().flat_map(u16::to_le_bytes));
    t
}

/// Bulk loading (`bulk_insert` with `TokenRow`s from `IntoRow`): every row on the wire holds
/// SQL Server's own bytes of the stored form, in the order sent.
#[tokio::test]
async fn bulk_insert_rows_carry_the_stored_form() {
    let mut metadata = guid_column_metadata();
    metadata.extend_from_slice(&done_token());
    let (peer, mut client) = fake_client(vec![
        packet(0x04, &metadata),     // SELECT TOP 0 id FROM t
        packet(0x04, &done_token()), // INSERT BULK t (id uniqueidentifier)
        packet(0x04, &done_token()), // the rows
    ])
    .await;
    let ids: Vec<Comb> = (0..3).map(|_| Comb::new()).collect();
    // `bulk_insert`: in tiberius 0.12 and 0.13 alike (0.13 added `bulk_insert_columns`).
    let mut bulk = client.bulk_insert("t").await.expect("column metadata from the fake peer");
    for id in &ids {
        bulk.send(tiberius::IntoRow::into_row(*id)).await.expect("a row");
    }
    bulk.finalize().await.expect("the fake peer's DONE");

    let written = peer.lock().unwrap().written.clone();
    let utf16 = |s: &str| -> Vec<u8> { s.encode_utf16().flat_map(u16::to_le_bytes).collect() };
    // tiberius 0.13 quotes the column's name, 0.12 does not.
    let statements = [utf16("INSERT BULK t ([id] uniqueidentifier)"), utf16("INSERT BULK t (id uniqueidentifier)")];
    let ascii: String =
        written.iter().map(|b| if b.is_ascii_graphic() || *b == b' ' { *b as char } else { '.' }).collect();
    assert!(
        statements.iter().any(|s| written.windows(s.len()).any(|w| w == s.as_slice())),
        "the INSERT BULK statement: {ascii}"
    );
    // A bulk load packet (type 0x07) whose ROW tokens (0xD1) each hold a 16-byte GUIDN value.
    let load = written.iter().position(|b| *b == 0x07).expect("a bulk load packet");
    // The rows follow one another: ROW token, length 16, the value.
    let first = load + written[load..].windows(2).position(|w| w == [0xD1, 0x10]).expect("a ROW token");
    let rows: Vec<[u8; 16]> = (0..ids.len())
        .map(|i| {
            let at = first + 18 * i;
            assert_eq!(written[at..at + 2], [0xD1, 0x10], "row {i}");
            written[at + 2..at + 18].try_into().unwrap()
        })
        .collect();
    let expected: Vec<[u8; 16]> = ids.iter().map(|id| id.to_comb().to_sqlserver_bytes_le()).collect();
    assert_eq!(rows, expected);
}

/// Code written for `uuid::Uuid` compiles with only the type changed to `combkey_tiberius::Comb`, and
/// observes the same (no database needed).
mod swap_comb {
    combkey_testutil::uuid_swap_test!(combkey_tiberius::Comb);
}

/// A service that shows faces (combkey's `FaceKey::scope`): the adapter's key type serializes
/// as the face and reads it back, while the value tiberius stores keeps SQL Server's order
/// (`SqlGuid`, run in Mono) in creation order; the faces themselves have no order.
#[test]
fn faces_outside_sql_server_order_inside() {
    let key = combkey::FaceKey::from_hex("000102030405060708090a0b0c0d0e0f").unwrap();
    let g = combkey::V7Generator::new();
    let made: Vec<Comb> = (0..2_000).map(|_| Comb::from(g.generate())).collect();
    let json = key.scope(|| serde_json::to_string(&made)).unwrap();
    let faces: Vec<uuid::Uuid> =
        serde_json::from_str::<Vec<String>>(&json).unwrap().iter().map(|f| f.parse().unwrap()).collect();
    for (face, id) in faces.iter().zip(&made) {
        assert_eq!(*face, key.mask(combkey::Comb::from(*id)).unwrap());
    }
    let mut sorted = faces.clone();
    sorted.sort();
    assert_ne!(sorted, faces, "the faces do not show the order");
    let back: Vec<Comb> = key.scope(|| serde_json::from_str(&json)).unwrap();
    assert_eq!(back, made);
    // What reaches SQL Server, handed to SqlGuid shuffled: its order is the creation order.
    let mut input: Vec<String> = back.iter().map(|id| shown(*id)).collect();
    input.reverse();
    let by_server = combkey_testutil::sqlserver_sort(&input);
    let in_order: Vec<String> = made.iter().map(|id| shown(*id)).collect();
    assert_eq!(by_server, in_order);
}
