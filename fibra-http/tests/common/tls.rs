//! HTTPS for the behaviour tests: a certificate made for the test run, the
//! server's configuration and a rustls client that trusts it.

use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, ServerConfig, StreamOwned};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// A self-signed certificate for `localhost`, made once per test run.
pub struct Certificate {
    pub der: CertificateDer<'static>,
    pub pem: String,
    pub key: PrivatePkcs8KeyDer<'static>,
}

pub fn certificate() -> &'static Certificate {
    static CERTIFICATE: OnceLock<Certificate> = OnceLock::new();
    CERTIFICATE.get_or_init(|| {
        let made = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        Certificate {
            der: made.cert.der().clone(),
            pem: made.cert.pem(),
            key: PrivatePkcs8KeyDer::from(made.signing_key.serialize_der()),
        }
    })
}

/// The provider named, not the process default: which default a build has
/// depends on the features that other crates turn on in rustls.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

pub fn server_config() -> Arc<ServerConfig> {
    let certificate = certificate();
    let config = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![certificate.der.clone()],
            PrivateKeyDer::Pkcs8(certificate.key.clone_key()),
        )
        .unwrap();
    Arc::new(config)
}

/// A TLS session with the server at `addr`, trusting the test's
/// certificate and offering only `version`.
pub fn connect(
    addr: SocketAddr,
    version: &'static rustls::SupportedProtocolVersion,
) -> StreamOwned<ClientConnection, TcpStream> {
    let mut roots = RootCertStore::empty();
    roots.add(certificate().der.clone()).unwrap();
    let config = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[version])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = ServerName::try_from("localhost").unwrap();
    let session = ClientConnection::new(Arc::new(config), name).unwrap();
    StreamOwned::new(session, tcp_client(addr))
}

pub fn tcp_client(addr: SocketAddr) -> TcpStream {
    let tcp = TcpStream::connect(addr).unwrap();
    // A test that would hang fails instead.
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    tcp
}
