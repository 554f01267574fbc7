//! The certificate https-throughput's servers serve with: self-signed for
//! 127.0.0.1 and made afresh each run (wrk checks none), so that no key
//! lives in the repository; written as PEM files, which every server reads
//! (Go's `ListenAndServeTLS` reads nothing else).

use super::super::servers::Tls;
use std::fs;
use std::path::PathBuf;

/// A certificate and its key in a directory of their own, removed when
/// dropped.
pub struct Generated {
    dir: PathBuf,
    tls: Tls,
}

impl Generated {
    /// Makes the certificate and writes it.
    ///
    /// # Errors
    ///
    /// Why it could not be made or written.
    pub fn new() -> Result<Generated, String> {
        let names = vec!["127.0.0.1".to_string(), "localhost".to_string()];
        let made =
            rcgen::generate_simple_self_signed(names).map_err(|e| format!("a certificate: {e}"))?;
        let dir = std::env::temp_dir().join(format!("fibra-bench-tls-{}", std::process::id()));
        let generated = Generated {
            tls: Tls {
                cert: dir.join("cert.pem"),
                key: dir.join("key.pem"),
            },
            dir,
        };
        let write = |path: &PathBuf, pem: String| {
            fs::write(path, pem).map_err(|e| format!("{}: {e}", path.display()))
        };
        fs::create_dir_all(&generated.dir)
            .map_err(|e| format!("{}: {e}", generated.dir.display()))?;
        write(&generated.tls.cert, made.cert.pem())?;
        write(&generated.tls.key, made.signing_key.serialize_pem())?;
        Ok(generated)
    }

    pub fn tls(&self) -> &Tls {
        &self.tls
    }
}

impl Drop for Generated {
    fn drop(&mut self) {
        // Left behind only if the temporary directory was taken away.
        let _ = fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_pem_files_and_removes_them() {
        let generated = Generated::new().unwrap();
        let cert = fs::read_to_string(&generated.tls().cert).unwrap();
        let key = fs::read_to_string(&generated.tls().key).unwrap();
        assert!(cert.starts_with("-----BEGIN CERTIFICATE-----"), "{cert}");
        assert!(key.starts_with("-----BEGIN PRIVATE KEY-----"), "{key}");
        let dir = generated.dir.clone();
        drop(generated);
        assert!(!dir.exists());
    }
}
