//! Shared by the database tests of the combkey crates (not published): where the test
//! databases are, ids that expose byte-order mistakes, and SQL Server's order from an
//! implementation that is not ours ([`sqlserver_sort`]).

/// The URL in environment variable `var`, which `scripts/test` (through `scripts/servers.sh`)
/// sets to a private server it started.
///
/// Panics when it is unset, saying how to get one: a database test never falls back to a
/// server of the machine, and never passes without its database.
pub fn url(var: &str) -> String {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => url,
        _ => panic!(
            "{var} is not set: run the tests with scripts/test, or `source scripts/servers.sh` first \
             (it starts private throwaway servers and sets it), or set it to a server of your own"
        ),
    }
}

/// `COMBKEY_PG_URL` (see [`url`]).
pub fn pg_url() -> String {
    url("COMBKEY_PG_URL")
}

/// `COMBKEY_MYSQL_URL` (see [`url`]).
pub fn mysql_url() -> String {
    url("COMBKEY_MYSQL_URL")
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
/// `libmono-system-data4.0-cil`; `scripts/deps.sh` installs them). The C# program
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

const MONO: &str = "install Debian's mono-runtime mono-mcs libmono-system-data4.0-cil (scripts/deps.sh does)";

/// One database connection as a test target for an id column type: how it reads an SQL
/// expression, compares a bound value with one inside SQL, round-trips a bound value and
/// reads `NULL`. Each adapter's tests implement it once per database; the cases go through
/// [`test_type!`], which writes the legs, as sqlx's own `test_type!` does.
///
/// The methods are `async` so one trait serves async and blocking drivers; a blocking
/// harness simply never awaits (its tests run it with [`block_on_ready`]).
pub trait TypeHarness {
    /// The adapter's column type.
    type Id: From<combkey::Comb> + Into<combkey::Comb> + Copy + PartialEq + core::fmt::Debug;
    /// `SELECT expr`, read as the id type.
    fn literal(&mut self, expr: &str) -> impl core::future::Future<Output = Result<Self::Id, String>>;
    /// `SELECT <id bound as a parameter> = expr`: whether the database sees the two as equal.
    fn bound_equals(&mut self, id: Self::Id, expr: &str) -> impl core::future::Future<Output = Result<bool, String>>;
    /// `SELECT <id bound as a parameter>`, read back as the id type.
    fn round_trip(&mut self, id: Self::Id) -> impl core::future::Future<Output = Result<Self::Id, String>>;
    /// A `NULL` of the column's type read into an `Option` of the id type.
    fn null_option(&mut self) -> impl core::future::Future<Output = Result<Option<Self::Id>, String>>;
    /// A `NULL` of the column's type read into the id type itself (must be an error).
    fn null_strict(&mut self) -> impl core::future::Future<Output = Result<Self::Id, String>>;
}

/// Runs the legs of a type case for every sample id ([`sample_ids`]): the SQL literal `expr(id)`
/// decodes to the id, the bound id equals that literal inside the database, the id round-trips,
/// and `NULL` reads as `None` (and is an error, not a panic, into a non-`Option`). A literal
/// leg catches byte-order mistakes that a round trip alone would hide. Panics naming the
/// database, the value and the leg that failed.
pub async fn check_type<H: TypeHarness>(h: &mut H, what: &str, expr: impl Fn(combkey::Comb) -> String) {
    for id in sample_ids::<combkey::Comb>() {
        let sql = expr(id);
        let typed = H::Id::from(id);
        match h.literal(&sql).await {
            Ok(got) => assert_eq!(got, typed, "{what}: the literal {sql} read back as {got:?}, expected {id}"),
            Err(e) => panic!("{what}: reading the literal {sql}: {e}"),
        }
        match h.bound_equals(typed, &sql).await {
            Ok(eq) => {
                assert!(eq, "{what}: {id} bound as a parameter differs from the literal {sql} inside the database")
            }
            Err(e) => panic!("{what}: comparing {id} bound as a parameter with {sql}: {e}"),
        }
        match h.round_trip(typed).await {
            Ok(back) => assert_eq!(back, typed, "{what}: {id} bound and read back as {back:?}"),
            Err(e) => panic!("{what}: round trip of {id}: {e}"),
        }
    }
    match h.null_option().await {
        Ok(none) => assert_eq!(none, None, "{what}: NULL into an Option"),
        Err(e) => panic!("{what}: NULL into an Option: {e}"),
    }
    match h.null_strict().await {
        Ok(v) => panic!("{what}: NULL into a non-Option id read as {v:?} instead of failing"),
        Err(e) => assert!(
            e.to_lowercase().contains("null"),
            "{what}: NULL into a non-Option: the error does not say NULL: {e}"
        ),
    }
}

/// Runs a future that never waits (a blocking [`TypeHarness`]'s) to its end.
///
/// Panics if it does wait: such a harness belongs in an async test.
pub fn block_on_ready<F: core::future::Future>(f: F) -> F::Output {
    let mut f = core::pin::pin!(f);
    match f.as_mut().poll(&mut core::task::Context::from_waker(core::task::Waker::noop())) {
        core::task::Poll::Ready(v) => v,
        core::task::Poll::Pending => panic!("a blocking TypeHarness waited; use an async test for it"),
    }
}

/// One type case per line, as sqlx's `test_type!` states them: a test named `$name` that
/// checks every sample id through the harness `$harness` with the SQL literal `$expr` makes
/// of it ([`check_type`]).
///
/// ```ignore
/// combkey_testutil::test_type!(async uuid_column, PgHarness::connect().await, "PostgreSQL uuid", |id| format!("'{id}'::uuid"));
/// combkey_testutil::test_type!(blocking blob_column, SqliteHarness::connect(), "SQLite BLOB", |id| format!("X'{id:X}'"));
/// ```
#[macro_export]
macro_rules! test_type {
    (async $name:ident, $harness:expr, $what:expr, $expr:expr $(,)?) => {
        #[tokio::test]
        async fn $name() {
            let mut h = $harness;
            $crate::check_type(&mut h, $what, $expr).await;
        }
    };
    (blocking $name:ident, $harness:expr, $what:expr, $expr:expr $(,)?) => {
        #[test]
        fn $name() {
            let mut h = $harness;
            $crate::block_on_ready($crate::check_type(&mut h, $what, $expr));
        }
    };
}

#[doc(hidden)]
pub use uuid;

/// The observations of code written for `uuid::Uuid` (`Id`), as an application has it:
/// constructors, parsing with `?`, conversions both ways, `TryFrom`, the id's methods,
/// `Debug` and `Display`, comparisons, hashing, sorting. [`uuid_swap_test!`] runs it once with
/// `Id = uuid::Uuid` and once with an adapter's column type: the outputs must be equal.
#[doc(hidden)]
#[macro_export]
macro_rules! __uuid_code {
    () => {{
        use ::std::collections::{BTreeSet, HashMap};
        use $crate::uuid::Uuid;

        fn parse(s: &str) -> Result<Id, Box<dyn ::std::error::Error>> {
            Ok(Id::parse_str(s)?)
        }
        fn from_bytes(b: &[u8]) -> Result<Id, Box<dyn ::std::error::Error>> {
            Ok(Id::from_slice(b)?)
        }
        fn describe(id: &Id) -> String {
            format!(
                "{id} {id:?} {} {} {} {} v{} {:?} nil={} max={} {} {:?} {:032x}",
                id.hyphenated(),
                id.simple(),
                id.braced(),
                id.urn(),
                id.get_version_num(),
                id.get_variant(),
                id.is_nil(),
                id.is_max(),
                id.as_u128(),
                id.as_bytes(),
                id.as_u128(),
            )
        }
        fn by_handler(id: Id) -> Uuid {
            // An API that still takes `uuid::Uuid`.
            id.into()
        }

        let text = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";
        let mut out = Vec::new();
        let id = parse(text).unwrap();
        out.push(describe(&id));
        out.push(describe(&Id::try_parse("{017F22E2-79B0-7CC3-98C4-DC0C0C07398F}").unwrap()));
        out.push(describe(&text.parse::<Id>().unwrap()));
        out.push(describe(&Id::try_from(text).unwrap()));
        out.push(describe(&Id::try_from(text.to_string()).unwrap()));
        out.push(describe(&from_bytes(id.as_bytes()).unwrap()));
        out.push(format!("{}", from_bytes(&[1, 2, 3]).is_err()));
        out.push(format!("{}", parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398g").is_err()));
        out.push(describe(&Id::from_bytes(*id.as_bytes())));
        out.push(describe(&Id::from_u128(0x017f22e2_79b0_7cc3_98c4_dc0c0c07398f)));
        out.push(describe(&Id::nil()));
        out.push(describe(&Id::max()));
        out.push(describe(&Id::default()));
        let u: Uuid = id.into();
        out.push(format!("{u} {}", by_handler(id)));
        let back: Id = Id::from(u);
        out.push(format!("{} {} {}", back == id, id == u, u == id));
        out.push(format!("{:?}", Id::try_from(u).map(|i| i.to_string()).ok()));
        out.push(format!("{:?}", id.get_timestamp().map(|t| t.to_unix())));
        out.push(format!("{:?} {:?}", id.into_bytes(), id.to_bytes_le()));
        let as_slice: &[u8] = id.as_ref();
        out.push(format!("{as_slice:?}"));
        let mut map: HashMap<Id, &str> = HashMap::new();
        map.insert(id, "order");
        out.push(format!("{:?}", map.get(&back)));
        let set: BTreeSet<Id> = [Id::max(), id, Id::nil()].into_iter().collect();
        out.push(format!("{set:?}"));
        out.push(format!("{:?}", Some(id)));
        #[derive(Debug)]
        #[allow(dead_code)]
        struct Row {
            id: Id,
            parent: Option<Id>,
        }
        out.push(format!("{:#?}", Row { id, parent: Some(id) }));
        out.push(format!("[{id:>40}] [{id:.8}] [{id:<40?}]"));
        let s: String = id.into();
        out.push(s);
        out.push(format!("{} {} {}", id < u, u > id, Id::nil() < u));
        let by_uuid: HashMap<Id, &str> = [(id, "found")].into_iter().collect();
        out.push(format!("{:?}", by_uuid.get(&u)));
        let as_uuid: &Uuid = id.as_ref();
        out.push(as_uuid.to_string());
        let fresh = Id::now_v7();
        let random = Id::new_v4();
        out.push(format!("{} {} {}", fresh.get_version_num(), random.get_version_num(), fresh != random));
        out
    }};
}

/// A test that compiles code written for `uuid::Uuid` with only the type changed to `$ty`,
/// and checks that it observes exactly what it observed with `uuid::Uuid`.
#[macro_export]
macro_rules! uuid_swap_test {
    ($ty:ty) => {
        #[test]
        fn code_written_for_uuid_compiles_and_runs_with_only_the_type_changed() {
            let with_uuid = {
                #[allow(dead_code)]
                type Id = $crate::uuid::Uuid;
                $crate::__uuid_code!()
            };
            let swapped = {
                #[allow(dead_code)]
                type Id = $ty;
                $crate::__uuid_code!()
            };
            assert_eq!(swapped, with_uuid);
        }
    };
}

/// A command (`combkey doctor ...`) running in the background, its standard error read line
/// by line, so that a test can wait for what it says while it runs.
pub struct Running {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Running {
    /// Starts `command`, its standard input and output null, its standard error read.
    pub fn start(command: &mut std::process::Command) -> Running {
        use std::io::BufRead;
        use std::process::Stdio;
        let mut child =
            command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("run the command");
        let err = child.stderr.take().expect("stderr");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Running { child, lines, seen: Vec::new() }
    }

    /// Waits (up to `limit`) for a line of standard error that contains every one of `words`.
    pub fn wait_for_line(&mut self, words: &[&str], limit: std::time::Duration) -> String {
        let started = std::time::Instant::now();
        loop {
            if let Some(l) = self.seen.iter().find(|l| words.iter().all(|w| l.contains(w))) {
                return l.clone();
            }
            let left = limit.saturating_sub(started.elapsed());
            match self.lines.recv_timeout(left.min(std::time::Duration::from_millis(500))) {
                Ok(l) => self.seen.push(l),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    assert!(
                        !left.is_zero(),
                        "no line with {words:?} within {limit:?}; stderr so far:\n{}",
                        self.seen.join("\n")
                    );
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    panic!("the command ended without a line with {words:?}; stderr:\n{}", self.seen.join("\n"))
                }
            }
        }
    }

    /// Waits (up to `limit`) for the command to end: whether it succeeded, and all of its
    /// standard error.
    pub fn finish(mut self, limit: std::time::Duration) -> (bool, String) {
        let started = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                while let Ok(l) = self.lines.recv_timeout(std::time::Duration::from_millis(200)) {
                    self.seen.push(l);
                }
                return (status.success(), self.seen.join("\n"));
            }
            if started.elapsed() > limit {
                let _ = self.child.kill();
                panic!("the command did not end within {limit:?}; stderr:\n{}", self.seen.join("\n"));
            }
            while let Ok(l) = self.lines.try_recv() {
                self.seen.push(l);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

/// The v6 id of the v1 id [`v1_id`] makes of the same arguments, as RFC 9562 section 5.6 lays
/// it out: the 60-bit time's high 32 bits, its middle 16, the version and its low 12, then
/// variant and clock sequence, then the node (the same bits as the v1 id, the time's fields in
/// the other order).
pub fn v6_id(ticks: i64, variant: u8, clock_seq: u16, node: [u8; 6]) -> combkey::Comb {
    let t = u64::try_from(ticks).expect("a time after 1582") & ((1 << 60) - 1);
    let mut b = [0u8; 16];
    b[0..4].copy_from_slice(&u32::try_from(t >> 28).expect("32 bits").to_be_bytes());
    b[4..6].copy_from_slice(&u16::try_from((t >> 12) & 0xffff).expect("16 bits").to_be_bytes());
    b[6] = 0x60 | u8::try_from((t >> 8) & 0x0f).expect("4 bits");
    b[7] = u8::try_from(t & 0xff).expect("8 bits");
    let cs = clock_seq.to_be_bytes();
    b[8] = variant | (cs[0] & 0x3f);
    b[9] = cs[1];
    b[10..16].copy_from_slice(&node);
    combkey::Comb::from_bytes(b)
}

/// A v1 id of `ticks` (100 ns since 1582-10-15), with the variant bits `variant` (`0x80`: RFC
/// 9562's), clock sequence `clock_seq` (14 bits) and `node`, laid out as RFC 9562 says: time
/// low, time mid, version and time high, then variant and clock sequence, then the node.
pub fn v1_id(ticks: i64, variant: u8, clock_seq: u16, node: [u8; 6]) -> combkey::Comb {
    let t = ticks.to_be_bytes();
    let mut b = [0u8; 16];
    b[0..4].copy_from_slice(&t[4..8]);
    b[4..6].copy_from_slice(&t[2..4]);
    b[6] = 0x10 | (t[0] & 0x0f);
    b[7] = t[1];
    let cs = clock_seq.to_be_bytes();
    b[8] = variant | (cs[0] & 0x3f);
    b[9] = cs[1];
    b[10..16].copy_from_slice(&node);
    combkey::Comb::from_bytes(b)
}
