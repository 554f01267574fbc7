//! This process's limits, raised for experiments that hold many connections
//! open: the peers and servers it starts afterwards inherit them.

use std::io;

/// Raises this process's soft limit on open files to its hard limit (where
/// Go, for one, raises its own), which must be at least `needed`.
pub fn raise_open_files(needed: u64) -> Result<(), String> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit, which `limit` is.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(format!(
            "getrlimit(RLIMIT_NOFILE): {}",
            io::Error::last_os_error()
        ));
    }
    if limit.rlim_max < needed {
        return Err(format!(
            "needs {needed} open files; the hard limit is {} (ulimit -Hn)",
            limit.rlim_max
        ));
    }
    if limit.rlim_cur == limit.rlim_max {
        return Ok(());
    }
    limit.rlim_cur = limit.rlim_max;
    // SAFETY: setrlimit reads one rlimit, which `limit` is.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
        return Err(format!(
            "setrlimit(RLIMIT_NOFILE, {}): {}",
            limit.rlim_max,
            io::Error::last_os_error()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raises_the_soft_limit_to_the_hard_one() {
        raise_open_files(64).unwrap();
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: as above.
        assert_eq!(
            unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
            0
        );
        assert_eq!(limit.rlim_cur, limit.rlim_max);
        if limit.rlim_max != libc::RLIM_INFINITY {
            let err = raise_open_files(limit.rlim_max + 1).unwrap_err();
            assert!(err.starts_with("needs"), "{err}");
        }
    }
}
