//! The `combkey` command's contract, run as a process.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use combkey::Comb;

fn combkey(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_combkey"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn combkey");
    if let Some(input) = stdin {
        child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write stdin");
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("combkey output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "combkey {args:?} panicked: {stderr}");
    out
}

fn lines(out: &Output) -> Vec<String> {
    String::from_utf8(out.stdout.clone()).expect("utf-8").lines().map(str::to_string).collect()
}

#[test]
fn new_prints_increasing_v7_ids() {
    let out = combkey(&["new", "-n", "1000"], None);
    assert!(out.status.success());
    let ids: Vec<Comb> = lines(&out).iter().map(|l| l.parse().expect("canonical id")).collect();
    assert_eq!(ids.len(), 1000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert!(ids.iter().all(|id| id.version() == 7 && id.to_string() == id.to_string().to_lowercase()));
    let now = combkey::Timestamp::now().unix_ms();
    let ms = ids[0].timestamp().expect("v7").unix_ms();
    assert!((now - ms).abs() < 60_000, "id time {ms} vs now {now}");
}

#[test]
fn new_stored_forms_convert_back() {
    // `--storage` is the old spelling of `--stored`, kept for existing scripts.
    for (flag, storage, check) in [("--stored", "sqlserver", 36usize), ("--storage", "mysql", 32)] {
        let out = combkey(&["new", "-n", "50", flag, storage], None);
        assert!(out.status.success());
        let stored = lines(&out);
        assert!(stored.iter().all(|s| s.len() == check && *s == s.to_uppercase()), "{storage}: {stored:?}");
        let back = combkey(&["convert", "--from", storage, "--to", "canonical"], Some(&stored.join("\n")));
        assert!(back.status.success());
        let ids: Vec<Comb> = lines(&back).iter().map(|l| l.parse().expect("id")).collect();
        assert_eq!(ids.len(), 50);
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{storage}: converted ids keep generation order");
        assert!(ids.iter().all(|id| id.version() == 7));
    }
}

#[test]
fn sqlserver_string_has_the_milliseconds_last() {
    // The last group of the SQL Server form is the 48-bit time, as in RT.Comb's T-SQL.
    let out =
        combkey(&["convert", "--from", "canonical", "--to", "sqlserver", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"], None);
    assert_eq!(lines(&out), ["8F39070C-0CDC-C498-7CC3-017F22E279B0"]);
    let out =
        combkey(&["convert", "--from", "canonical", "--to", "mysql", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"], None);
    assert_eq!(lines(&out), ["017F22E279B07CC398C4DC0C0C07398F"]);
}

#[test]
fn new_short_prefix() {
    let out = combkey(&["new", "-n", "20", "--layout", "short-prefix"], None);
    assert!(out.status.success());
    let minute = u64::try_from(combkey::Timestamp::now().unix_ms()).unwrap_or(0) / 60_000;
    for l in lines(&out) {
        let id: Comb = l.parse().expect("id");
        assert_eq!(id.version(), 8);
        let prefix = u64::from(u16::from_be_bytes([id.as_bytes()[0], id.as_bytes()[1]]));
        assert!(prefix == minute % 65_536 || prefix == (minute + 1) % 65_536, "{l}");
    }
    // `--kind` is the old spelling of `--layout`.
    let v4 = combkey(&["new", "--kind", "short-prefix", "--v4", "--width", "3", "--interval", "30s"], None);
    let id: Comb = lines(&v4)[0].parse().expect("id");
    assert_eq!(id.version(), 4);
}

#[test]
fn inspect_json_on_the_rfc_vector() {
    let out = combkey(&["inspect", "--json", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"], None);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["layout"], "v7");
    assert_eq!(v["version"], 7);
    assert_eq!(v["unix_ms"], 1_645_557_742_000u64);
    assert_eq!(v["time"], "2022-02-22T19:22:22.000Z");
    assert_eq!(v["variant"], "rfc9562");
}

#[test]
fn inspect_json_gives_signed_unix_ms_before_1970() {
    // RT.Comb's Legacy layout (SQL Server datetime) for 1938-07-05T05:56:01.037Z: RT.Comb's
    // GetTimestamp reads it back as -993,837,838,963 ms; v1's first tick is in 1582.
    let out = combkey(&["inspect", "--json", "--as", "rtcomb-legacy", "00000000-0000-4000-8000-36f00061c877"], None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["time"], "1938-07-05T05:56:01.037Z");
    assert_eq!(v["unix_ms"], -993_837_838_963i64);
    let out = combkey(&["inspect", "--json", "--as", "v1", "00000000-0000-1000-8000-000000000000"], None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["time"], "1582-10-15T00:00:00.000Z");
    assert_eq!(v["unix_ms"], -12_219_292_800_000i64);
    assert_eq!(v["gregorian_ticks"], 0);
}

#[test]
fn inspect_says_when_a_locality_counter_lost_bits() {
    // Groupon's README sequence, and its single id (counter 0xcff0eb02): bit 31 of each
    // counter was set, so bits 24-27 are not in the id (0xcff0eb02's happen to be `f`). The
    // third was made from 0x12345678, bit 31 clear: nothing lost.
    let out = combkey(
        &[
            "inspect",
            "--json",
            "c8c9cef9-7a7f-bd53-7a50-013e4e2afbde",
            "20be0ffc-314a-bd53-7a50-013a65ca76d2",
            "87654321-7a7f-bd53-7a50-013e4e2afbde",
        ],
        None,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<serde_json::Value> =
        lines(&out).iter().map(|l| serde_json::from_str(l).expect("json line")).collect();
    assert_eq!(rows[0]["layout"], "locality");
    assert_eq!(rows[0]["counter_lost_bits"], true);
    // No one counter is named where bits were lost: any of 0x9_ec9c8c made this id.
    assert_eq!(rows[0]["counter"], serde_json::Value::Null);
    assert_eq!(rows[0]["counter_hex"], "9?ec9c8c");
    assert_eq!(rows[1]["counter_lost_bits"], true);
    assert_eq!(rows[1]["counter"], serde_json::Value::Null);
    assert_eq!(rows[1]["counter_hex"], "c?f0eb02");
    assert_eq!(rows[2]["counter_lost_bits"], false);
    assert_eq!(rows[2]["counter"], 0x1234_5678u32);
    assert_eq!(rows[2]["counter_hex"], "12345678");
    // A first group Groupon's variable mode never writes (low digit 8 with a high digit not
    // `f`): no variable-mode counter at all; the sequential reading stays.
    let out = combkey(&["inspect", "--json", "00000078-62a6-b000-0000-01a21810c984"], None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let row = &json_lines(&out)[0];
    assert_eq!(row["counter"], serde_json::Value::Null);
    assert_eq!(row["counter_hex"], serde_json::Value::Null);
    assert_eq!(row["counter_lost_bits"], false);
    assert_eq!(row["counter_sequential"], 0x78);
    // The text form says the same.
    let out = combkey(&["inspect", "20be0ffc-314a-bd53-7a50-013a65ca76d2"], None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name).and_then(|r| r.strip_prefix(':')).map(str::trim))
            .map(str::to_string)
    };
    assert_eq!(field("counter_hex").as_deref(), Some("c?f0eb02"), "{text}");
    assert_eq!(field("counter_lost_bits").as_deref(), Some("yes"), "{text}");
    assert_eq!(field("counter"), None, "{text}");
}

#[test]
fn inspect_json_short_prefix_and_plain_uuid() {
    let out = combkey(
        &[
            "inspect",
            "--json",
            "--near",
            "2022-03-18T05:30:00Z",
            "0064ffff-ffff-8fff-bfff-ffffffffffff",
            "919108f7-52d1-4320-9bac-f847db4148a8",
        ],
        None,
    );
    assert!(out.status.success());
    let rows: Vec<serde_json::Value> =
        lines(&out).iter().map(|l| serde_json::from_str(l).expect("json line")).collect();
    assert_eq!(rows[0]["layout"], "short-prefix");
    assert_eq!(rows[0]["prefix"], 100);
    assert_eq!(rows[0]["interval_start"], "2022-03-18T05:24:00.000Z");
    assert_eq!(rows[0]["unix_ms"], serde_json::Value::Null);
    assert_eq!(rows[1]["layout"], "uuid");
    assert_eq!(rows[1]["version"], 4);
    assert_eq!(rows[1]["time"], serde_json::Value::Null);
}

#[test]
fn validate_klokwrk_vectors() {
    let base = ["validate", "--layout", "short-prefix", "--v4", "--now", "2022-03-18T03:44:00Z"];
    let id = |p: &str| format!("{p}f3b1-1c2d-4e5f-9a6b-7c8d9e0f1a2b");
    let ok: Vec<String> = ["0000", "000a", "fff6"].iter().map(|p| id(p)).collect();
    let mut args: Vec<&str> = base.to_vec();
    args.extend(ok.iter().map(String::as_str));
    let out = combkey(&args, None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    for bad in ["000b", "fff5"] {
        let b = id(bad);
        let mut args = base.to_vec();
        args.push(&b);
        let out = combkey(&args, None);
        assert_eq!(out.status.code(), Some(1), "{bad}");
        let text = lines(&out).join("\n");
        assert!(text.contains("invalid: id is too"), "{bad}: {text}");
    }
}

#[test]
fn validate_v7_reasons_one_per_id() {
    let out = combkey(
        &[
            "validate",
            "--now",
            "2022-02-22T19:22:22Z",
            "--past",
            "1m",
            "--future",
            "1m",
            "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
            "017f22e2-79b0-4cc3-98c4-dc0c0c07398f",
            "nope",
            "017f0000-0000-7cc3-98c4-dc0c0c07398f",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let l = lines(&out);
    assert_eq!(l.len(), 4);
    assert_eq!(l[0], "017f22e2-79b0-7cc3-98c4-dc0c0c07398f: valid");
    assert!(l[1].contains("wrong UUID version: expected version 7, found version 4"), "{}", l[1]);
    assert!(l[2].contains("invalid UUID length"), "{}", l[2]);
    assert!(l[3].contains("too old"), "{}", l[3]);
}

#[test]
fn malformed_arguments_fail_cleanly() {
    let cases: &[(&[&str], i32, &str)] = &[
        (&["inspect", "garbage"], 1, "garbage: invalid UUID length"),
        (
            &["convert", "--from", "mysql", "--to", "canonical", "zz7f22e279b07cc398c4dc0c0c07398f"],
            1,
            "invalid character 'z'",
        ),
        (&["new", "-n", "abc"], 2, "invalid value 'abc'"),
        (&["new", "--layout", "v9"], 2, "invalid value 'v9'"),
        (&["new", "--layout", "short-prefix", "--width", "9"], 2, "short prefix width"),
        (&["validate", "--past", "10x", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"], 2, "invalid duration"),
        (&["validate", "--now", "yesterday", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"], 2, "RFC 3339"),
        (&["frobnicate"], 2, "unrecognized subcommand"),
    ];
    for (args, code, message) in cases {
        let out = combkey(args, Some(""));
        assert_eq!(out.status.code(), Some(*code), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{args:?}: {err}");
    }
}

fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    lines(out).iter().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}"))).collect()
}

#[test]
fn inspect_detects_every_layout() {
    let out = combkey(
        &[
            "inspect",
            "--json",
            "20be0ffc-314a-bd53-7a50-013a65ca76d2",
            "d76b58b9-6220-11e1-b36c-cc52afc9f2ed",
            "1ec9414c-232a-6b00-b3c8-9f6bdeced846",
            "1e1624e7-5e1f-d27f-a11d-ed65de8970f6",
        ],
        None,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows = json_lines(&out);
    assert_eq!(rows[0]["layout"], "locality");
    assert_eq!(rows[0]["pid"], 12_618);
    // Groupon's README names counter 3,488,672,514 (0xcff0eb02) for this id: bit 31 is set, so
    // its second digit is not in the id, and any of 16 counters wrote it.
    assert_eq!(rows[0]["counter"], serde_json::Value::Null);
    assert_eq!(rows[0]["counter_hex"], format!("{:08x}", 3_488_672_514u32).replacen('f', "?", 1));
    assert_eq!(rows[0]["mac_fragment"], "__:__:_d:53:7a:50");
    assert_eq!(rows[0]["unix_ms"], 1_350_327_498_450u64);
    assert_eq!(rows[0]["time"], "2012-10-15T18:58:18.450Z");
    assert_eq!(rows[1]["layout"], "v1");
    assert_eq!(rows[1]["gregorian_ticks"], 135_497_356_990_437_561u64);
    assert_eq!(rows[1]["node"], "cc:52:af:c9:f2:ed");
    assert_eq!(rows[1]["time"], "2012-02-28T15:28:19.043Z");
    assert_eq!(rows[2]["layout"], "v6");
    assert_eq!(rows[2]["v1"], "c232ab00-9414-11ec-b3c8-9f6bdeced846");
    assert_eq!(rows[2]["time"], "2022-02-22T19:22:22.000Z");
    assert_eq!(rows[3]["layout"], "lambert-v13");
}

#[test]
fn inspect_as_layout() {
    let cases = [
        ("rtcomb-legacy", "E25AFE33-DB2D-4502-9BF0-919001862CC4", "2002-01-10T23:40:35.000Z"),
        ("rtcomb-sql", "d01c25cc-63a7-47cc-b5ba-018e5f3bff48", "2024-03-21T04:19:11.304Z"),
        ("newsequentialid", "B9586BD7-2062-E111-B36C-CC52AFC9F2ED", "2012-02-28T15:28:19.043Z"),
    ];
    for (kind, id, time) in cases {
        let out = combkey(&["inspect", "--json", "--as", kind, id], None);
        assert!(out.status.success(), "{kind}");
        let row = &json_lines(&out)[0];
        assert_eq!(row["layout"], kind);
        assert_eq!(row["time"], time, "{kind}");
    }
    // An id that is not of the kind named: an error on stderr, exit 1.
    let out = combkey(&["inspect", "--as", "v1", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected version 1, found version 7"));
    // Text output names the fields too.
    let out = combkey(&["inspect", "20be0ffc-314a-bd53-7a50-013a65ca76d2"], None);
    let text = lines(&out).join("\n");
    assert!(
        text.contains("pid:") && text.contains("12618") && text.contains("layout:") && text.contains("locality"),
        "{text}"
    );
}

#[test]
fn convert_between_layouts() {
    let cases = [
        ("newsequentialid", "v1", "B9586BD7-2062-E111-B36C-CC52AFC9F2ED", "d76b58b9-6220-11e1-b36c-cc52afc9f2ed"),
        ("v1", "v6", "c232ab00-9414-11ec-b3c8-9f6bdeced846", "1ec9414c-232a-6b00-b3c8-9f6bdeced846"),
        ("v1", "mysql-swap", "58e0a7d7-eebc-11d8-9669-0800200c9a66", "11d8eebc-58e0-a7d7-9669-0800200c9a66"),
        ("rtcomb-sql", "rtcomb-sql", "d01c25cc-63a7-47cc-b5ba-018e5f3bff48", "d01c25cc-63a7-47cc-b5ba-018e5f3bff48"),
    ];
    for (from, to, input, want) in cases {
        let out = combkey(&["convert", "--from", from, "--to", to, input], None);
        assert!(out.status.success(), "{from} -> {to}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(lines(&out), [want], "{from} -> {to}");
    }
    // RT.Comb Sql -> public id -> back.
    let out = combkey(
        &["convert", "--from", "rtcomb-sql", "--to", "canonical", "d01c25cc-63a7-47cc-b5ba-018e5f3bff48"],
        None,
    );
    let public = lines(&out)[0].clone();
    let id: Comb = public.parse().expect("id");
    assert_eq!(id.version(), 7);
    let back = combkey(&["convert", "--from", "canonical", "--to", "rtcomb-sql", &public], None);
    assert_eq!(lines(&back), ["d01c25cc-63a7-47cc-b5ba-018e5f3bff48"]);
    // Every layout that carries a time has a v7 form with its millisecond: RT.Comb's legacy
    // COMB from its README (2002-01-10 23:40:35.000), and back.
    let legacy = "e25afe33-db2d-4502-9bf0-919001862cc4";
    let out = combkey(&["convert", "--from", "rtcomb-legacy", "--to", "v7", legacy], None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v7: Comb = lines(&out)[0].parse().expect("id");
    assert_eq!(v7.version(), 7);
    assert_eq!(v7.timestamp().unwrap().to_string(), "2002-01-10T23:40:35.000Z");
    let back = combkey(&["convert", "--from", "canonical", "--to", "rtcomb-legacy", &v7.to_string()], None);
    assert_eq!(lines(&back), [legacy]);
    // v1's v7 form drops two bits of the node: no way back, said plainly, exit 1.
    let out = combkey(&["convert", "--from", "v1", "--to", "canonical", "c232ab00-9414-11ec-b3c8-9f6bdeced846"], None);
    assert_eq!(lines(&out), ["017f22e2-79b0-7000-8cf2-276bdeced846"]);
    let out = combkey(&["convert", "--from", "canonical", "--to", "v1", "017f22e2-79b0-7000-8cf2-276bdeced846"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not hold every bit"), "{out:?}");
    // A short COMB carries no instant: no v7 form, a clear error, exit 1.
    let out =
        combkey(&["convert", "--from", "uc-short-prefix", "--to", "v7", "01234567-89ab-4def-8123-456789abcdef"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("uc-short-prefix keys have no v7 form"), "{out:?}");
    let out = combkey(&["convert", "--from", "v8", "--to", "v7", "x"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown backend or layout"));
}

#[test]
fn new_every_layout() {
    for kind in combkey::layouts::Layout::ALL {
        let out = combkey(&["new", "-n", "3", "--layout", kind.name()], None);
        assert!(out.status.success(), "{kind}: {}", String::from_utf8_lossy(&out.stderr));
        let ids = lines(&out);
        assert_eq!(ids.len(), 3, "{kind}");
        for text in ids {
            let id: Comb = text.parse().expect("id");
            kind.check(&id).unwrap_or_else(|e| panic!("{kind}: {text}: {e}"));
            let round = combkey(&["inspect", "--json", "--as", kind.name(), &text], None);
            assert!(round.status.success(), "{kind}: {text}");
        }
    }
}

#[test]
fn sql_prints_migrations() {
    let out = combkey(&["sql", "postgres", "--up"], None);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("CREATE OR REPLACE FUNCTION combkey_v7() RETURNS uuid"), "{text}");
    let out = combkey(&["sql", "mariadb"], None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("CREATE FUNCTION combkey_v7()")
            && text.contains("CREATE TRIGGER")
            && text.contains("UNHEX(REPLACE(")
    );
    let out = combkey(&["sql", "sqlite"], None);
    assert!(String::from_utf8_lossy(&out.stdout).contains("SQLite has no stored functions"));
    let out = combkey(&["sql", "oracle"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("postgres, mysql, sqlite or sqlserver"));
    let out = combkey(&["sql", "postgres", "--up", "--down"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn sql_for_sql_server_is_in_batches() {
    let out = combkey(&["sql", "sqlserver", "--up"], None);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().filter(|l| l.trim() == "GO").count(), 8, "{text}");
    assert!(text.contains("CREATE OR ALTER FUNCTION dbo.combkey_v7() RETURNS uniqueidentifier"));
    // `mssql` is the old spelling of `sqlserver`, kept for existing scripts.
    let old = combkey(&["sql", "mssql", "--up"], None);
    assert_eq!(old.stdout, out.stdout);
}

#[test]
fn sql_partitions() {
    let out = combkey(
        &[
            "sql",
            "postgres",
            "partitions",
            "--table",
            "orders",
            "--interval",
            "month",
            "--from",
            "2026-01-01",
            "--to",
            "2026-03-01",
        ],
        None,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("--   CREATE TABLE orders (id uuid NOT NULL, ..., PRIMARY KEY (id)) PARTITION BY RANGE (id);"),
        "{text}"
    );
    assert!(
        text.contains("CREATE TABLE IF NOT EXISTS orders_2026_01 PARTITION OF orders FOR VALUES FROM ('019b76da-a800-7000-8000-000000000000') TO ('019c167f-cc00-7000-8000-000000000000');"),
        "{text}"
    );
    assert_eq!(text.matches("PARTITION OF orders FOR VALUES").count(), 2);
    let out = combkey(
        &[
            "sql",
            "mysql",
            "partitions",
            "--table",
            "orders",
            "--interval",
            "day",
            "--key",
            "order_id",
            "--from",
            "2026-01-01",
            "--to",
            "2026-01-03",
            "--default",
        ],
        None,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("ALTER TABLE orders PARTITION BY RANGE COLUMNS(order_id) (")
            && text.contains("PARTITION p2026_01_02 VALUES LESS THAN (0x")
            && text.contains("pmax VALUES LESS THAN (MAXVALUE)"),
        "{text}"
    );
    let out = combkey(
        &[
            "sql",
            "sqlserver",
            "partitions",
            "--table",
            "orders",
            "--interval",
            "year",
            "--from",
            "2026-01-01",
            "--to",
            "2028-01-01",
        ],
        None,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("CREATE PARTITION FUNCTION orders_by_year (uniqueidentifier) AS RANGE RIGHT FOR VALUES"),
        "{text}"
    );
    assert!(
        text.contains("CREATE PARTITION SCHEME orders_by_year_scheme AS PARTITION orders_by_year ALL TO ([PRIMARY]);")
    );
    // Retention and extension.
    let out = combkey(
        &[
            "sql",
            "postgres",
            "partitions",
            "--table",
            "orders",
            "--interval",
            "month",
            "--from",
            "2026-01-01",
            "--drop-before",
            "2026-03-01",
        ],
        None,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("DROP TABLE IF EXISTS orders_2026_01;\nDROP TABLE IF EXISTS orders_2026_02;\n")
            && !text.contains("2026_03"),
        "{text}"
    );
    let out = combkey(
        &[
            "sql",
            "mysql",
            "partitions",
            "--table",
            "orders",
            "--interval",
            "week",
            "--add",
            "2",
            "--after",
            "2026-01-01",
        ],
        None,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("ALTER TABLE orders ADD PARTITION (\n  PARTITION p2026_w01")
            && text.contains("PARTITION p2026_w02"),
        "{text}"
    );
    // Errors: exit 2 with the reason.
    for (args, reason) in [
        (
            vec![
                "sql",
                "sqlite",
                "partitions",
                "--table",
                "t",
                "--interval",
                "day",
                "--from",
                "2026-01-01",
                "--to",
                "2026-01-02",
            ],
            "SQLite has no table partitioning",
        ),
        (
            vec![
                "sql",
                "postgres",
                "partitions",
                "--table",
                "t;x",
                "--interval",
                "day",
                "--from",
                "2026-01-01",
                "--to",
                "2026-01-02",
            ],
            "a plain identifier",
        ),
        (
            vec![
                "sql",
                "postgres",
                "partitions",
                "--table",
                "t",
                "--interval",
                "hour",
                "--from",
                "2026-01-01",
                "--to",
                "2026-01-02",
            ],
            "day, week, month or year",
        ),
        (
            vec![
                "sql",
                "postgres",
                "partitions",
                "--table",
                "t",
                "--interval",
                "day",
                "--from",
                "2026-13-01",
                "--to",
                "2026-01-02",
            ],
            "invalid date",
        ),
        (vec!["sql", "postgres", "partitions", "--table", "t", "--interval", "day"], "give --from and --to"),
    ] {
        let out = combkey(&args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(reason),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn sql_mysql_shards() {
    let run = |args: &[&str]| {
        let mut all = vec!["sql", "mysql", "shards", "--table", "orders", "--servers", "b1,b2,b3"];
        all.extend_from_slice(args);
        combkey(&all, None)
    };
    let out = run(&["--interval", "month", "--from", "2026-01-01", "--to", "2026-04-01"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ALTER TABLE orders ENGINE = SPIDER"), "{text}");
    assert!(
        text.contains(
            "PARTITION p2026_02 VALUES LESS THAN (0x019CA6B1DC0070008000000000000000) COMMENT = 'srv \"b2\", table \"orders_2026_02\"'"
        ),
        "{text}"
    );
    assert!(text.contains("-- on server b3:\n--   CREATE TABLE IF NOT EXISTS orders_2026_03 LIKE orders;"), "{text}");
    let out = run(&["--hash"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("PARTITION BY KEY(id) (") && text.matches("PARTITION p").count() == 3, "{text}");
    let out = run(&["--add", "2", "--after", "2026-04-01"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("REORGANIZE PARTITION pmax INTO") && text.contains("p2026_05"), "{text}");
    let out = run(&["--from", "2026-01-01", "--drop-before", "2026-03-01"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("DROP PARTITION IF EXISTS p2026_02;") && !text.contains("p2026_03"), "{text}");
    // Errors: another backend, a bad server name.
    let out = combkey(&["sql", "postgres", "shards", "--table", "t", "--servers", "b1", "--hash"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("combkey sql mysql shards"));
    let out = combkey(&["sql", "mysql", "shards", "--table", "t", "--servers", "b1;x", "--hash"], None);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn sql_sqlserver_convert() {
    let out = combkey(
        &[
            "sql",
            "sqlserver",
            "convert",
            "--table",
            "dbo.orders",
            "--from",
            "public",
            "--ref",
            "dbo.items.order_id:fk_items",
        ],
        None,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("SET XACT_ABORT ON;\nBEGIN TRANSACTION;"), "{text}");
    assert!(text.contains("ALTER TABLE dbo.items NOCHECK CONSTRAINT [fk_items];"), "{text}");
    assert!(text.contains("UPDATE dbo.orders SET [id] = dbo.combkey_stored([id]);"), "{text}");
    assert!(
        text.contains("UPDATE dbo.items SET [order_id] = dbo.combkey_stored([order_id]) WHERE [order_id] IS NOT NULL;")
    );
    assert!(text.contains("ALTER TABLE dbo.items WITH CHECK CHECK CONSTRAINT [fk_items];"), "{text}");
    assert!(text.contains("WHERE target = N'dbo.orders.id'") && text.ends_with("COMMIT TRANSACTION;\n"), "{text}");
    for (from, f) in
        [("rtcomb-sql", "dbo.combkey_from_rtcomb_sql"), ("newsequentialid", "dbo.combkey_from_newsequentialid")]
    {
        let out = combkey(&["sql", "sqlserver", "convert", "--table", "dbo.t", "--from", from], None);
        assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("SET [id] = {f}([id])")), "{from}");
    }
    let out = combkey(&["sql", "sqlserver", "convert", "--table", "dbo.t", "--from", "public", "--ref", "items"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("TABLE.COLUMN:CONSTRAINT"));
    let out = combkey(&["sql", "mysql", "convert", "--table", "t", "--from", "public"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn whitespace_around_an_id_is_ignored_in_arguments_as_on_stdin() {
    let id = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";
    for arg in [format!(" {id}"), format!("{id}\t"), format!("\n{id}\r\n")] {
        let out = combkey(&["inspect", "--json", &arg], None);
        assert!(out.status.success(), "{arg:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(json_lines(&out)[0]["id"], id, "{arg:?}");
        let out = combkey(&["convert", "--from", "canonical", "--to", "mysql", &arg], None);
        assert!(out.status.success(), "{arg:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(lines(&out), ["017F22E279B07CC398C4DC0C0C07398F"], "{arg:?}");
    }
    let out = combkey(&["inspect", "--json"], Some(&format!("  {id}  \r\n\n\t{id}\n")));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(json_lines(&out).len(), 2);
    // Whitespace inside an id is still an error, as is an empty one.
    for bad in ["017f22e2-79b0-7cc3 -98c4-dc0c0c07398f", "", "  "] {
        let out = combkey(&["inspect", bad], None);
        assert_eq!(out.status.code(), Some(1), "{bad:?}");
        assert!(!out.stderr.is_empty(), "{bad:?}");
    }
}

#[test]
fn inspect_time_past_year_9999_in_iso_8601_expanded_form() {
    // 2^48 - 1 ms, the last time a v7 id holds, and 10000-01-01 (JavaScript's
    // new Date(253402300800000).toISOString() is "+010000-01-01T00:00:00.000Z").
    let out = combkey(
        &["inspect", "--json", "ffffffff-ffff-7000-8000-000000000000", "e677d21f-dc00-7000-8000-000000000000"],
        None,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows = json_lines(&out);
    assert_eq!(rows[0]["unix_ms"], 281_474_976_710_655u64);
    assert_eq!(rows[0]["time"], "+010889-08-02T05:31:50.655Z");
    assert_eq!(rows[1]["unix_ms"], 253_402_300_800_000u64);
    assert_eq!(rows[1]["time"], "+010000-01-01T00:00:00.000Z");
}

#[test]
fn inspect_stored_forms_are_those_of_the_public_id_convert_gives() {
    // RT.Comb's Sql COMB stands for the v7 id docs/layouts.md converts it to; inspect's stored
    // forms are that id's, as `convert --from rtcomb-sql --to sqlserver|mysql` prints them.
    let rt = "d01c25cc-63a7-47cc-b5ba-018e5f3bff48";
    let out = combkey(&["inspect", "--json", "--as", "rtcomb-sql", rt], None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let row = &json_lines(&out)[0];
    let v7 = combkey(&["convert", "--from", "rtcomb-sql", "--to", "v7", rt], None);
    assert_eq!(lines(&v7), ["018e5f3b-ff48-7d6e-acc7-a763cc251cd0"]);
    for backend in ["sqlserver", "mysql"] {
        let converted = combkey(&["convert", "--from", "rtcomb-sql", "--to", backend, rt], None);
        assert_eq!(row[backend], lines(&converted)[0], "{backend}");
        let of_v7 =
            combkey(&["convert", "--from", "canonical", "--to", backend, "018e5f3b-ff48-7d6e-acc7-a763cc251cd0"], None);
        assert_eq!(row[backend], lines(&of_v7)[0], "{backend}");
    }
    // A v7 id is the public id itself.
    let out = combkey(&["inspect", "--json", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"], None);
    assert_eq!(json_lines(&out)[0]["sqlserver"], "8F39070C-0CDC-C498-7CC3-017F22E279B0");
    // A v1 family id and a locality id stand for their v7 forms (what doctor converts them
    // to), as `convert --from LAYOUT --to BACKEND` prints them.
    for (layout, id) in [
        ("newsequentialid", "1016833a-9ee9-f111-96d7-03890ba1d4dc"),
        ("locality", "20be0ffc-314a-bd53-7a50-013a65ca76d2"),
    ] {
        let out = combkey(&["inspect", "--json", "--as", layout, id], None);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let row = &json_lines(&out)[0];
        for backend in ["sqlserver", "mysql"] {
            let converted = combkey(&["convert", "--from", layout, "--to", backend, id], None);
            assert_eq!(row[backend], lines(&converted)[0], "{layout} {backend}");
        }
    }
    // A short COMB has no v7 form: no stored form.
    let out = combkey(&["inspect", "--json", "--as", "uc-short-prefix", "01234567-89ab-4def-8123-456789abcdef"], None);
    let row = &json_lines(&out)[0];
    assert_eq!(row["sqlserver"], serde_json::Value::Null, "{row}");
    assert_eq!(row["mysql"], serde_json::Value::Null, "{row}");
}

#[test]
fn a_reader_that_goes_away_is_no_error() {
    use std::io::{BufRead, BufReader};
    // `combkey new -n 10000000 | head -1`: the reader takes one line and closes the pipe.
    for args in [&["new", "-n", "10000000"][..], &["new", "-n", "1000000", "--layout", "rtcomb-sql"][..]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_combkey"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn combkey");
        let mut first = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut first).expect("one line");
        assert_eq!(first.trim().len(), 36, "{first:?}");
        // The reader (and its end of the pipe) dropped here.
        let out = child.wait_with_output().expect("wait");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// `combkey inspect --as NAME` on the ids the .NET generators made (the rows of the core's
/// `tests/peers/dotnet.tsv`, from their real code under Mono): each one's time to the
/// millisecond (and its .NET ticks to the tick); `convert --from NAME --to canonical` gives a
/// v7 id of that millisecond, and back where the v7 form keeps every bit.
#[test]
fn inspect_and_convert_the_dotnet_generators_ids() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../combkey/tests/peers/dotnet.tsv");
    let text = std::fs::read_to_string(&path).expect("dotnet.tsv");
    let mut by_layout: std::collections::BTreeMap<&str, Vec<(String, i64, i64)>> = Default::default();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        let layout = match f[0] {
            "newid-sequential" => continue, // ToSequentialGuid(): the sequence's bytes swapped
            "newid-sequential-next" => "newid-sequential",
            other => other,
        };
        // The time the id carries: the input ticks where the generator stamped them (NewId
        // reads its raw ticks back as `read_ticks`), and only in the range a time is read in.
        let ticks: i64 = f[11].parse().unwrap_or_else(|_| f[4].parse().unwrap());
        let unix_ms = (i128::from(ticks) - 621_355_968_000_000_000).div_euclid(10_000);
        let case = f[2];
        if case == "rand" || case.starts_with("edge:20") {
            by_layout.entry(layout).or_default().push((f[9].to_string(), i64::try_from(unix_ms).unwrap(), ticks));
        }
    }
    assert_eq!(by_layout.len(), 5, "{:?}", by_layout.keys());
    for (layout, rows) in &by_layout {
        let ids: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        let out = combkey(&["inspect", "--json", "--as", layout], Some(&ids.join("\n")));
        assert!(out.status.success(), "{layout}: {}", String::from_utf8_lossy(&out.stderr));
        let seen = json_lines(&out);
        assert_eq!(seen.len(), rows.len());
        for (row, (id, unix_ms, ticks)) in seen.iter().zip(rows) {
            assert_eq!(row["layout"], *layout, "{row}");
            // UUIDNext and Medo stamp whole milliseconds: their ticks are the millisecond's.
            if matches!(*layout, "efcore" | "newid" | "newid-sequential") {
                assert_eq!(row["dotnet_ticks"], *ticks, "{layout} {id}: the ticks");
            }
            assert_eq!(row["unix_ms"], *unix_ms, "{layout} {id}: the millisecond");
        }
        let out = combkey(&["convert", "--from", layout, "--to", "canonical"], Some(&ids.join("\n")));
        assert!(out.status.success(), "{layout}: {}", String::from_utf8_lossy(&out.stderr));
        let v7s = lines(&out);
        for (v7, (id, unix_ms, _)) in v7s.iter().zip(rows) {
            let v7: Comb = v7.parse().unwrap();
            assert_eq!(v7.version(), 7, "{layout} {id}");
            assert_eq!(v7.unix_ms(), Some(*unix_ms), "{layout} {id}");
        }
        let back = combkey(&["convert", "--from", "canonical", "--to", layout], Some(&v7s.join("\n")));
        if matches!(*layout, "efcore" | "uuidnext-sqlserver" | "medo-sqlserver") {
            assert_eq!(lines(&back), ids, "{layout}: every bit kept");
        } else {
            assert_eq!(back.status.code(), Some(1), "{layout}: no way back");
        }
    }
}

/// `combkey mask` and `combkey unmask` on the vectors uuidv47's C code made (the core's
/// `tests/peers/uuidv47.tsv`): per key, every valid v7 id gives the C code's face, and the face
/// gives the id back (`unmask` checks the time against the clock, so only ids up to today go
/// through it). The key also comes from `COMBKEY_FACE_KEY`, and errors never show it.
#[test]
fn mask_and_unmask_the_uuidv47_vectors() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../combkey/tests/peers/uuidv47.tsv");
    let text = std::fs::read_to_string(&path).expect("uuidv47.tsv");
    let now = combkey::Timestamp::now().unix_ms();
    let mut by_key: std::collections::BTreeMap<&str, Vec<(&str, &str)>> = Default::default();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        let input: Comb = f[3].parse().unwrap();
        if f[0] == "enc" && input.version() == 7 && input.is_rfc_variant() && input.unix_ms().unwrap() <= now {
            by_key.entry(f[2]).or_default().push((f[3], f[4]));
        }
    }
    let rows: usize = by_key.values().map(Vec::len).sum();
    assert!(rows > 500, "{rows} rows");
    for (key, pairs) in &by_key {
        let ids: Vec<&str> = pairs.iter().map(|p| p.0).collect();
        let faces: Vec<&str> = pairs.iter().map(|p| p.1).collect();
        let out = combkey(&["mask", "--key", key], Some(&ids.join("\n")));
        assert!(out.status.success(), "{key}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(lines(&out), faces, "mask under {key}");
        let out = combkey(&["unmask", "--key", key], Some(&faces.join("\n")));
        assert!(out.status.success(), "{key}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(lines(&out), ids, "unmask under {key}");
    }
    // The demo's id, key from the environment; a v4 id and a wrong key are refused (exit 1).
    let run = |args: &[&str], key: &str| {
        Command::new(env!("CARGO_BIN_EXE_combkey"))
            .args(args)
            .env("COMBKEY_FACE_KEY", key)
            .stdin(Stdio::null())
            .output()
            .expect("combkey")
    };
    let demo = "efcdab8967452301:1032547698badcfe";
    let out = run(&["mask", "018f2d9f-9a2a-7def-8c3f-7b1a2c4d5e6f"], demo);
    assert_eq!(lines(&out), ["2463c780-7fca-4def-8c3f-7b1a2c4d5e6f"]);
    let out = run(&["mask", "2463c780-7fca-4def-8c3f-7b1a2c4d5e6f"], demo);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected version 7, found version 4"));
    let out = run(&["unmask", "2463c780-7fca-4def-8c3f-7b1a2c4d5e6f"], "00112233445566778899aabbccddeeff");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a face made with this key"), "{err}");
    let out = run(&["unmask", "2463c780-7fca-4def-8c3f-7b1a2c4d5e6f"], "not-hex-secret-0123456789abcdef!");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("invalid face key") && !err.contains("secret"), "{err}");
}
