//! Shared by the database tests of the combkey crates (not published): where the test
//! databases are, ids that expose byte-order mistakes, and SQL Server's order from an
//! implementation that is not ours ([`sqlserver_sort`]).

/// `COMBKEY_PG_URL`, default `postgres://postgres@127.0.0.1:5432/test` (scripts/db.sh).
pub fn pg_url() -> String {
    std::env::var("COMBKEY_PG_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// `COMBKEY_MYSQL_URL`, default `mysql://root@127.0.0.1:3306/test` (scripts/db.sh).
pub fn mysql_url() -> String {
    std::env::var("COMBKEY_MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into())
}

/// The RFC 9562 example, nil, max, ascending bytes, an RT.Comb id, and fresh ones: a literal
/// of each in SQL catches any byte-order mistake a round trip would hide.
pub fn sample_ids<T: From<combkey::Comb>>() -> Vec<T> {
    let fixed = [
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "00000000-0000-0000-0000-000000000000",
        "ffffffff-ffff-ffff-ffff-ffffffffffff",
        "00112233-4455-6677-8899-aabbccddeeff",
        "e25afe33-db2d-4502-9bf0-919001862cc4",
    ];
    let mut ids: Vec<combkey::Comb> = fixed.iter().filter_map(|s| s.parse().ok()).collect();
    ids.extend((0..5).map(|_| combkey::Comb::new()));
    ids.into_iter().map(T::from).collect()
}

/// `n` ids in generation order, and the same ids shuffled.
pub fn generated_and_shuffled<T: From<combkey::Comb> + Clone>(n: usize) -> (Vec<T>, Vec<T>) {
    use rand::seq::SliceRandom;
    let mut ids = vec![combkey::Comb::NIL; n];
    combkey::V7Generator::new().fill(&mut ids);
    let ids: Vec<T> = ids.into_iter().map(T::from).collect();
    let mut shuffled = ids.clone();
    shuffled.shuffle(&mut rand::rng());
    (ids, shuffled)
}

/// The 32 uppercase hex digits of an id, for SQL literals (`UNHEX('..')`, `X'..'`).
pub fn hex(id: impl Into<combkey::Comb>) -> String {
    format!("{:X}", id.into())
}

/// An error and its sources, joined: drivers wrap a column's error in one naming it.
pub fn chain(err: &dyn std::error::Error) -> String {
    let mut s = err.to_string();
    let mut source = err.source();
    while let Some(e) = source {
        s.push_str(": ");
        s.push_str(&e.to_string());
        source = e.source();
    }
    s
}

/// Sorts GUID strings (SQL Server's display form) the way SQL Server orders
/// `uniqueidentifier` values, by asking an implementation that is not combkey's: .NET's
/// `System.Data.SqlTypes.SqlGuid.CompareTo` in Mono (Debian's `mono-runtime`, `mono-mcs`,
/// `libmono-system-data4.0-cil`; `scripts/db.sh` installs them). The C# program
/// (`SqlGuidSort.cs`) is compiled once per test process.
///
/// Panics with what to install when Mono is missing: an order test must not pass without
/// its oracle.
pub fn sqlserver_sort(guids: &[String]) -> Vec<String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    use std::sync::OnceLock;
    static EXE: OnceLock<std::path::PathBuf> = OnceLock::new();
    let exe = EXE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("combkey-sqlguid-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let src = dir.join("SqlGuidSort.cs");
        std::fs::write(&src, include_str!("SqlGuidSort.cs")).expect("write SqlGuidSort.cs");
        let exe = dir.join("SqlGuidSort.exe");
        let out = Command::new("mcs")
            .arg("-r:System.Data.dll")
            .arg(format!("-out:{}", exe.display()))
            .arg(&src)
            .output()
            .unwrap_or_else(|e| panic!("mcs (Mono's C# compiler) is needed for SQL Server's order: {e}; {MONO}"));
        assert!(out.status.success(), "mcs failed: {}", String::from_utf8_lossy(&out.stderr));
        exe
    });
    let mut child = Command::new("mono")
        .arg(exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("mono is needed for SQL Server's order: {e}; {MONO}"));
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = guids.join("\n");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("mono ran");
    writer.join().expect("writer thread").expect("wrote the GUIDs");
    assert!(out.status.success(), "SqlGuidSort failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("ASCII GUIDs").lines().map(str::to_string).collect()
}

const MONO: &str = "install Debian's mono-runtime mono-mcs libmono-system-data4.0-cil (scripts/db.sh does)";
