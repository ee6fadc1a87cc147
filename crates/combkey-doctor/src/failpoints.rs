//! The kill, stop and hold points the tests put a run at (fail-rs's `failpoints` is the
//! model): each is read from a `COMBKEY_DOCTOR_*` environment variable, and only in a build
//! with the test-only `failpoints` feature. Without it (every published build) each point is
//! compiled out: no variable is read, and the variables' names are not in the binary.
//!
//! - `COMBKEY_DOCTOR_FAIL_AFTER_STEP=n`: the offline run stops (aborts, as a kill would) after
//!   its step `n`, counted from 0.
//! - `COMBKEY_DOCTOR_FAIL_AFTER_BATCH=n`: the in-place run stops after `n` batches committed.
//! - `COMBKEY_DOCTOR_FAIL_AFTER_PHASE=n`, `..._CHUNK=n`, and MariaDB's `..._THROUGH`,
//!   `..._RENAME`, `..._CLEANUP` (`=1`): the copy and swap stops after phase `n`, after `n`
//!   chunks of its copy, once the triggers write through, after its rename, after its work
//!   tables went.
//! - `COMBKEY_DOCTOR_HOLD_<WHAT>=dir`: the run writes `dir/held` where it reaches `what` and
//!   waits (a minute at most) for `dir/go`: MariaDB's copy and swap at `THROUGH_APPLY` (a
//!   logged row copied again under the write-through triggers) and `BEFORE_SWAP` (the copies
//!   have their foreign keys, the rename comes next).
//! - `COMBKEY_DOCTOR_FAIL_DEFINITIONS_CHECK`: the offline run's last check fails.
//! - `COMBKEY_DOCTOR_SQL_<WHAT>=statement`: the run executes `statement` (`{copy}` replaced by
//!   the copy's name) where it reaches `what`: PostgreSQL's copy and swap at `BEFORE_VERIFY`
//!   (the copy done, not yet compared with the table) and `AFTER_APPLY` (a batch of logged
//!   changes applied, not yet compared): a test corrupts a copied row there.

/// Where the run stops for a test: `what` names the point, `n` the count reached there; the
/// process aborts (no rollback, no clean-up) where `COMBKEY_DOCTOR_FAIL_AFTER_<what>` is `n`.
#[cfg(feature = "failpoints")]
pub(crate) fn stop_after(what: &str, n: i64) {
    let var = format!("COMBKEY_DOCTOR_FAIL_AFTER_{what}");
    if std::env::var(&var).ok().and_then(|v| v.parse::<i64>().ok()) == Some(n) {
        eprintln!("combkey doctor: stopping after {} {n} ({var})", what.to_lowercase());
        std::process::abort();
    }
}

/// Where the run stops for a test (compiled out: this build has no `failpoints` feature).
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub(crate) fn stop_after(_what: &str, _n: i64) {}

/// The count after which the run stops at `what` for a test (`COMBKEY_DOCTOR_FAIL_AFTER_<what>`).
#[cfg(feature = "failpoints")]
pub(crate) fn stop_at(what: &str) -> Option<i64> {
    std::env::var(format!("COMBKEY_DOCTOR_FAIL_AFTER_{what}")).ok().and_then(|v| v.parse().ok())
}

/// Whether the test asks the check `what` to fail (`COMBKEY_DOCTOR_FAIL_<what>` set).
#[cfg(feature = "failpoints")]
pub(crate) fn fail(what: &str) -> bool {
    std::env::var_os(format!("COMBKEY_DOCTOR_FAIL_{what}")).is_some()
}

/// The statement a test has the run execute at `what` (`COMBKEY_DOCTOR_SQL_<what>`).
#[cfg(feature = "failpoints")]
pub(crate) fn sql(what: &str) -> Option<String> {
    std::env::var(format!("COMBKEY_DOCTOR_SQL_{what}")).ok()
}

/// Holds the run where it reaches `what` while a test acts: with `COMBKEY_DOCTOR_HOLD_<WHAT>=dir`,
/// writes `dir/held` and waits until `dir/go` exists (a minute at most).
#[cfg(feature = "failpoints")]
pub(crate) async fn hold(what: &str) {
    let Ok(dir) = std::env::var(format!("COMBKEY_DOCTOR_HOLD_{what}")) else { return };
    let dir = std::path::Path::new(&dir);
    let _ = std::fs::write(dir.join("held"), what);
    let started = std::time::Instant::now();
    while !dir.join("go").exists() && started.elapsed() < std::time::Duration::from_secs(60) {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// Holds the run for a test (never: no `failpoints` feature).
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub(crate) async fn hold(_what: &str) {}

/// Stops the process as a kill would, saying where, for a test.
#[cfg(feature = "failpoints")]
pub(crate) fn abort(said: &str) -> ! {
    eprintln!("combkey doctor: {said}");
    std::process::abort();
}
