//! HTTPS for `kb serve --tls-cert FILE --tls-key FILE`: the certificate chain and private
//! key are read from PEM files at start (a missing, unreadable or invalid file stops kb
//! with a clear error before it opens the vault), and each connection is a TLS handshake
//! (rustls, aws-lc-rs) then HTTP/1.1 served by the same router as plain HTTP.
//!
//! A phone needs this: a service worker (the page's offline copy and capture queue) only
//! runs in a secure context, which `http://192.168.x.x` is not.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::aws_lc_rs;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::serve::ServeError;

/// How long a client may take over its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The PEM files HTTPS is served with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain: the server's certificate first, then any intermediates.
    pub cert: PathBuf,
    /// The private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

impl TlsFiles {
    /// The TLS files `--tls-cert` and `--tls-key` name: both or neither.
    pub fn from_flags(cert: Option<PathBuf>, key: Option<PathBuf>) -> Result<Option<TlsFiles>, ServeError> {
        match (cert, key) {
            (Some(cert), Some(key)) => Ok(Some(TlsFiles { cert, key })),
            (None, None) => Ok(None),
            (Some(_), None) => {
                Err(ServeError::TlsFlags("--tls-cert needs --tls-key (the certificate's private key)"))
            }
            (None, Some(_)) => {
                Err(ServeError::TlsFlags("--tls-key needs --tls-cert (the certificate chain)"))
            }
        }
    }

    /// Reads both files and makes the TLS acceptor (HTTP/1.1 offered by ALPN).
    pub fn acceptor(&self) -> Result<TlsAcceptor, ServeError> {
        let certs = read_certificates(&self.cert)?;
        let key = read_key(&self.key)?;
        let mut config = ServerConfig::builder_with_provider(Arc::new(aws_lc_rs::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| ServeError::TlsInvalid(self.cert.clone(), e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| {
                ServeError::TlsInvalid(self.key.clone(), format!("it does not go with the certificate: {e}"))
            })?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsAcceptor::from(Arc::new(config)))
    }
}

/// Reads `path` whole, or says why not.
fn read(path: &Path) -> Result<Vec<u8>, ServeError> {
    std::fs::read(path).map_err(|e| ServeError::TlsUnreadable(path.to_path_buf(), e.to_string()))
}

/// The certificates of the PEM file at `path` (at least one).
fn read_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, ServeError> {
    let pem = read(path)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ServeError::TlsInvalid(path.to_path_buf(), e.to_string()))?;
    if certs.is_empty() {
        return Err(ServeError::TlsInvalid(path.to_path_buf(), "no CERTIFICATE section in it".into()));
    }
    Ok(certs)
}

/// The private key of the PEM file at `path`.
fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, ServeError> {
    let pem = read(path)?;
    PrivateKeyDer::from_pem_slice(&pem)
        .map_err(|e| ServeError::TlsInvalid(path.to_path_buf(), format!("no private key in it ({e})")))
}

/// Serves `app` over TLS on `listener` until `stopping` completes, as plain HTTP is
/// served ([`crate::connections::serve`]): each connection's handshake first.
pub async fn serve(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    app: Router,
    stopping: impl Future<Output = ()>,
) {
    crate::connections::serve(listener, app, stopping, move |tcp| handshake(acceptor.clone(), tcp)).await;
}

/// The TLS handshake of a connection: `None` when it fails or takes too long.
async fn handshake(
    acceptor: TlsAcceptor,
    tcp: tokio::net::TcpStream,
) -> Option<tokio_rustls::server::TlsStream<tokio::net::TcpStream>> {
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
        Ok(Ok(tls)) => Some(tls),
        Ok(Err(error)) => {
            tracing::debug!(%error, "TLS handshake failed");
            None
        }
        Err(_) => {
            tracing::debug!("TLS handshake timed out");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tls_flags_come_together() {
        let (cert, key) = (PathBuf::from("c.pem"), PathBuf::from("k.pem"));
        assert_eq!(TlsFiles::from_flags(None, None), Ok(None));
        assert_eq!(
            TlsFiles::from_flags(Some(cert.clone()), Some(key.clone())),
            Ok(Some(TlsFiles { cert: cert.clone(), key: key.clone() }))
        );
        assert!(matches!(TlsFiles::from_flags(Some(cert), None), Err(ServeError::TlsFlags(_))));
        assert!(matches!(TlsFiles::from_flags(None, Some(key)), Err(ServeError::TlsFlags(_))));
    }
}
