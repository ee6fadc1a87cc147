//! The `combid` command's contract, run as a process.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use combid::Comb;

fn combid(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_combid"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn combid");
    if let Some(input) = stdin {
        child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write stdin");
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("combid output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "combid {args:?} panicked: {stderr}");
    out
}

fn lines(out: &Output) -> Vec<String> {
    String::from_utf8(out.stdout.clone()).expect("utf-8").lines().map(str::to_string).collect()
}

#[test]
fn new_prints_increasing_v7_ids() {
    let out = combid(&["new", "-n", "1000"], None);
    assert!(out.status.success());
    let ids: Vec<Comb> = lines(&out).iter().map(|l| l.parse().expect("canonical id")).collect();
    assert_eq!(ids.len(), 1000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert!(ids.iter().all(|id| id.version() == 7 && id.to_string() == id.to_string().to_lowercase()));
    let now = combid::Timestamp::now().unix_ms();
    let ms = ids[0].timestamp().expect("v7").unix_ms();
    assert!((now - ms).abs() < 60_000, "id time {ms} vs now {now}");
}

#[test]
fn new_storage_forms_convert_back() {
    for (storage, check) in [("sqlserver", 36usize), ("mysql", 32)] {
        let out = combid(&["new", "-n", "50", "--storage", storage], None);
        assert!(out.status.success());
        let stored = lines(&out);
        assert!(stored.iter().all(|s| s.len() == check && *s == s.to_uppercase()), "{storage}: {stored:?}");
        let back = combid(&["convert", "--from", storage, "--to", "canonical"], Some(&stored.join("\n")));
        assert!(back.status.success());
        let ids: Vec<Comb> = lines(&back).iter().map(|l| l.parse().expect("id")).collect();
        assert_eq!(ids.len(), 50);
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{storage}: converted ids keep generation order");
        assert!(ids.iter().all(|id| id.version() == 7));
    }
}

#[test]
fn sqlserver_string_has_the_milliseconds_last() {
    // The last group of the SQL Server form is the 48-bit time, as in seed 001's T-SQL.
    let out =
        combid(&["convert", "--from", "canonical", "--to", "sqlserver", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"], None);
    assert_eq!(lines(&out), ["8F39070C-0CDC-C498-7CC3-017F22E279B0"]);
    let out =
        combid(&["convert", "--from", "canonical", "--to", "mysql", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"], None);
    assert_eq!(lines(&out), ["017F22E279B07CC398C4DC0C0C07398F"]);
}

#[test]
fn new_short_prefix() {
    let out = combid(&["new", "-n", "20", "--kind", "short-prefix"], None);
    assert!(out.status.success());
    let minute = u64::try_from(combid::Timestamp::now().unix_ms()).unwrap_or(0) / 60_000;
    for l in lines(&out) {
        let id: Comb = l.parse().expect("id");
        assert_eq!(id.version(), 8);
        let prefix = u64::from(u16::from_be_bytes([id.as_bytes()[0], id.as_bytes()[1]]));
        assert!(prefix == minute % 65_536 || prefix == (minute + 1) % 65_536, "{l}");
    }
    let v4 = combid(&["new", "--kind", "short-prefix", "--v4", "--width", "3", "--interval", "30s"], None);
    let id: Comb = lines(&v4)[0].parse().expect("id");
    assert_eq!(id.version(), 4);
}

#[test]
fn inspect_json_on_the_rfc_vector() {
    let out = combid(&["inspect", "--json", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"], None);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["kind"], "v7");
    assert_eq!(v["version"], 7);
    assert_eq!(v["unix_ms"], 1_645_557_742_000u64);
    assert_eq!(v["time"], "2022-02-22T19:22:22.000Z");
    assert_eq!(v["variant"], "rfc9562");
}

#[test]
fn inspect_json_short_prefix_and_plain_uuid() {
    let out = combid(
        &[
            "inspect",
            "--json",
            "--near",
            "2022-03-18T05:30:00Z",
            "0064ffff-ffff-8fff-bfff-ffffffffffff",
            "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
        ],
        None,
    );
    assert!(out.status.success());
    let rows: Vec<serde_json::Value> =
        lines(&out).iter().map(|l| serde_json::from_str(l).expect("json line")).collect();
    assert_eq!(rows[0]["kind"], "short-prefix");
    assert_eq!(rows[0]["prefix"], 100);
    assert_eq!(rows[0]["interval_start"], "2022-03-18T05:24:00.000Z");
    assert_eq!(rows[0]["unix_ms"], serde_json::Value::Null);
    assert_eq!(rows[1]["kind"], "uuid");
    assert_eq!(rows[1]["version"], 1);
}

#[test]
fn validate_klokwrk_vectors() {
    let base = ["validate", "--kind", "short-prefix", "--v4", "--now", "2022-03-18T03:44:00Z"];
    let id = |p: &str| format!("{p}f3b1-1c2d-4e5f-9a6b-7c8d9e0f1a2b");
    let ok: Vec<String> = ["0000", "000a", "fff6"].iter().map(|p| id(p)).collect();
    let mut args: Vec<&str> = base.to_vec();
    args.extend(ok.iter().map(String::as_str));
    let out = combid(&args, None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    for bad in ["000b", "fff5"] {
        let b = id(bad);
        let mut args = base.to_vec();
        args.push(&b);
        let out = combid(&args, None);
        assert_eq!(out.status.code(), Some(1), "{bad}");
        let text = lines(&out).join("\n");
        assert!(text.contains("invalid: id is too"), "{bad}: {text}");
    }
}

#[test]
fn validate_v7_reasons_one_per_id() {
    let out = combid(
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
        (&["new", "--kind", "v9"], 2, "invalid value 'v9'"),
        (&["new", "--kind", "short-prefix", "--width", "9"], 2, "short prefix width"),
        (&["validate", "--past", "10x", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"], 2, "invalid duration"),
        (&["validate", "--now", "yesterday", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"], 2, "RFC 3339"),
        (&["frobnicate"], 2, "unrecognized subcommand"),
    ];
    for (args, code, message) in cases {
        let out = combid(args, Some(""));
        assert_eq!(out.status.code(), Some(*code), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{args:?}: {err}");
    }
}
