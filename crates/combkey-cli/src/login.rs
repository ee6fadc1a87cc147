//! Where `combkey doctor`'s database URL and its password come from, as each database's own
//! clients take them:
//!
//! - the URL: `--url`, else `DATABASE_URL` (the habit of sqlx-cli, diesel's CLI and
//!   sea-orm-cli);
//! - PostgreSQL's password: the URL, else `PGPASSWORD`, `PGPASSFILE` or `~/.pgpass` (read by the
//!   driver, as libpq reads them);
//! - MySQL/MariaDB's: the URL, else the `[client]` section of `~/.my.cnf` or of the file
//!   `--defaults-file` names (as the `mysql` client, pt-online-schema-change's `F=` and gh-ost's
//!   `--conf` read it);
//! - either: `--ask-pass`, a prompt on the terminal that does not echo (as
//!   pt-online-schema-change and gh-ost ask).
//!
//! A password on the command line is seen by every user of the machine in the process list:
//! these other ways keep it out of there. Nothing here prints a password.

use std::io::IsTerminal;
use std::path::PathBuf;

use combkey::Backend;
use combkey_doctor::DatabaseUrl;

/// How to find the password of a URL that has none.
#[derive(Debug, Default)]
pub(crate) struct Login {
    /// `--ask-pass`: prompt on the terminal.
    pub(crate) ask_pass: bool,
    /// `--defaults-file`: the MySQL option file to read instead of `~/.my.cnf`.
    pub(crate) defaults_file: Option<PathBuf>,
    /// The password typed at the prompt, asked once for every URL of the run.
    asked: Option<String>,
}

impl Login {
    pub(crate) fn new(ask_pass: bool, defaults_file: Option<PathBuf>) -> Login {
        Login { ask_pass, defaults_file, asked: None }
    }

    /// The URL to connect to: `given` (`--url`), else `DATABASE_URL`; read strictly (a typo
    /// is refused before any connection, the message showing no password), then given its
    /// password where it has none.
    pub(crate) fn database_url(&mut self, given: Option<&str>) -> Result<DatabaseUrl, String> {
        let text = match given {
            Some(url) => url.to_string(),
            None => match std::env::var("DATABASE_URL") {
                Ok(url) if !url.trim().is_empty() => url,
                _ => return Err("no database: give --url URL, or set DATABASE_URL".into()),
            },
        };
        let url = DatabaseUrl::parse(&text).map_err(|e| e.to_string())?;
        self.complete(url)
    }

    /// `url` read strictly and given its password where it has none (a `--replica-url`).
    pub(crate) fn url(&mut self, text: &str) -> Result<DatabaseUrl, String> {
        let url = DatabaseUrl::parse(text).map_err(|e| e.to_string())?;
        self.complete(url)
    }

    fn complete(&mut self, mut url: DatabaseUrl) -> Result<DatabaseUrl, String> {
        if url.has_password() || url.backend() == Backend::Sqlite {
            return Ok(url);
        }
        if url.backend() == Backend::MySql {
            let file = match &self.defaults_file {
                Some(file) => Some((file.clone(), true)),
                None => home().map(|h| (h.join(".my.cnf"), false)),
            };
            if let Some((file, named)) = file {
                let client = match std::fs::read_to_string(&file) {
                    // As MySQL's clients do: a file anyone may write is not trusted with the login.
                    Ok(_) if world_writable(&file) => {
                        say!(
                            "combkey doctor: ignoring {}: anyone may write to it (as the mysql client does; chmod 600 it)",
                            file.display()
                        );
                        Client::default()
                    }
                    Ok(text) => client_section(&text),
                    Err(e) if !named && e.kind() == std::io::ErrorKind::NotFound => Client::default(),
                    Err(e) => return Err(format!("reading the MySQL option file {}: {e}", file.display())),
                };
                if let Some(user) = &client.user {
                    url = url.with_user(user);
                }
                if let Some(password) = &client.password {
                    url = url.with_password(password);
                }
            }
        }
        if self.ask_pass && !url.has_password() {
            let password = match &self.asked {
                Some(p) => p.clone(),
                None => {
                    let p = ask(&url)?;
                    self.asked = Some(p.clone());
                    p
                }
            };
            url = url.with_password(&password);
        }
        Ok(url)
    }
}

/// The password typed at a prompt on the terminal, not echoed.
fn ask(url: &DatabaseUrl) -> Result<String, String> {
    if !std::io::stdin().is_terminal() {
        return Err("--ask-pass: standard input is not a terminal, so there is no one to ask; give the password \
                    another way (PGPASSWORD or ~/.pgpass for PostgreSQL, ~/.my.cnf or --defaults-file for \
                    MySQL/MariaDB)"
            .into());
    }
    let read = with_sigint_ignored(|| rpassword::prompt_password(format!("Password for {url}: ")));
    match read {
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
            Err("--ask-pass: interrupted at the password prompt (Ctrl-C); nothing was connected to".into())
        }
        other => other.map_err(|e| format!("--ask-pass: reading the password: {e}")),
    }
}

/// Runs `f` with SIGINT ignored. rpassword turns the terminal's signal keys off while it reads
/// and, at Ctrl-C, raises SIGINT itself before it puts the terminal back (7.5): the process died
/// with its terminal left without echo. With SIGINT ignored the raise returns, rpassword puts the
/// terminal back, and the prompt returns `Interrupted`.
fn with_sigint_ignored<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: `signal` with `SIG_IGN` and then with the disposition it returned changes only
    // this process's disposition of SIGINT; no handler function of ours is installed.
    let previous = unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    let out = f();
    if previous != libc::SIG_ERR {
        // SAFETY: as above, the disposition `signal` returned before.
        unsafe { libc::signal(libc::SIGINT, previous) };
    }
    out
}

/// Whether others than its owner may write to `file`.
fn world_writable(file: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(file).is_ok_and(|m| m.permissions().mode() & 0o002 != 0)
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// What a MySQL option file's `[client]` section says of the login.
#[derive(Debug, Default, PartialEq, Eq)]
struct Client {
    user: Option<String>,
    password: Option<String>,
}

/// The `user` and `password` of the `[client]` sections of a MySQL option file, by the rules
/// of MySQL's "Using Option Files": `#` and `;` start a comment line, `[group]` names are not
/// case sensitive, a name's `-` and `_` are the same, a value may be quoted ('...' or "..."),
/// `\n`, `\t`, `\r`, `\b`, `\s` (space) and `\\` are escapes, and a later line overrides an
/// earlier one. `!include` lines are not followed.
fn client_section(text: &str) -> Client {
    let mut client = Client::default();
    let mut in_client = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') || line.starts_with('!') {
            continue;
        }
        if let Some(group) = line.strip_prefix('[') {
            let name = group.split(']').next().unwrap_or_default().trim();
            in_client = name.eq_ignore_ascii_case("client");
            continue;
        }
        if !in_client {
            continue;
        }
        let (name, value) = match line.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v.trim())),
            None => (line, None),
        };
        let name = name.to_ascii_lowercase().replace('-', "_");
        match (name.as_str(), value) {
            ("user", Some(v)) => client.user = Some(option_value(v)),
            ("password", Some(v)) => client.password = Some(option_value(v)),
            _ => {}
        }
    }
    client
}

/// An option file's value as MySQL's `my_default.cc` reads it: a `#` outside quotes starts a
/// comment, a value quoted with `'` or `"` at both ends loses its quotes, and `\n`, `\t`,
/// `\r`, `\b`, `\s` (a space), `\"`, `\'` and `\\` are escapes.
fn option_value(v: &str) -> String {
    // The comment, outside quotes (an escaped character skipped).
    let mut end = v.len();
    let mut quote: Option<char> = None;
    let mut chars = v.char_indices();
    while let Some((i, c)) = chars.next() {
        match (c, quote) {
            ('\\', _) => {
                chars.next();
            }
            ('\'' | '"', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            ('#', None) => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let mut body = v[..end].trim();
    if body.len() >= 2 && (body.starts_with('"') || body.starts_with('\'')) && body.ends_with(&body[..1]) {
        body = &body[1..body.len() - 1];
    }
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('s') => out.push(' '),
            Some(c @ ('\\' | '"' | '\'')) => out.push(c),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_section_is_read_as_mysql_reads_it() {
        let text = "# a comment\n[mysqld]\npassword=not-this\n[Client]\nuser = dba\npassword=\"p@ss #1\"\n\
                    [mysql]\npassword=nor-this\n";
        assert_eq!(client_section(text), Client { user: Some("dba".into()), password: Some("p@ss #1".into()) });
        let text = "[client]\npassword=first\n[client]\npassword = sec\\sret # the comment\nhost=db\n";
        assert_eq!(client_section(text).password.as_deref(), Some("sec ret"));
        assert_eq!(client_section("[client]\npassword='a\\\\b'\n").password.as_deref(), Some("a\\b"));
        assert_eq!(client_section("[client]\nskip-password\n"), Client::default());
        assert_eq!(client_section("[client]\npassword=\"a \\\"#1\" # note\n").password.as_deref(), Some("a \"#1"));
        assert_eq!(client_section("[client]\npassword=a#b\n").password.as_deref(), Some("a"));
        assert_eq!(client_section("password=outside\n"), Client::default());
    }
}
