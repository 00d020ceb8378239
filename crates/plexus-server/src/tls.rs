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
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| key_error(key, e))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("the certificate and key do not form a usable pair: {e}"))?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// Why a private key file was not usable, in terms of what to do about it: rustls reads unencrypted PEM keys only,
/// and on an encrypted one (or a file of something else) its own error is a bare "no items found".
fn key_error(path: &Path, error: rustls::pki_types::pem::Error) -> String {
    let shown = path.display();
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => return format!("cannot read private key {shown}: {e}"),
    };
    if text.contains("BEGIN ENCRYPTED PRIVATE KEY") || text.contains("Proc-Type: 4,ENCRYPTED") {
        return format!(
            "the private key in {shown} is encrypted, which is not supported: give an unencrypted PEM key \
             (decrypt it with `openssl pkey -in {shown} -out key.pem`, and keep that file readable only by the server)"
        );
    }
    if matches!(error, rustls::pki_types::pem::Error::NoItemsFound) {
        return format!(
            "no private key found in {shown}: expected an unencrypted PEM key (a BEGIN PRIVATE KEY, BEGIN RSA \
             PRIVATE KEY or BEGIN EC PRIVATE KEY block)"
        );
    }
    format!("cannot read private key {shown}: {error}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
    }

    #[test]
    fn unusable_keys_are_explained() {
        acceptor(&data("test-cert.pem"), &data("test-key.pem")).unwrap();
        let error = acceptor(&data("test-cert.pem"), &data("test-key-encrypted.pem")).err().unwrap();
        assert!(error.contains("is encrypted, which is not supported"), "{error}");
        // A certificate where the key should be.
        let error = acceptor(&data("test-cert.pem"), &data("test-cert.pem")).err().unwrap();
        assert!(error.contains("no private key found in"), "{error}");
    }
}
