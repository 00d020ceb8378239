//! Optional TLS for both listeners: a certificate chain and private key read from PEM files.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Accepts TLS on an accepted TCP connection.
pub type Acceptor = tokio_rustls::TlsAcceptor;

/// Builds an acceptor from PEM files, with errors that name the file.
pub fn acceptor(cert: &Path, key: &Path) -> Result<Acceptor, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| format!("cannot read certificate file {}: {e}", cert.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("bad certificate in {}: {e}", cert.display()))?;
    if certs.is_empty() {
        return Err(format!("no certificate found in {}", cert.display()));
    }
    let key =
        PrivateKeyDer::from_pem_file(key).map_err(|e| format!("cannot read private key {}: {e}", key.display()))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("the certificate and key do not form a usable pair: {e}"))?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}
