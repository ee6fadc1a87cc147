//! The online run's throttle: before each batch it waits while the server is busier than
//! allowed (sessions waiting for locks) or a replica lags more than `--max-lag`. It fails
//! closed, as pt-online-schema-change does: a lag it cannot read (a replica whose SQL thread
//! stopped, a standby that is not streaming, a replication slot nobody uses) is not taken for
//! no lag, so the run waits and says why. Each replica gets one connection for the whole run,
//! made before anything changes: a URL that is no replica is refused then.

use std::time::{Duration, Instant};

use crate::catalog::{Catalog, ReplicaLag};
use crate::db::{Db, redact};
use crate::error::Error;
use crate::options::{Online, Progress};

/// How often a wait that goes on is reported again.
const REPORT_EVERY: Duration = Duration::from_secs(30);

pub(crate) struct Throttle {
    /// Each replica: its URL, as shown (no password), and the connection to it (`None` after
    /// it was lost: made again at the next check).
    replicas: Vec<Replica>,
    pause_when_busy: Option<i64>,
    max_lag: Option<Duration>,
}

/// One `--replica-url`.
struct Replica {
    url: String,
    shown: String,
    db: Option<Db>,
}

impl Throttle {
    /// Connects to every replica once, and refuses (before anything changes) a URL that is
    /// no replica.
    /// Refuses too, before anything changes, a `--max-lag` that nothing could hold: on a
    /// server that does not know its replicas' lag (a MySQL/MariaDB primary) without a
    /// `--replica-url`, the run would go unthrottled while the user asked for a bound.
    pub(crate) async fn connect(online: &Online, primary: &dyn Catalog) -> Result<Throttle, Error> {
        if let Some(lag) = online.max_lag
            && online.replica_urls.is_empty()
            && primary.replication_lag().is_none()
        {
            return Err(Error::refused(format!(
                "--max-lag {} s: a {} primary does not know how far its replicas are behind, so nothing could hold the run to that bound; give each replica as --replica-url (its lag is read there), or leave out --max-lag. Nothing was changed",
                lag.as_secs_f64(),
                primary.backend().name()
            )));
        }
        let mut replicas = Vec::new();
        for url in &online.replica_urls {
            let shown = redact(url).0;
            let mut replica = Db::connect(url).await?;
            let cat = replica.catalog()?;
            let (names, rows) = replica.rows_named(cat.replica_status()).await?;
            if cat.read_replica(&names, &rows) == ReplicaLag::NotAReplica {
                return Err(Error::refused(format!(
                    "--replica-url {shown} is no replica (no MySQL/MariaDB replication source; on PostgreSQL not in \
                     recovery), so its lag means nothing; give the URL of each replica or standby behind this primary \
                     (a PostgreSQL logical subscriber's lag is read on the primary, through its replication slot, \
                     without a URL); nothing was changed"
                )));
            }
            replicas.push(Replica { url: url.clone(), shown, db: Some(replica) });
        }
        if online.max_lag.is_none() && !replicas.is_empty() {
            return Err(Error::usage(
                "--replica-url needs --max-lag: the lag each replica may reach before a batch waits",
            ));
        }
        Ok(Throttle { replicas, pause_when_busy: online.pause_when_busy, max_lag: online.max_lag })
    }

    /// Why the next batch must wait now (empty: it may go).
    async fn reasons(&mut self, db: &mut Db, cat: &dyn Catalog) -> Result<Vec<String>, Error> {
        let mut why = Vec::new();
        if let (Some(limit), Some(q)) = (self.pause_when_busy, cat.lock_waiters()) {
            let n = db.query(q).await?;
            if n >= limit {
                why.push(format!("{n} sessions wait for locks (--pause-when-busy {limit})"));
            }
        }
        let Some(max) = self.max_lag else { return Ok(why) };
        if let Some(q) = cat.replication_lag() {
            let lag = db.query(q).await?;
            if lag > max.as_secs_f64() {
                why.push(format!(
                    "a standby or subscriber is {lag:.1} s behind, or has WAL to replay and has not replied for that \
                     long (--max-lag {} s)",
                    max.as_secs_f64()
                ));
            }
        }
        if let Some(q) = cat.unread_replication() {
            why.extend(db.query(q).await?);
        }
        for r in &mut self.replicas {
            let shown = &r.shown;
            // A connection lost (the replica restarted) is made again; while it cannot be,
            // the lag is unknown and the run waits.
            if r.db.is_none() {
                r.db = Db::connect(&r.url).await.ok();
            }
            let Some(replica) = r.db.as_mut() else {
                why.push(format!("replica {shown} cannot be reached: its lag cannot be read"));
                continue;
            };
            let rcat = replica.catalog()?;
            let (names, rows) = match replica.rows_named(rcat.replica_status()).await {
                Ok(answer) => answer,
                Err(e) => {
                    r.db = None;
                    why.push(format!("replica {shown} did not answer ({e}): its lag cannot be read"));
                    continue;
                }
            };
            match rcat.read_replica(&names, &rows) {
                ReplicaLag::Behind(s) if s > max.as_secs_f64() => {
                    why.push(format!("replica {shown} is {s:.1} s behind (--max-lag {} s)", max.as_secs_f64()));
                }
                ReplicaLag::Behind(_) => {}
                ReplicaLag::Unknown(reason) => {
                    why.push(format!("replica {shown}: its lag cannot be read: {reason}"));
                }
                ReplicaLag::NotAReplica => {
                    why.push(format!("{shown} is no longer a replica: its lag cannot be read"));
                }
            }
        }
        Ok(why)
    }

    /// Waits until the next batch may go; the time waited. Says why it waits (at once, when the
    /// reason changes, and every 30 s).
    pub(crate) async fn wait(&mut self, db: &mut Db, progress: &mut dyn Progress) -> Result<Duration, Error> {
        let cat = db.catalog()?;
        let started = Instant::now();
        let mut delay = Duration::from_millis(50);
        let mut said: Option<(Vec<String>, Instant)> = None;
        loop {
            let why = self.reasons(db, cat).await?;
            if why.is_empty() {
                return Ok(started.elapsed());
            }
            let again = said.as_ref().is_none_or(|(w, at)| *w != why || at.elapsed() >= REPORT_EVERY);
            if again {
                progress.waiting(&why.join("; "), started.elapsed());
                said = Some((why, Instant::now()));
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(2));
        }
    }
}
