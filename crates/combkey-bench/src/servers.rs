//! `--own-servers`: throwaway PostgreSQL and MariaDB servers with small caches, so the index
//! outgrows the cache at a size a 2-core machine inserts in minutes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A server this process started; stopped and deleted on drop.
pub(crate) struct OwnServer {
    pub(crate) url: String,
    dir: PathBuf,
    stop: Vec<String>,
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        if let Some((cmd, args)) = self.stop.split_first() {
            let _ = Command::new(cmd).args(args).status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn run(cmd: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(cmd).args(args).output().map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd} {}: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Polls `probe` until it succeeds (a readiness check, not a sleep), for up to 60 s.
async fn wait_ready(what: &str, probe: impl Fn() -> bool) -> Result<(), String> {
    for _ in 0..240 {
        if probe() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    Err(format!("{what} did not become ready"))
}

fn pg_bin(name: &str) -> Result<PathBuf, String> {
    let base = Path::new("/usr/lib/postgresql");
    let mut versions: Vec<PathBuf> = std::fs::read_dir(base)
        .map_err(|e| format!("{}: {e} (is PostgreSQL installed?)", base.display()))?
        .flatten()
        .map(|e| e.path())
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|v| v.join("bin").join(name))
        .ok_or_else(|| "no PostgreSQL under /usr/lib/postgresql".to_string())
}

/// A PostgreSQL cluster in a temporary directory, `shared_buffers=16MB`, on `port`.
pub(crate) async fn postgres(port: u16) -> Result<OwnServer, String> {
    let dir = std::env::temp_dir().join(format!("combkey-bench-pg-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let d = dir.display().to_string();
    // initdb refuses to run as root: run the server as the postgres user.
    run("chown", &["postgres", &d])?;
    let initdb = pg_bin("initdb")?.display().to_string();
    let pg_ctl = pg_bin("pg_ctl")?.display().to_string();
    let as_postgres = |args: &[&str]| -> Result<(), String> {
        let mut all = vec!["-u", "postgres", "--"];
        all.extend_from_slice(args);
        run("runuser", &all)
    };
    as_postgres(&[&initdb, "-D", &format!("{d}/data"), "-A", "trust", "-U", "postgres", "--no-sync"])?;
    let opts = format!("-p {port} -c shared_buffers=16MB -c listen_addresses=127.0.0.1 -c unix_socket_directories={d}");
    as_postgres(&[&pg_ctl, "-D", &format!("{d}/data"), "-o", &opts, "-l", &format!("{d}/log"), "start"])?;
    let server = OwnServer {
        url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
        dir: dir.clone(),
        stop: vec![
            "runuser".into(),
            "-u".into(),
            "postgres".into(),
            "--".into(),
            pg_ctl,
            "-D".into(),
            format!("{d}/data"),
            "-m".into(),
            "fast".into(),
            "stop".into(),
        ],
    };
    let isready = pg_bin("pg_isready")?;
    wait_ready("PostgreSQL", || {
        Command::new(&isready).args(["-h", "127.0.0.1", "-p", &port.to_string()]).status().is_ok_and(|s| s.success())
    })
    .await?;
    Ok(server)
}

/// A MariaDB server in a temporary directory, `innodb_buffer_pool_size=6MB`, on `port`.
pub(crate) async fn mariadb(port: u16) -> Result<OwnServer, String> {
    let dir = std::env::temp_dir().join(format!("combkey-bench-mariadb-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let d = dir.display().to_string();
    run("chown", &["mysql", &d])?;
    run(
        "mariadb-install-db",
        &[
            "--no-defaults",
            &format!("--datadir={d}/data"),
            "--user=mysql",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
        ],
    )?;
    let sock = format!("{d}/mysqld.sock");
    std::process::Command::new("mariadbd")
        .args([
            "--no-defaults",
            &format!("--datadir={d}/data"),
            &format!("--port={port}"),
            &format!("--socket={sock}"),
            "--bind-address=127.0.0.1",
            "--user=mysql",
            "--innodb-buffer-pool-size=6M",
            &format!("--pid-file={d}/mysqld.pid"),
            &format!("--log-error={d}/error.log"),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("mariadbd: {e}"))?;
    let mut server = OwnServer {
        url: format!("mysql://root@127.0.0.1:{port}/mysql"),
        dir,
        stop: vec!["mariadb-admin".into(), format!("--socket={sock}"), "-uroot".into(), "shutdown".into()],
    };
    wait_ready("MariaDB", || {
        Command::new("mariadb-admin")
            .args([&format!("--socket={sock}"), "-uroot", "ping"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
    .await?;
    run("mariadb", &[&format!("--socket={sock}"), "-uroot", "-e", "CREATE DATABASE IF NOT EXISTS bench"])?;
    server.url = format!("mysql://root@127.0.0.1:{port}/bench");
    Ok(server)
}
