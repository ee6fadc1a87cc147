//! Connection URLs: read strictly, shown only without their password.
//!
//! A URL is read before anything connects, and only in one of the forms the drivers document:
//! `postgres://` or `postgresql://` (libpq's connection URI), `mysql://` or `mariadb://` (the
//! MySQL Connector's URI), `sqlite:`. A typo such as `postgres//`, `mysql:/` or a missing scheme
//! is refused, naming the expected forms: a driver given such a string reads it some other way
//! and connects to a default server under a made-up user or database (libpq's and sqlx's
//! parsers both do).
//!
//! Whatever the input, a message shows a URL only through [`redact`], which hides the password
//! of the user info (`user:password@`) and of a `password=` parameter, also in a string that is
//! no URL at all (a missing colon, no scheme, a password with an unescaped `/` or `@`, libpq's
//! keyword/value form `host=h password=...`, ADO.NET's `Password=...;`): where it cannot tell
//! what is the password it hides more, never less.

use std::fmt;

use combkey::Backend;

use crate::error::Error;

/// How long a connection may take to be made, by default.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The forms a URL may take, as an error says them.
const EXPECTED: &str = "expected postgres://USER@HOST:PORT/DATABASE (or postgresql://), \
                        mysql://USER@HOST:PORT/DATABASE (MySQL or MariaDB; or mariadb://) or sqlite:PATH \
                        (SQL Server: not yet)";

/// A database URL, read strictly: its backend, and how to show it. [`fmt::Display`] and
/// [`fmt::Debug`] show it with its password replaced by `***`.
///
/// # Examples
///
/// ```
/// use combkey_doctor::DatabaseUrl;
///
/// let url = DatabaseUrl::parse("mysql://app@db.example:3306/shop")?.with_password("s3cret");
/// assert_eq!(url.to_string(), "mysql://app:***@db.example:3306/shop");
///
/// // A typo is refused before any connection, and the message hides the password.
/// let err = DatabaseUrl::parse("mysql:/app:s3cret@db.example:3306/shop").unwrap_err();
/// assert!(err.to_string().starts_with("mysql:/app:***@db.example:3306/shop: "));
/// # Ok::<(), combkey_doctor::Error>(())
/// ```
#[derive(Clone)]
pub struct DatabaseUrl {
    backend: Backend,
    /// The URL as given (the drivers read it).
    text: String,
    /// The URL with its password replaced by `***`.
    shown: String,
    /// How long a connection may take to be made (the TCP connection, TLS, the login).
    connect_timeout: std::time::Duration,
    /// The forms of the password to strip from any message (as written, and percent-decoded).
    secrets: Vec<String>,
}

impl DatabaseUrl {
    /// Reads `url`, refusing (an [`ErrorKind::Usage`](crate::ErrorKind::Usage) error that
    /// shows the URL without its password) one that is not in a form this tool reads:
    /// `postgres://` or `postgresql://`, `mysql://` or `mariadb://` with a host, `sqlite:`.
    pub fn parse(url: &str) -> Result<DatabaseUrl, Error> {
        let (shown, secrets) = redact(url);
        let refuse = |why: &str| Error::usage(format!("{shown}: {why}: {EXPECTED}; nothing was connected to"));
        // libpq's keyword/value form (`host=h dbname=d`), ADO.NET's or ODBC's (`Server=h;...`): no URL.
        let first = url.trim_start().split(['=', ' ', ';']).next().unwrap_or_default();
        if !url.contains("://")
            && url.contains('=')
            && !first.is_empty()
            && first.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ' ')
            && url.trim_start()[first.len()..].trim_start().starts_with('=')
        {
            return Err(refuse(
                "a key=value connection string (libpq's or ADO.NET's), not a URL: give its parts as a URL \
                 (postgres://USER@HOST:PORT/DATABASE; a password through PGPASSWORD, ~/.pgpass, ~/.my.cnf or --ask-pass)",
            ));
        }
        if url.chars().any(char::is_whitespace) {
            return Err(refuse("a space in it (a URL has none; percent-encode one in a password as %20)"));
        }
        let Some((scheme, rest)) = url.split_once(':') else { return Err(refuse("not a database URL")) };
        let backend = match scheme.to_ascii_lowercase().as_str() {
            "postgres" | "postgresql" => Backend::Postgres,
            "mysql" | "mariadb" => Backend::MySql,
            "sqlite" => Backend::Sqlite,
            _ if scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c)) && !scheme.is_empty() => {
                return Err(refuse(&format!("a URL of no database this tool knows ({scheme})")));
            }
            _ => return Err(refuse("not a database URL")),
        };
        if backend == Backend::Sqlite {
            if rest.is_empty() {
                return Err(refuse("no SQLite database named"));
            }
            return Ok(DatabaseUrl {
                backend,
                text: url.to_string(),
                shown,
                secrets,
                connect_timeout: CONNECT_TIMEOUT,
            });
        }
        if !rest.starts_with("//") {
            return Err(refuse(&format!("a {scheme} URL needs {scheme}:// (two slashes before the user and host)")));
        }
        let parsed = ::url::Url::parse(url).map_err(|e| {
            refuse(&format!(
                "not a URL ({e}; percent-encode a `/`, `?`, `#` or `@` in a password as %2F, %3F, %23, %40)"
            ))
        })?;
        if backend == Backend::MySql && parsed.query_pairs().any(|(k, _)| k.eq_ignore_ascii_case("password")) {
            return Err(refuse(
                "a password= parameter, which the MySQL/MariaDB driver does not read (it would log in with no password): \
                 give it in the user info (USER:PASSWORD@), in ~/.my.cnf or --defaults-file, or with --ask-pass",
            ));
        }
        if parsed.host_str().unwrap_or_default().is_empty() {
            // libpq's `postgresql:///db?host=/socket/dir` is the one form without a host; a
            // `postgres:///u:pw@h/db` typo would reach a default server otherwise.
            let socket = parsed.query_pairs().any(|(k, v)| k == "host" && !v.is_empty());
            if backend == Backend::MySql || !socket {
                return Err(refuse("no host (after the two slashes: USER@HOST, or a host= parameter for a socket)"));
            }
        }
        // The database is one name: a `@`, `:` or `/` in it is a typo (a user, a port or a
        // password fell into the path), not a database anyone named.
        let database = parsed.path().strip_prefix('/').unwrap_or(parsed.path());
        let database = percent_encoding::percent_decode_str(database).decode_utf8_lossy();
        if database.contains(['@', '/']) || (database.contains(':') && parsed.host_str().unwrap_or_default().is_empty())
        {
            return Err(refuse(&format!("a database name with `@`, `:` or `/` in it ({})", redact(&database).0)));
        }
        Ok(DatabaseUrl { backend, text: url.to_string(), shown, secrets, connect_timeout: CONNECT_TIMEOUT })
    }

    /// The database the URL names.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Whether the URL has a password (in its user info or as a `password=` parameter).
    pub fn has_password(&self) -> bool {
        !self.secrets.is_empty()
    }

    /// The user the URL names, if any (percent-decoded).
    pub fn user(&self) -> Option<String> {
        let parsed = ::url::Url::parse(&self.text).ok()?;
        let user = percent_encoding::percent_decode_str(parsed.username()).decode_utf8_lossy().into_owned();
        (!user.is_empty()).then_some(user)
    }

    /// The same URL with `user` as its user, where it names none (PostgreSQL and MySQL/MariaDB
    /// URLs; a SQLite URL is returned as it is).
    pub fn with_user(self, user: &str) -> DatabaseUrl {
        if self.user().is_some() || self.backend == Backend::Sqlite {
            return self;
        }
        let Ok(mut parsed) = ::url::Url::parse(&self.text) else { return self };
        if parsed.set_username(user).is_err() {
            return self;
        }
        self.replaced(parsed.as_str())
    }

    /// The same URL with `password` as its password, where it has none (PostgreSQL and
    /// MySQL/MariaDB URLs; a SQLite URL is returned as it is). The password is percent-encoded
    /// into the URL and hidden wherever the URL or a message about it is shown.
    pub fn with_password(self, password: &str) -> DatabaseUrl {
        if self.has_password() || self.backend == Backend::Sqlite || password.is_empty() {
            return self;
        }
        let Ok(mut parsed) = ::url::Url::parse(&self.text) else { return self };
        if parsed.set_password(Some(password)).is_err() {
            return self;
        }
        let mut url = self.replaced(parsed.as_str());
        url.secrets.push(password.to_string());
        url
    }

    /// The same URL with `timeout` as the longest a connection to it may take to be made
    /// (default 30 s): a server that takes the TCP connection and never answers, or a firewall
    /// that drops packets, ends the run with a connection error then instead of hanging.
    pub fn with_connect_timeout(mut self, timeout: std::time::Duration) -> DatabaseUrl {
        self.connect_timeout = timeout;
        self
    }

    /// How long a connection may take to be made.
    pub(crate) fn connect_timeout(&self) -> std::time::Duration {
        self.connect_timeout
    }

    /// The URL as text, password included: to hand to a driver, never to show.
    pub fn expose_secret(&self) -> &str {
        &self.text
    }

    /// This URL with `text` as its text (a form [`DatabaseUrl::parse`] read already).
    fn replaced(&self, text: &str) -> DatabaseUrl {
        let (shown, secrets) = redact(text);
        DatabaseUrl {
            backend: self.backend,
            text: text.to_string(),
            shown,
            secrets,
            connect_timeout: self.connect_timeout,
        }
    }

    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The URL with its password replaced by `***`.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// `message` with every form of the URL's password replaced by `***`, and any URL in it
    /// redacted.
    pub(crate) fn scrub(&self, message: &str) -> String {
        scrub(message, &self.secrets)
    }
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DatabaseUrl").field(&self.shown).finish()
    }
}

impl std::str::FromStr for DatabaseUrl {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        DatabaseUrl::parse(s)
    }
}

/// `message` with each of `secrets` replaced by `***` (longest first, so a secret that holds
/// another goes whole).
pub(crate) fn scrub(message: &str, secrets: &[String]) -> String {
    let mut secrets: Vec<&String> = secrets.iter().filter(|s| !s.is_empty()).collect();
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut out = message.to_string();
    for s in secrets {
        out = if s.chars().count() >= SHORT { out.replace(s.as_str(), "***") } else { replace_word(&out, s) };
    }
    out
}

/// Secrets shorter than this are replaced only where they stand alone (not inside a word):
/// replacing every `a` of a message would show, by the gaps, that the password is `a`.
const SHORT: usize = 4;

/// `text` with each occurrence of `word` that no letter or digit touches replaced by `***`.
fn replace_word(text: &str, word: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(word) {
        let before = rest[..i].chars().next_back();
        let after = rest[i + word.len()..].chars().next();
        let alone = !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric);
        out.push_str(&rest[..i]);
        out.push_str(if alone { "***" } else { word });
        rest = &rest[i + word.len()..];
    }
    out.push_str(rest);
    out
}

/// `url` with its password replaced by `***`, and the password in the forms a message may show
/// it (as written and percent-decoded): the one in the user info (`user:password@`) and one
/// given as a query parameter (`?password=...`, which sqlx and libpq accept too). Any string is
/// taken, URL or not.
pub(crate) fn redact(url: &str) -> (String, Vec<String>) {
    let (mut shown, mut secrets) = redact_userinfo(url);
    if let Some(q) = shown.find('?') {
        let (head, query) = shown.split_at(q + 1);
        let parts: Vec<String> = query
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, v))
                    if (k.eq_ignore_ascii_case("password") || k.eq_ignore_ascii_case("sslpassword"))
                        && !v.is_empty() =>
                {
                    push_secret(&mut secrets, v);
                    format!("{k}=***")
                }
                _ => kv.to_string(),
            })
            .collect();
        shown = format!("{head}{}", parts.join("&"));
    }
    let (shown, more) = redact_keywords(&shown);
    for m in more {
        push_secret(&mut secrets, &m);
    }
    (shown, secrets)
}

/// `text` with the value of every `password=`, `passwd=`, `pwd=` or `sslpassword=` keyword
/// (any case, spaces around the `=`) replaced by `***`, and those values: libpq's keyword/value
/// strings (`host=h password=s3cret`, `password='it''s'`), ADO.NET's and ODBC's
/// (`Password=s3cret;`), which are no URL but are pasted as one. A value runs to the closing
/// quote where it opens with one (a backslash escaping a quote inside, as libpq reads it), else
/// to the next space, `;` or `&`.
fn redact_keywords(text: &str) -> (String, Vec<String>) {
    const KEYS: [&str; 4] = ["sslpassword", "password", "passwd", "pwd"];
    let lower = text.to_ascii_lowercase();
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut secrets = Vec::new();
    let mut i = 0;
    while i < text.len() {
        // A keyword that starts a word (not `mypassword=`), then `=`.
        let key = KEYS.iter().find(|k| {
            lower[i..].starts_with(*k) && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric() && bytes[i - 1] != b'_')
        });
        let Some(key) = key else {
            let c = text[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
            continue;
        };
        let mut j = i + key.len();
        while j < text.len() && bytes[j] == b' ' {
            j += 1;
        }
        if j >= text.len() || bytes[j] != b'=' {
            out.push_str(&text[i..i + key.len()]);
            i += key.len();
            continue;
        }
        j += 1;
        while j < text.len() && bytes[j] == b' ' {
            j += 1;
        }
        let start = j;
        let end = match bytes.get(j) {
            Some(&q) if q == b'\'' || q == b'"' => {
                let mut k = j + 1;
                while k < text.len() && bytes[k] != q {
                    k += if bytes[k] == b'\\' { 2 } else { 1 };
                }
                (k + 1).min(text.len())
            }
            _ => {
                let mut k = j;
                while k < text.len() && !matches!(bytes[k], b' ' | b';' | b'&' | b'\t' | b'\n') {
                    k += 1;
                }
                k
            }
        };
        // A value already hidden (`***`) is no secret.
        let value = &text[start..end];
        let bare = value.trim_matches(['\'', '"']);
        if !bare.is_empty() && bare != "***" {
            secrets.push(bare.to_string());
        }
        out.push_str(&text[i..start]);
        out.push_str(if value.is_empty() { "" } else { "***" });
        i = end;
    }
    (out, secrets)
}

fn push_secret(secrets: &mut Vec<String>, raw: &str) {
    secrets.push(raw.to_string());
    if let Ok(decoded) = percent_encoding::percent_decode_str(raw).decode_utf8()
        && decoded != raw
    {
        secrets.push(decoded.into_owned());
    }
}

/// `url` with the password of its user info replaced by `***`, and that password. The user
/// info is what comes before the last `@` after the scheme (`scheme://`, `scheme:/`,
/// `scheme:`, or none): a password with an unescaped `@` or `/` is hidden whole, and where the
/// string has an `@` further on (a parameter's value) more is hidden, never less.
fn redact_userinfo(url: &str) -> (String, Vec<String>) {
    let start = scheme_end(url);
    let scheme = url[..start].trim_end_matches('/').trim_end_matches(':').to_ascii_lowercase();
    // A SQLite URL is a file's path: it has no login to hide.
    if scheme == "sqlite" {
        return (url.to_string(), Vec::new());
    }
    let rest = &url[start..];
    // The user info ends before the query: a `?password=p@ss` is the query's (hidden below),
    // not the user info's. A `?` in a password typed unescaped leaves no `@` before it, and
    // everything after the user's colon is hidden then.
    let before_query = &rest[..rest.find('?').unwrap_or(rest.len())];
    let Some(at) = before_query.rfind('@') else { return redact_without_at(url, start) };
    let userinfo = &rest[..at];
    // After a scheme not followed by `//` that is none of the databases' (`u:pw@host` with no
    // scheme reads as scheme `u`), what looks like the user may be the password's first part:
    // the user info is hidden whole. So is user info without a colon after such a prefix.
    let known = matches!(scheme.as_str(), "postgres" | "postgresql" | "mysql" | "mariadb");
    let slashes = url[..start].ends_with("//");
    let colon = userinfo.find(':').filter(|_| slashes || known || start == 0);
    let Some(colon) = colon else {
        if start > 0 && !slashes && !userinfo.is_empty() {
            let mut secrets = Vec::new();
            push_secret(&mut secrets, userinfo);
            return (format!("{}***{}", &url[..start], &rest[at..]), secrets);
        }
        return (url.to_string(), Vec::new());
    };
    let password = &userinfo[colon + 1..];
    if password.is_empty() {
        return (url.to_string(), Vec::new());
    }
    let mut secrets = Vec::new();
    push_secret(&mut secrets, password);
    (format!("{}{}:***{}", &url[..start], &userinfo[..colon], &rest[at..]), secrets)
}

/// `url`, which has no `@`, with what may be a password hidden: a `user:password` where a
/// `host:port` belongs (a port that is not a number) is hidden from its colon to the end.
fn redact_without_at(url: &str, start: usize) -> (String, Vec<String>) {
    let rest = &url[start..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    // An IPv6 host's colons are inside its brackets.
    let from = if authority.starts_with('[') { authority.find(']').unwrap_or(authority.len()) } else { 0 };
    let Some(colon) = authority[from..].rfind(':').map(|c| c + from) else { return (url.to_string(), Vec::new()) };
    let port = &authority[colon + 1..];
    if port.chars().all(|c| c.is_ascii_digit()) {
        return (url.to_string(), Vec::new());
    }
    let mut secrets = Vec::new();
    push_secret(&mut secrets, &rest[colon + 1..]);
    (format!("{}***", &url[..start + colon + 1]), secrets)
}

/// Where the text after a scheme begins: after `scheme:` and any slashes following it, where
/// the string starts with a scheme (letters, then letters, digits, `+`, `.`, `-`); else 0.
fn scheme_end(url: &str) -> usize {
    let Some(colon) = url.find(':') else { return 0 };
    let scheme = &url[..colon];
    let is_scheme = scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c));
    if !is_scheme {
        return 0;
    }
    let after = &url[colon + 1..];
    colon + 1 + (after.len() - after.trim_start_matches('/').len())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PW: &str = "Sup3r-S3cret";

    #[test]
    fn well_formed_urls_show_no_password() {
        assert_eq!(
            redact("postgres://app:s3cr%40t@db.example:5432/prod?sslmode=require"),
            (
                "postgres://app:***@db.example:5432/prod?sslmode=require".into(),
                vec!["s3cr%40t".into(), "s3cr@t".into()]
            )
        );
        assert_eq!(redact("mysql://root@127.0.0.1:3306/test"), ("mysql://root@127.0.0.1:3306/test".into(), vec![]));
        assert!(redact("sqlite:/tmp/x.db").1.is_empty());
        assert_eq!(redact("mysql://u:p@ss@h/db"), ("mysql://u:***@h/db".into(), vec!["p@ss".to_string()]));
        assert_eq!(
            redact("postgres://nosuchuser@127.0.0.1:21811/test?sslmode=require&password=Sup3rS3cretPW").0,
            "postgres://nosuchuser@127.0.0.1:21811/test?sslmode=require&password=***"
        );
        assert_eq!(redact("mysql://root@h/db?PASSWORD=x").0, "mysql://root@h/db?PASSWORD=***");
        // An unescaped slash in the password: hidden whole.
        assert_eq!(redact("postgres://u:pa/ss@h/db").0, "postgres://u:***@h/db");
        // No `@`: a port that is no number may be a password.
        assert_eq!(redact("postgres://u:pa/ss").0, "postgres://u:***");
        assert_eq!(redact("postgres://h:5432/db").0, "postgres://h:5432/db");
        assert_eq!(redact("postgres://[::1]/db").0, "postgres://[::1]/db");
    }

    /// The typos of the issue that found the leak: each shown without its password, and
    /// refused before any connection.
    #[test]
    fn a_mistyped_url_is_refused_and_shows_no_password() {
        for url in [
            format!("postgres//u:{PW}@127.0.0.1:5432/test"),
            format!("u:{PW}@127.0.0.1:5432/test"),
            format!("mysql:/root:{PW}@127.0.0.1:3306/test"),
            format!("mysql:root:{PW}@127.0.0.1:3306/test"),
            format!("postgres:/u:{PW}@127.0.0.1:5432/test"),
            format!("postgres:u:{PW}@127.0.0.1:5432/test"),
            format!("postgresql:///u:{PW}@127.0.0.1:5432/test"),
            format!("mysql:///root:{PW}@127.0.0.1:3306/test"),
            format!("psql://u:{PW}@127.0.0.1:5432/test"),
            format!("http://u:{PW}@127.0.0.1:5432/test"),
            format!(" postgres://u:{PW}@127.0.0.1:5432/test"),
            format!("postgres://u:{PW}/x@127.0.0.1:5432/test"),
            format!("mysql://root:{PW}@/test"),
            format!("postgres://u:{PW}"),
            format!("postgres://u:{PW}@127.0.0.1:54x32/test"),
            format!("postgres://u:{PW}@127.0.0.1:5432/test "),
            format!("mysql://root@127.0.0.1:3306/test?password={PW}"),
        ] {
            let err = DatabaseUrl::parse(&url).err().unwrap_or_else(|| panic!("{url} was read"));
            let message = err.to_string();
            assert!(!message.contains(PW), "{url}: {message}");
            assert!(message.contains("expected postgres://"), "{url}: {message}");
            assert!(message.contains("nothing was connected to"), "{url}: {message}");
            assert!(!redact(&url).0.contains(PW), "{url}");
        }
    }

    #[test]
    fn the_forms_the_drivers_document_are_read() {
        for (url, backend) in [
            ("postgres://u:p@127.0.0.1:5432/test", Backend::Postgres),
            ("postgresql://u@db.example/test?sslmode=require", Backend::Postgres),
            ("postgres:///test?host=/var/run/postgresql", Backend::Postgres),
            ("postgres://[::1]:5432/test", Backend::Postgres),
            ("postgres://u:p%2Fq@h/db", Backend::Postgres),
            ("mysql://root@127.0.0.1:3306/test", Backend::MySql),
            ("mariadb://root:x@h/test", Backend::MySql),
            ("MySQL://root@h/test", Backend::MySql),
            ("mysql://u:p@ss@h/db", Backend::MySql),
            ("sqlite::memory:", Backend::Sqlite),
            ("sqlite:/tmp/x.db", Backend::Sqlite),
            ("sqlite://x.db?mode=rwc", Backend::Sqlite),
        ] {
            let read = DatabaseUrl::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(read.backend(), backend, "{url}");
            assert_eq!(read.text(), url);
        }
    }

    #[test]
    fn a_password_given_apart_is_encoded_and_hidden() {
        let url = DatabaseUrl::parse("mysql://app@h:3306/db").unwrap();
        assert!(!url.has_password());
        let url = url.with_password("p@ss/w:rd");
        assert!(url.has_password());
        assert_eq!(url.expose_secret(), "mysql://app:p%40ss%2Fw%3Ard@h:3306/db");
        assert_eq!(url.to_string(), "mysql://app:***@h:3306/db");
        assert_eq!(format!("{url:?}"), "DatabaseUrl(\"mysql://app:***@h:3306/db\")");
        assert_eq!(url.scrub("denied for p@ss/w:rd"), "denied for ***");
        // A password the URL has already is kept.
        let url = DatabaseUrl::parse("postgres://u:a@h/db").unwrap().with_password("b");
        assert_eq!(url.expose_secret(), "postgres://u:a@h/db");
        let url = DatabaseUrl::parse("mysql://h/db").unwrap().with_user("dba").with_password("x");
        assert_eq!(url.expose_secret(), "mysql://dba:x@h/db");
        assert_eq!(url.user().as_deref(), Some("dba"));
    }

    /// Found by a break-test: a `?password=` value with an `@`, a password with a `:` typed
    /// without a scheme, a short password that the scrubbing gave away by its gaps, a SQLite
    /// path taken for a login.
    #[test]
    fn what_a_break_test_found_shows_no_password() {
        let (shown, _) = redact("postgres://brk_u@127.0.0.1:12803/test?password=p@ssZq9word");
        assert_eq!(shown, "postgres://brk_u@127.0.0.1:12803/test?password=***");
        let (shown, _) = redact("mysql://u@h/db?application_name=x&password=a@Zq9");
        assert_eq!(shown, "mysql://u@h/db?application_name=x&password=***");
        assert_eq!(redact("u:QQpw:4x@127.0.0.1:12803/test").0, "u:***@127.0.0.1:12803/test");
        assert_eq!(redact("mysql:root:PW:x@h/db").0, "mysql:root:***@h/db");
        let url = DatabaseUrl::parse("postgres://u:a@h/db").unwrap();
        assert_eq!(url.scrub("error communicating with database: a"), "error communicating with database: ***");
        assert_eq!(redact("sqlite:u@127.0.0.1:39111/test"), ("sqlite:u@127.0.0.1:39111/test".into(), vec![]));
    }

    /// Found by a break-test: libpq's keyword/value strings (also in `DATABASE_URL`) were shown
    /// whole, password and all.
    #[test]
    fn keyword_value_strings_show_no_password() {
        for text in [
            format!("host=127.0.0.1 port=5432 user=postgres password={PW} dbname=nope"),
            format!("dbname=x password='{PW}'"),
            format!("dbname=x password = '{PW} with spaces'"),
            format!("host=h PASSWORD={PW}"),
            format!("Server=h;Database=d;User Id=u;Password={PW};"),
            format!("DSN=x;UID=u;PWD={PW}"),
            format!("host=h sslpassword={PW} password={PW}x"),
            format!("password=\"{PW}\" host=h"),
        ] {
            let err = DatabaseUrl::parse(&text).err().unwrap_or_else(|| panic!("{text} was read"));
            let message = err.to_string();
            assert!(!message.contains(PW), "{text}: {message}");
            assert!(message.contains("***"), "{text}: {message}");
            assert!(message.contains("nothing was connected to"), "{text}: {message}");
        }
        let e = DatabaseUrl::parse("host=h password=s3cret dbname=d").unwrap_err().to_string();
        assert!(e.contains("a key=value connection string"), "{e}");
        let e = DatabaseUrl::parse("Server=h;Database=d;Password=s3cret;").unwrap_err().to_string();
        assert!(e.contains("a key=value connection string") && !e.contains("s3cret"), "{e}");
        assert_eq!(redact("host=h password=s3cret dbname=d").0, "host=h password=*** dbname=d");
        assert_eq!(redact("dbname=x password='a b'").0, "dbname=x password=***");
        // Not a keyword: the word goes on before it.
        assert_eq!(redact("mypassword=x").0, "mypassword=x");
        let (_, secrets) = redact("host=h password=s3cret");
        assert_eq!(secrets, ["s3cret"]);
    }

    #[test]
    fn a_message_loses_every_form_of_the_password() {
        let url = DatabaseUrl::parse("postgres://app:p%40ss%2Fw@h/db").unwrap();
        assert_eq!(
            url.scrub("password authentication failed: p@ss/w and p%40ss%2Fw"),
            "password authentication failed: *** and ***"
        );
        assert_eq!(url.shown(), "postgres://app:***@h/db");
    }
}
