//! TLS for the PostgreSQL store, with libpq's parameters and meaning, over rustls on ring (set on
//! the store's own configuration: the process-wide default provider is never touched).
//!
//! tokio-postgres knows `disable`, `prefer` and `require` only, and no certificate files: the
//! store takes `sslmode`, `sslrootcert`, `sslcert` and `sslkey` out of the connection string,
//! sets tokio-postgres's mode from its own, and verifies in its connector.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::Socket;
use tokio_postgres::config::SslMode as DriverMode;
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};

use super::StoreError;

/// The parameters of the connection string that the store reads itself.
pub(super) const PARAMETERS: [&str; 4] = ["sslmode", "sslrootcert", "sslcert", "sslkey"];

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SslMode {
    /// Plain text only.
    Disable,
    /// Plain text first; TLS when the server refuses it.
    Allow,
    /// TLS when the server offers it, else plain text (the default).
    Prefer,
    /// TLS, without verifying the server (unless `sslrootcert` is given: the chain, as libpq).
    Require,
    /// TLS, the server's chain verified against `sslrootcert`, not its name.
    VerifyCa,
    /// TLS, the chain and the server's name (or IP address) verified.
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Result<Self, StoreError> {
        Ok(match value {
            "disable" => Self::Disable,
            "allow" => Self::Allow,
            "prefer" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            _ => {
                return Err(StoreError::new(format!(
                    "sslmode `{value}` is not one of disable, allow, prefer, require, verify-ca, verify-full"
                )));
            }
        })
    }

    /// The name libpq gives the mode.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Disable => "disable",
            Self::Allow => "allow",
            Self::Prefer => "prefer",
            Self::Require => "require",
            Self::VerifyCa => "verify-ca",
            Self::VerifyFull => "verify-full",
        }
    }

    /// The mode tokio-postgres negotiates with: `allow` starts in plain text.
    pub(super) fn driver(self) -> DriverMode {
        match self {
            Self::Disable | Self::Allow => DriverMode::Disable,
            Self::Prefer => DriverMode::Prefer,
            Self::Require | Self::VerifyCa | Self::VerifyFull => DriverMode::Require,
        }
    }
}

impl fmt::Display for SslMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the server's certificate is verified against.
#[derive(Debug, Clone, PartialEq, Eq)]
enum RootCert {
    /// The CA certificates of a PEM file.
    File(PathBuf),
    /// The platform's trust store (`sslrootcert=system`).
    System,
}

/// What the connection string says about TLS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TlsSettings {
    /// The mode.
    pub(super) mode: SslMode,
    root: Option<RootCert>,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
}

impl TlsSettings {
    /// The settings of the parameters taken from a connection string (a later one wins, as in
    /// libpq).
    pub(super) fn from_parameters(parameters: &[(String, String)]) -> Result<Self, StoreError> {
        let (mut mode, mut root, mut cert, mut key) = (None, None, None, None);
        for (name, value) in parameters {
            match name.as_str() {
                "sslmode" => mode = Some(SslMode::parse(value)?),
                "sslrootcert" if value == "system" => root = Some(RootCert::System),
                "sslrootcert" => root = non_empty(value).map(RootCert::File),
                "sslcert" => cert = non_empty(value),
                "sslkey" => key = non_empty(value),
                _ => {}
            }
        }
        // As libpq: `sslrootcert=system` makes verify-full the default, and refuses weaker modes.
        let mode = match (mode, &root) {
            (None, Some(RootCert::System)) => SslMode::VerifyFull,
            (Some(mode), Some(RootCert::System)) if mode != SslMode::VerifyFull => {
                return Err(StoreError::new(format!(
                    "sslrootcert=system needs sslmode=verify-full (sslmode is {mode}), as in libpq"
                )));
            }
            (mode, _) => mode.unwrap_or(SslMode::Prefer),
        };
        if matches!(mode, SslMode::VerifyCa | SslMode::VerifyFull) && root.is_none() {
            return Err(StoreError::new(format!(
                "sslmode={mode} needs sslrootcert: a PEM file of CA certificates, or `system` for the platform's trust store"
            )));
        }
        match (&cert, &key) {
            (Some(_), None) => return Err(StoreError::new("sslcert is given without sslkey")),
            (None, Some(_)) => return Err(StoreError::new("sslkey is given without sslcert")),
            _ => {}
        }
        Ok(Self { mode, root, cert, key })
    }

    /// The connector, its files read now (a file that cannot be read or parsed is an error that
    /// names it, never its content).
    pub(super) fn connector(&self) -> Result<MakeRustls, StoreError> {
        if self.mode == SslMode::Disable {
            return Ok(MakeRustls { config: None });
        }
        let failed = |e: rustls::Error| StoreError::new(format!("could not configure TLS: {e}"));
        let crypto = Arc::new(rustls::crypto::ring::default_provider());
        let verifier: Arc<dyn ServerCertVerifier> = match &self.root {
            Some(RootCert::System) => {
                Arc::new(rustls_platform_verifier::Verifier::new(Arc::clone(&crypto)).map_err(failed)?)
            }
            Some(RootCert::File(path)) => Arc::new(FileVerifier {
                roots: Some(Arc::new(roots(path)?)),
                algorithms: crypto.signature_verification_algorithms,
                check_name: self.mode == SslMode::VerifyFull,
            }),
            None => Arc::new(FileVerifier {
                roots: None,
                algorithms: crypto.signature_verification_algorithms,
                check_name: false,
            }),
        };
        let builder = rustls::ClientConfig::builder_with_provider(crypto)
            .with_safe_default_protocol_versions()
            .map_err(failed)?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let mut config = match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => builder
                .with_client_auth_cert(certificates(cert, "sslcert")?, private_key(key)?)
                .map_err(|e| StoreError::new(format!("sslcert and sslkey cannot be used: {e}")))?,
            _ => builder.with_no_client_auth(),
        };
        config.alpn_protocols = vec![b"postgresql".to_vec()];
        config.enable_early_data = false;
        Ok(MakeRustls { config: Some(Arc::new(config)) })
    }
}

fn non_empty(value: &str) -> Option<PathBuf> {
    (!value.is_empty()).then(|| PathBuf::from(value))
}

/// The bytes of a file a parameter names; an error names the parameter and the path.
fn read(path: &Path, parameter: &str) -> Result<Vec<u8>, StoreError> {
    std::fs::read(path).map_err(|e| StoreError::new(format!("{parameter} {}: {e}", path.display())))
}

/// The certificates of a PEM file (at least one).
fn certificates(path: &Path, parameter: &str) -> Result<Vec<CertificateDer<'static>>, StoreError> {
    let pem = read(path, parameter)?;
    let certificates: Vec<_> = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<_, _>>()
        .map_err(|e| StoreError::new(format!("{parameter} {}: not a PEM file of certificates: {e}", path.display())))?;
    if certificates.is_empty() {
        return Err(StoreError::new(format!("{parameter} {}: holds no PEM certificate", path.display())));
    }
    Ok(certificates)
}

/// The trust anchors of `sslrootcert`.
fn roots(path: &Path) -> Result<RootCertStore, StoreError> {
    let mut roots = RootCertStore::empty();
    for certificate in certificates(path, "sslrootcert")? {
        roots.add(certificate).map_err(|e| {
            StoreError::new(format!("sslrootcert {}: a certificate cannot be a trust anchor: {e}", path.display()))
        })?;
    }
    Ok(roots)
}

/// The private key of `sslkey`. Its parse error is not shown: it could quote the key.
fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, StoreError> {
    let pem = read(path, "sslkey")?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|_| {
        StoreError::new(format!("sslkey {}: holds no PEM private key (PKCS#8, PKCS#1 or SEC1)", path.display()))
    })
}

/// Verifies the server's chain against `sslrootcert` (`roots`), and its name when `check_name`;
/// without `roots` (`require`, `prefer` or `allow` with no `sslrootcert`) the server is not
/// verified, though its handshake signature still is, with the certificate it sent.
#[derive(Debug)]
struct FileVerifier {
    roots: Option<Arc<RootCertStore>>,
    algorithms: WebPkiSupportedAlgorithms,
    check_name: bool,
}

impl ServerCertVerifier for FileVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(roots) = &self.roots else { return Ok(ServerCertVerified::assertion()) };
        let certificate = ParsedCertificate::try_from(end_entity)?;
        rustls::client::verify_server_cert_signed_by_trust_anchor(
            &certificate,
            roots,
            intermediates,
            now,
            self.algorithms.all,
        )?;
        if self.check_name {
            rustls::client::verify_server_name(&certificate, server_name)?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// The store's `MakeTlsConnect`: no configuration under `disable` (tokio-postgres never asks
/// for TLS then).
#[derive(Clone)]
pub(super) struct MakeRustls {
    config: Option<Arc<rustls::ClientConfig>>,
}

impl MakeTlsConnect<Socket> for MakeRustls {
    type Stream = RustlsStream;
    type TlsConnect = RustlsConnect;
    type Error = io::Error;

    fn make_tls_connect(&mut self, domain: &str) -> Result<RustlsConnect, io::Error> {
        // A host that is no DNS name or IP address (a Unix socket) fails only if TLS is asked for.
        let name = ServerName::try_from(domain.to_owned()).ok();
        Ok(RustlsConnect { config: self.config.clone(), name })
    }
}

/// Connects one socket to one host.
pub(super) struct RustlsConnect {
    config: Option<Arc<rustls::ClientConfig>>,
    name: Option<ServerName<'static>>,
}

impl TlsConnect<Socket> for RustlsConnect {
    type Stream = RustlsStream;
    type Error = io::Error;
    type Future = BoxFuture<'static, Result<RustlsStream, io::Error>>;

    fn connect(self, stream: Socket) -> Self::Future {
        Box::pin(async move {
            let Some(config) = self.config else {
                return Err(io::Error::other("TLS is off (sslmode=disable)"));
            };
            let Some(name) = self.name else {
                return Err(io::Error::other("the host is no DNS name or IP address to verify TLS against"));
            };
            let stream = tokio_rustls::TlsConnector::from(config).connect(name, stream).await.map_err(explained)?;
            Ok(RustlsStream(Box::new(stream)))
        })
    }
}

/// A handshake's error, with what a rejected server certificate means said in words.
fn explained(error: io::Error) -> io::Error {
    use rustls::CertificateError as C;
    let Some(rustls::Error::InvalidCertificate(reason)) = error.get_ref().and_then(|e| e.downcast_ref()) else {
        return error;
    };
    let why = if matches!(reason, C::UnknownIssuer) {
        "it is not signed by a CA of sslrootcert"
    } else if matches!(reason, C::Expired | C::ExpiredContext { .. }) {
        "it has expired"
    } else if matches!(reason, C::NotValidYet | C::NotValidYetContext { .. }) {
        "it is not valid yet"
    } else if matches!(reason, C::NotValidForName | C::NotValidForNameContext { .. }) {
        "it is not valid for the host name (sslmode=verify-full)"
    } else {
        "it does not verify"
    };
    io::Error::other(format!("the server's certificate was refused: {why}: {reason}"))
}

/// A TLS connection to the server.
pub(super) struct RustlsStream(Box<tokio_rustls::client::TlsStream<Socket>>);

impl TlsStream for RustlsStream {
    /// `tls-server-end-point` (RFC 5929): the hash of the server's certificate, for
    /// SCRAM-SHA-256-PLUS. For a certificate signed with another algorithm than RSA PKCS#1 or
    /// ECDSA with SHA-1/2, none: the driver then authenticates with SCRAM-SHA-256, unbound.
    fn channel_binding(&self) -> ChannelBinding {
        let certificate = self.0.get_ref().1.peer_certificates().and_then(|chain| chain.first());
        match certificate.and_then(|c| server_end_point(c.as_ref())) {
            Some(hash) => ChannelBinding::tls_server_end_point(hash),
            None => ChannelBinding::none(),
        }
    }
}

/// The `tls-server-end-point` hash of a DER certificate: its signature algorithm's hash, SHA-256
/// for MD5 and SHA-1; `None` for an algorithm without a defined hash here, or malformed DER.
fn server_end_point(der: &[u8]) -> Option<Vec<u8>> {
    use sha2::Digest;
    const RSA: &[u8] = &[0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01];
    const ECDSA: &[u8] = &[0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04];
    let (0x30, certificate, _) = tlv(der)? else { return None };
    let (0x30, _tbs, rest) = tlv(certificate)? else { return None };
    let (0x30, algorithm, _) = tlv(rest)? else { return None };
    let (0x06, oid, _) = tlv(algorithm)? else { return None };
    let bits = match (oid.strip_prefix(RSA), oid.strip_prefix(ECDSA)) {
        (Some([0x04 | 0x05 | 0x0B]), _) | (_, Some([0x01] | [0x03, 0x02])) => 256,
        (Some([0x0C]), _) | (_, Some([0x03, 0x03])) => 384,
        (Some([0x0D]), _) | (_, Some([0x03, 0x04])) => 512,
        _ => return None,
    };
    Some(match bits {
        256 => sha2::Sha256::digest(der).to_vec(),
        384 => sha2::Sha384::digest(der).to_vec(),
        _ => sha2::Sha512::digest(der).to_vec(),
    })
}

/// One DER element: its tag, its content and what follows it.
fn tlv(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (length, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let count = usize::from(first & 0x7F);
        if count == 0 || count > 4 {
            return None;
        }
        let (bytes, rest) = rest.split_at_checked(count)?;
        (bytes.iter().fold(0usize, |n, &b| (n << 8) | usize::from(b)), rest)
    };
    let (content, rest) = rest.split_at_checked(length)?;
    Some((tag, content, rest))
}

impl AsyncRead for RustlsStream {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for RustlsStream {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_shutdown(cx)
    }
}

/// Opens the pool's connections: as tokio-postgres does, and under `allow`, once more with TLS
/// when the server refused the plain-text connection.
pub(super) struct Connector {
    pub(super) tls: MakeRustls,
    pub(super) mode: SslMode,
}

impl deadpool_postgres::Connect for Connector {
    fn connect(
        &self,
        config: &tokio_postgres::Config,
    ) -> BoxFuture<'_, Result<(tokio_postgres::Client, tokio::task::JoinHandle<()>), tokio_postgres::Error>> {
        let config = config.clone();
        Box::pin(async move {
            let (client, connection) = match config.connect(self.tls.clone()).await {
                Err(error) if self.mode == SslMode::Allow && error.as_db_error().is_some() => {
                    let mut config = config;
                    config.ssl_mode(DriverMode::Require);
                    config.connect(self.tls.clone()).await?
                }
                result => result?,
            };
            let task = tokio::spawn(async move {
                if let Err(error) = connection.await {
                    tracing::warn!(target: "sms_sdk::store::postgres", "connection error: {error}");
                }
            });
            Ok((client, task))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> Result<TlsSettings, StoreError> {
        let pairs: Vec<_> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        TlsSettings::from_parameters(&pairs)
    }

    #[test]
    fn modes_follow_libpq() {
        assert_eq!(settings(&[]).unwrap().mode, SslMode::Prefer);
        assert_eq!(settings(&[("sslrootcert", "system")]).unwrap().mode, SslMode::VerifyFull);
        assert_eq!(settings(&[("sslmode", "require")]).unwrap().mode, SslMode::Require);
        let cases = [
            (vec![("sslmode", "secure")], "sslmode `secure` is not one of"),
            (vec![("sslmode", "verify-full")], "sslmode=verify-full needs sslrootcert"),
            (vec![("sslmode", "verify-ca"), ("sslrootcert", "system")], "sslrootcert=system needs sslmode=verify-full"),
            (vec![("sslcert", "/c.pem")], "sslcert is given without sslkey"),
            (vec![("sslkey", "/k.pem")], "sslkey is given without sslcert"),
        ];
        for (pairs, reason) in cases {
            let error = settings(&pairs).unwrap_err().to_string();
            assert!(error.contains(reason), "{pairs:?}: {error}");
        }
    }

    #[test]
    fn malformed_der_has_no_end_point() {
        for der in [&[][..], &[0x30], &[0x30, 0x85, 1, 2, 3, 4, 5], &[0x30, 0x02, 0x30, 0x00], &[0x30, 0x81]] {
            assert_eq!(server_end_point(der), None, "{der:?}");
        }
    }

    #[test]
    fn unreadable_files_are_named() {
        let error = settings(&[("sslmode", "verify-full"), ("sslrootcert", "/nonexistent/ca.pem")])
            .unwrap()
            .connector()
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("sslrootcert /nonexistent/ca.pem: "), "{error}");
    }
}
