//! The tokio and hyper server, run as `fibra-bench --child e4 --port N --fib N
//! --sleep-ms MS [--cert FILE --key FILE]` (the contract of [`super`]): hyper
//! 1's HTTP/1 connection driver on tokio's multi-thread runtime, a task per
//! connection, as a tokio user would write it; fib runs on `spawn_blocking`,
//! tokio's advice for work that would hold up a runtime worker. HTTPS is
//! tokio-rustls's acceptor in front of the same driver, the usual pairing.

use super::{Contract, Work, fib};
use clap::Parser;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::CONTENT_TYPE;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::convert::Infallible;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

#[derive(Parser)]
struct Args {
    #[command(flatten)]
    contract: Contract,
    /// Serve HTTPS with this certificate chain (PEM).
    #[arg(long, requires = "key")]
    cert: Option<PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, requires = "cert")]
    key: Option<PathBuf>,
}

/// Parses the arguments, listens, says where, and serves until killed.
pub fn main(args: &[String]) -> Result<(), String> {
    let args = Args::try_parse_from(
        std::iter::once("fibra-bench --child e4").chain(args.iter().map(String::as_str)),
    )
    .map_err(|e| e.to_string())?;
    let work = args.contract.work();
    let tls = match (&args.cert, &args.key) {
        (Some(cert), Some(key)) => Some(acceptor(cert, key)?),
        _ => None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("a tokio runtime: {e}"))?;
    runtime
        .block_on(async {
            let listener = TcpListener::bind(("127.0.0.1", args.contract.port)).await?;
            let mut stdout = io::stdout();
            writeln!(stdout, "listening on {}", listener.local_addr()?)?;
            stdout.flush()?;
            match tls {
                Some(tls) => serve_tls(listener, tls, work).await,
                None => serve(listener, work).await,
            }
        })
        .map_err(|e| e.to_string())
}

/// A TLS acceptor for the certificate chain in `cert` and the key in `key`,
/// on ring, the provider fibra-http's HTTPS uses too.
fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, String> {
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{}: {e}", cert.display()))?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("{}: {e}", key.display()))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .and_then(|builder| builder.with_no_client_auth().with_single_cert(chain, key))
    .map_err(|e| format!("a TLS configuration: {e}"))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Serves each connection `listener` accepts in a task of its own.
pub async fn serve(listener: TcpListener, work: Work) -> io::Result<()> {
    loop {
        let (conn, _) = listener.accept().await?;
        conn.set_nodelay(true)?;
        tokio::spawn(serve_connection(conn, work));
    }
}

/// Serves each connection `listener` accepts in a task of its own, which
/// makes the TLS handshake first.
async fn serve_tls(listener: TcpListener, tls: TlsAcceptor, work: Work) -> io::Result<()> {
    loop {
        let (conn, _) = listener.accept().await?;
        conn.set_nodelay(true)?;
        let tls = tls.clone();
        tokio::spawn(async move {
            // A failed handshake closes that connection only.
            if let Ok(conn) = tls.accept(conn).await {
                serve_connection(conn, work).await;
            }
        });
    }
}

/// Answers the requests that come on `conn` until it closes.
async fn serve_connection(conn: impl AsyncRead + AsyncWrite + Unpin, work: Work) {
    let service = service_fn(move |request| respond(request, work));
    // A connection the client breaks off (wrk, at the end of a run) ends
    // here, and is no concern of the server's.
    let _ = http1::Builder::new()
        .serve_connection(TokioIo::new(conn), service)
        .await;
}

async fn respond(
    request: Request<Incoming>,
    work: Work,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (status, body) = match request.uri().path() {
        "/io" => {
            tokio::time::sleep(work.sleep).await;
            (StatusCode::OK, Bytes::from_static(b"io\n"))
        }
        "/cpu" => (StatusCode::OK, compute(work.fib).await),
        "/io-cpu" => {
            tokio::time::sleep(work.sleep).await;
            (StatusCode::OK, compute(work.fib).await)
        }
        "/hello" => (StatusCode::OK, Bytes::from_static(b"Hello, world!\n")),
        _ => (StatusCode::NOT_FOUND, Bytes::from_static(b"not found\n")),
    };
    let response = Response::builder()
        .status(status)
        .header(CONTENT_TYPE, "text/plain")
        .body(Full::new(body))
        .expect("a status and a fixed header make a valid response");
    Ok(response)
}

/// fib(`n`) and a newline, computed on tokio's blocking pool.
async fn compute(n: u32) -> Bytes {
    let value = tokio::task::spawn_blocking(move || fib(n))
        .await
        .expect("fib does not panic");
    Bytes::from(format!("{value}\n"))
}
