//! Apache httpd (Debian's `apache2`) as a peer: a whole configuration written
//! into the run's temporary directory (its own ServerRoot, port, pid file, lock
//! files and logs, so that no system instance or system file is ever used), one
//! MPM with 4 request threads (event, worker) or 4 processes (prefork), and a
//! mod_lua handler at [`BURN_PATH`] that burns CPU for an exponentially
//! distributed time with mean [`BURN_MEAN_MS`].
//!
//! The handler burns by an iteration count, not by a clock: Lua has no thread
//! CPU clock, and `os.clock()` is the whole process's CPU, which in a threaded
//! MPM also advances while the other threads run. Each Lua state (`LuaScope
//! thread`: one per request thread, kept) calibrates its loop once, on its
//! first request, as the fastest of 20 short samples timed with `os.clock()`:
//! the server is pinned to one CPU, so a sample that no other thread
//! interrupted times this thread alone, and an interrupted one only looks
//! slower. A burn is then a count of iterations, which preemption does not
//! shorten.
//!
//! Keep-alive is off (issue 17 §4): the event MPM closes idle keep-alive
//! connections when its workers are all busy, which the queueing model does not
//! describe. With one request per connection there is no idle connection to
//! close; a connection waits in the listen backlog (the model's buffer) until a
//! worker takes it.

use std::ffi::OsString;
use std::path::Path;

/// The URL path of the CPU-burning handler.
pub const BURN_PATH: &str = "/burn";
/// Mean CPU demand of one request at [`BURN_PATH`], in milliseconds.
pub const BURN_MEAN_MS: u32 = 20;
/// Request threads (event, worker) or processes (prefork).
pub const WORKERS: u32 = 4;
/// The listen backlog: the model's buffer.
pub const BACKLOG: u32 = 511;

/// An Apache multi-processing module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mpm {
    /// mpm_event: one process, 4 threads, a listener thread holding idle connections.
    Event,
    /// mpm_worker: one process, 4 threads.
    Worker,
    /// mpm_prefork: 4 single-threaded processes.
    Prefork,
}

impl Mpm {
    fn name(self) -> &'static str {
        match self {
            Mpm::Event => "event",
            Mpm::Worker => "worker",
            Mpm::Prefork => "prefork",
        }
    }

    fn directives(self) -> String {
        match self {
            Mpm::Event | Mpm::Worker => format!(
                "StartServers 1\nServerLimit 1\nThreadLimit {WORKERS}\nThreadsPerChild {WORKERS}\n\
                 MinSpareThreads 1\nMaxSpareThreads {WORKERS}\nMaxRequestWorkers {WORKERS}\n\
                 MaxConnectionsPerChild 0\n"
            ),
            Mpm::Prefork => format!(
                "StartServers {WORKERS}\nServerLimit {WORKERS}\nMinSpareServers {WORKERS}\n\
                 MaxSpareServers {WORKERS}\nMaxRequestWorkers {WORKERS}\nMaxConnectionsPerChild 0\n"
            ),
        }
    }
}

/// The Lua handler: exponential demand, burnt by a calibrated iteration count.
fn burn_lua() -> String {
    format!(
        "-- servelab: burn an exponential {BURN_MEAN_MS} ms of CPU per request\n\
         local MEAN = {BURN_MEAN_MS} / 1000\n\
         local CHUNK = 20000\n\
         local rate\n\
         local function spin(n)\n  local x = 0\n  for i = 1, n do x = x + i % 7 end\n  return x\nend\n\
         local function calibrate()\n  local best = 0\n  for _ = 1, 20 do\n\
         \x20   local t0 = os.clock()\n    spin(CHUNK)\n    local t = os.clock() - t0\n\
         \x20   if t > 0 and CHUNK / t > best then best = CHUNK / t end\n  end\n  return best\nend\n\
         function handle(r)\n  if not rate then\n    rate = calibrate()\n\
         \x20   math.randomseed(os.time() + math.floor(os.clock() * 1e6))\n  end\n\
         \x20 local s = -math.log(1 - math.random()) * MEAN\n  spin(math.floor(s * rate))\n\
         \x20 r.content_type = \"text/plain\"\n  r:puts(\"ok\\n\")\n  return apache2.OK\nend\n"
    )
}

/// Writes the configuration and the handler into `dir` and returns the command
/// line that runs Apache in the foreground with them.
pub fn command(
    mpm: Mpm,
    exe: &Path,
    root: &Path,
    port: u16,
    dir: &Path,
) -> std::io::Result<Vec<OsString>> {
    let modules = Path::new("/usr/lib/apache2/modules");
    let (root, d) = (root.display(), dir.display());
    let lua = dir.join("burn.lua");
    std::fs::write(&lua, burn_lua())?;
    // As root, Apache's children run as an unprivileged user; it must exist.
    let user = if rustix::process::geteuid().is_root() {
        "User www-data\nGroup www-data\n"
    } else {
        ""
    };
    let conf = dir.join("apache2.conf");
    let m = modules.display();
    std::fs::write(
        &conf,
        format!(
            "ServerRoot {d}\nServerName 127.0.0.1\nListen 127.0.0.1:{port}\nPidFile {d}/apache2.pid\n\
             DefaultRuntimeDir {d}\nMutex file:{d} default\nErrorLog {d}/error.log\nLogLevel warn\n\
             {user}\
             LoadModule mpm_{mpm}_module {m}/mod_mpm_{mpm}.so\n\
             LoadModule authz_core_module {m}/mod_authz_core.so\n\
             LoadModule mime_module {m}/mod_mime.so\n\
             LoadModule lua_module {m}/mod_lua.so\n\
             {mpm_conf}\
             ListenBacklog {BACKLOG}\nKeepAlive Off\nTimeout 60\n\
             TypesConfig /dev/null\nAddType text/plain .txt\n\
             DocumentRoot {root}\n<Directory {root}>\n  Require all granted\n</Directory>\n\
             LuaScope thread\nLuaMapHandler ^{BURN_PATH}$ {lua} handle\n",
            mpm = mpm.name(),
            mpm_conf = mpm.directives(),
            lua = lua.display(),
        ),
    )?;
    Ok(vec![
        exe.as_os_str().to_owned(),
        "-d".into(),
        dir.as_os_str().to_owned(),
        "-f".into(),
        conf.into_os_string(),
        "-DFOREGROUND".into(),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_owns_its_files_and_sets_the_mpm() {
        let dir = tempfile::tempdir().unwrap();
        for (mpm, word) in [
            (Mpm::Event, "ThreadsPerChild 4"),
            (Mpm::Worker, "ThreadsPerChild 4"),
            (Mpm::Prefork, "StartServers 4"),
        ] {
            let cmd = command(
                mpm,
                Path::new("/usr/sbin/apache2"),
                Path::new("/srv/www"),
                4321,
                dir.path(),
            )
            .unwrap();
            assert_eq!(cmd[0], "/usr/sbin/apache2");
            let conf = std::fs::read_to_string(dir.path().join("apache2.conf")).unwrap();
            let d = dir.path().display().to_string();
            for needle in [
                format!("ServerRoot {d}"),
                format!("PidFile {d}/apache2.pid"),
                format!("Mutex file:{d}"),
                format!("ErrorLog {d}/error.log"),
                "Listen 127.0.0.1:4321".into(),
                format!("mod_mpm_{}.so", mpm.name()),
                word.into(),
                "KeepAlive Off".into(),
            ] {
                assert!(conf.contains(&needle), "{mpm:?}: no `{needle}` in\n{conf}");
            }
            let lua = std::fs::read_to_string(dir.path().join("burn.lua")).unwrap();
            assert!(lua.contains("local MEAN = 20 / 1000"), "{lua}");
        }
    }

    /// bench/predict-apache.sh writes this configuration in shell for
    /// `servelab predict`; it must keep what makes the model fit Apache.
    #[test]
    fn the_predict_script_keeps_the_experiments_configuration() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/predict-apache.sh");
        let text = std::fs::read_to_string(&script).unwrap();
        for needle in [
            "KeepAlive Off".to_string(),
            "LuaScope thread".into(),
            format!("WORKERS={WORKERS}"),
            format!("BACKLOG={BACKLOG}"),
            "ListenBacklog $BACKLOG".into(),
            "ThreadsPerChild $WORKERS".into(),
            "MaxRequestWorkers $WORKERS".into(),
            "StartServers $WORKERS".into(),
            "taskset -c 0".into(),
            "--pid \"$APID\"".into(),
        ] {
            assert!(
                text.contains(&needle),
                "no `{needle}` in {}",
                script.display()
            );
        }
        // The handler's loop and calibration are the experiment's, line for line.
        let lua = burn_lua();
        for line in [
            "local CHUNK = 20000",
            "for i = 1, n do x = x + i % 7 end",
            "for _ = 1, 20 do",
        ] {
            assert!(lua.contains(line) && text.contains(line), "`{line}`");
        }
    }
}
