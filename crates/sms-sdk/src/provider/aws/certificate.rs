//! The certificates SNS signs messages with: where one may come from (the URL rule), how it is
//! read (PEM, then the RSA public key inside the X.509 structure), where it is fetched from (a
//! [`CertificateSource`], by default AWS over HTTPS with a size cap and a timeout) and how long
//! it is kept (a small cache by URL, so one fetch serves every message signed with it).

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use base64::Engine as _;

use crate::error::Error;
use crate::{BoxError, BoxFuture, HttpConfig};

/// The largest certificate read: 64 KiB (AWS's are about 2 KiB).
pub const MAX_CERTIFICATE_BYTES: usize = 64 * 1024;
/// How long a certificate fetch may take, connect and body included: 5 s.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest certificate or confirmation URL read: SNS's are under 1 KiB (a confirmation's
/// carries its token).
pub(crate) const MAX_URL_LEN: usize = 2048;
/// How many certificates the cache keeps (SNS signs with one per region at a time, and rotates it
/// rarely): the oldest goes first.
const CACHE_ENTRIES: usize = 16;
/// The most fetches in flight at once: a flood of messages naming new certificate URLs waits on
/// none of them, it is refused until the fetches in hand end.
const MAX_FETCHES: usize = 4;

/// Whether `url` may hold an SNS signing certificate: `https`, no user info and no port, host
/// `sns.<region>.amazonaws.com` or `sns.<region>.amazonaws.com.cn` (a region of at least three
/// letters, digits and `-`, as AWS's own validators require), and a path ending in `.pem`.
/// Subscription confirmation URLs pass the same host rule.
#[must_use]
pub fn is_certificate_url(url: &str) -> bool {
    is_sns_url(url, Some(".pem"))
}

/// Whether `url` is an `https` URL of an SNS endpoint (the host rule of
/// [`is_certificate_url`]), with a path ending in `suffix` when one is given.
pub(crate) fn is_sns_url(url: &str, suffix: Option<&str>) -> bool {
    // SNS's URLs are short ASCII: anything else is refused before the (costlier) parse.
    if url.len() > MAX_URL_LEN || !url.is_ascii() {
        return false;
    }
    let Ok(parsed) = url::Url::parse(url) else { return false };
    // Only the canonical spelling: the cache and the fetch use the string as given, so variants
    // of one URL (case, a default port, escapes, whitespace the parser drops) must not pass as
    // others.
    if parsed.as_str() != url {
        return false;
    }
    let host_ok = parsed.host_str().is_some_and(is_sns_host);
    let plain = parsed.username().is_empty() && parsed.password().is_none() && parsed.port().is_none();
    let path_ok = suffix.is_none_or(|suffix| parsed.path().ends_with(suffix) && parsed.query().is_none());
    parsed.scheme() == "https" && host_ok && plain && path_ok && parsed.fragment().is_none()
}

/// `sns.<region>.amazonaws.com` or `….amazonaws.com.cn`.
fn is_sns_host(host: &str) -> bool {
    let Some(rest) = host.strip_prefix("sns.") else { return false };
    let Some(region) = rest.strip_suffix(".amazonaws.com").or_else(|| rest.strip_suffix(".amazonaws.com.cn")) else {
        return false;
    };
    region.len() >= 3
        && !region.starts_with("xn--")
        && region.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// An RSA public key, as the `RSAPublicKey` DER that `ring` verifies with.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct PublicKey(Arc<[u8]>);

impl PublicKey {
    /// The DER bytes.
    pub(crate) fn der(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({} bytes)", self.0.len())
    }
}

/// The RSA public key of the first certificate in `pem` (`-----BEGIN CERTIFICATE-----`).
/// `None` when there is no certificate, it is not X.509 DER, or its key is not RSA.
pub(crate) fn public_key_of(pem: &[u8]) -> Option<PublicKey> {
    let der = certificate_der(pem)?;
    rsa_public_key(&der).map(|key| PublicKey(key.into()))
}

/// The DER of the first `CERTIFICATE` block of `pem`.
fn certificate_der(pem: &[u8]) -> Option<Vec<u8>> {
    pem_block(std::str::from_utf8(pem).ok()?, "CERTIFICATE")
}

/// The DER of the first PEM block labelled `label` (`CERTIFICATE`, `PRIVATE KEY`) in `text`.
pub(crate) fn pem_block(text: &str, label: &str) -> Option<Vec<u8>> {
    let (begin, end) = (format!("-----BEGIN {label}-----"), format!("-----END {label}-----"));
    let (_, rest) = text.split_once(begin.as_str())?;
    let (body, _) = rest.split_once(end.as_str())?;
    let compact: String = body.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD.decode(compact).ok()
}

/// One DER element at the start of `input`: its tag, its content, and what follows it.
/// Definite lengths only (DER has no other), of at most four length bytes.
fn element(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (length, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 {
            return None;
        }
        let (bytes, rest) = rest.split_at_checked(count)?;
        (bytes.iter().fold(0usize, |length, &b| (length << 8) | usize::from(b)), rest)
    };
    let (content, rest) = rest.split_at_checked(length)?;
    Some((tag, content, rest))
}

/// The content of the element at the start of `input` if its tag is `tag`, and what follows.
fn expect(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (found, content, rest) = element(input)?;
    (found == tag).then_some((content, rest))
}

const SEQUENCE: u8 = 0x30;
const BIT_STRING: u8 = 0x03;
const OBJECT_IDENTIFIER: u8 = 0x06;
/// `[0] EXPLICIT`: a certificate's version.
const VERSION: u8 = 0xa0;
/// 1.2.840.113549.1.1.1, `rsaEncryption`.
const RSA_ENCRYPTION: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];

/// The `RSAPublicKey` DER inside an X.509 certificate: `Certificate` → `tbsCertificate` →
/// (version, serial number, signature algorithm, issuer, validity, subject) →
/// `subjectPublicKeyInfo`, whose algorithm must be `rsaEncryption` and whose key is a bit string
/// with no unused bits.
fn rsa_public_key(der: &[u8]) -> Option<Vec<u8>> {
    let (certificate, _) = expect(der, SEQUENCE)?;
    let (mut tbs, _) = expect(certificate, SEQUENCE)?;
    if tbs.first() == Some(&VERSION) {
        tbs = element(tbs)?.2;
    }
    // The serial number, the signature algorithm, the issuer, the validity and the subject.
    for _ in 0..5 {
        tbs = element(tbs)?.2;
    }
    let (info, _) = expect(tbs, SEQUENCE)?;
    let (algorithm, rest) = expect(info, SEQUENCE)?;
    let (oid, _) = expect(algorithm, OBJECT_IDENTIFIER)?;
    if oid != RSA_ENCRYPTION {
        return None;
    }
    let (bits, _) = expect(rest, BIT_STRING)?;
    let (&unused, key) = bits.split_first()?;
    // The key must itself be one DER sequence (modulus, exponent), nothing after it.
    let (_, after) = expect(key, SEQUENCE)?;
    (unused == 0 && after.is_empty()).then(|| key.to_vec())
}

/// Where an [`AwsWebhook`](super::AwsWebhook) gets the certificate a message names in
/// `SigningCertURL`. It is only asked for URLs that passed [`is_certificate_url`], and its
/// answer is kept (a small cache by URL). By default ([`HttpsCertificates`]) it is fetched from
/// AWS; tests and the emulator use [`AwsWebhookBuilder::certificate_pem`](super::AwsWebhookBuilder::certificate_pem)
/// instead, or a source of their own.
pub trait CertificateSource: Send + Sync + 'static {
    /// The PEM text of the certificate at `url` (at most [`MAX_CERTIFICATE_BYTES`]).
    fn certificate<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<Vec<u8>, BoxError>>;
}

/// Fetches certificates from AWS over HTTPS: no redirects, at most [`MAX_CERTIFICATE_BYTES`],
/// within [`FETCH_TIMEOUT`], with the platform's trusted roots.
#[derive(Clone)]
pub struct HttpsCertificates {
    client: reqwest::Client,
}

impl HttpsCertificates {
    /// A source with its own HTTP client (the library's defaults).
    ///
    /// # Errors
    /// `Configuration` when the TLS configuration cannot be built.
    pub fn new() -> Result<Self, Error> {
        Self::with_http(&HttpConfig::new())
    }

    /// A source whose requests go through `http` (your client, connect timeout, user agent).
    ///
    /// # Errors
    /// As [`HttpConfig`]'s checks: a zero connect timeout, a user agent that is not visible ASCII.
    pub fn with_http(http: &HttpConfig) -> Result<Self, Error> {
        Ok(Self { client: http.build("AWS SNS")?.client })
    }
}

impl fmt::Debug for HttpsCertificates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpsCertificates").finish_non_exhaustive()
    }
}

impl CertificateSource for HttpsCertificates {
    fn certificate<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<Vec<u8>, BoxError>> {
        Box::pin(async move {
            crate::http::fetch(&self.client, url, FETCH_TIMEOUT, MAX_CERTIFICATE_BYTES)
                .await
                .map_err(|error| BoxError::from(format!("the certificate could not be fetched: {error:?}")))
        })
    }
}

/// Where a verifier's keys come from.
#[derive(Clone)]
pub(crate) enum Keys {
    /// One certificate for every (well-formed) certificate URL.
    Fixed(PublicKey),
    /// Fetched by URL, kept in a cache.
    Fetched(Arc<Fetched>),
}

impl fmt::Debug for Keys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Fixed(_) => "fixed certificate",
            Self::Fetched(_) => "fetched certificates",
        })
    }
}

/// A certificate source and what it already answered.
pub(crate) struct Fetched {
    source: Arc<dyn CertificateSource>,
    cache: Mutex<VecDeque<(String, PublicKey)>>,
    in_flight: tokio::sync::Semaphore,
}

/// Why no key is at hand for a certificate URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyError {
    /// The URL breaks the rule of [`is_certificate_url`].
    BadUrl,
    /// The source failed, timed out, is busy, or its answer holds no RSA certificate.
    Unavailable,
}

impl Keys {
    /// Keys fetched through `source`.
    pub(crate) fn fetched(source: Arc<dyn CertificateSource>) -> Self {
        Self::Fetched(Arc::new(Fetched {
            source,
            cache: Mutex::new(VecDeque::with_capacity(CACHE_ENTRIES)),
            in_flight: tokio::sync::Semaphore::new(MAX_FETCHES),
        }))
    }

    /// The key for `url` if it is at hand without a fetch.
    pub(crate) fn cached(&self, url: &str) -> Result<Option<PublicKey>, KeyError> {
        if !is_certificate_url(url) {
            return Err(KeyError::BadUrl);
        }
        Ok(match self {
            Self::Fixed(key) => Some(key.clone()),
            Self::Fetched(fetched) => fetched.lookup(url),
        })
    }

    /// The key for `url`: from the cache, else fetched (bounded) and kept.
    pub(crate) async fn load(&self, url: &str) -> Result<PublicKey, KeyError> {
        if let Some(key) = self.cached(url)? {
            return Ok(key);
        }
        let Self::Fetched(fetched) = self else { return Err(KeyError::Unavailable) };
        let Ok(_permit) = fetched.in_flight.try_acquire() else { return Err(KeyError::Unavailable) };
        let answer = tokio::time::timeout(FETCH_TIMEOUT, fetched.source.certificate(url)).await;
        let Ok(Ok(pem)) = answer else {
            tracing::warn!(provider = super::NAME, "the SNS signing certificate could not be had");
            return Err(KeyError::Unavailable);
        };
        if pem.len() > MAX_CERTIFICATE_BYTES {
            return Err(KeyError::Unavailable);
        }
        let key = public_key_of(&pem).ok_or(KeyError::Unavailable)?;
        fetched.keep(url, key.clone());
        Ok(key)
    }
}

impl Fetched {
    fn lookup(&self, url: &str) -> Option<PublicKey> {
        let cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        cache.iter().find(|(cached, _)| cached == url).map(|(_, key)| key.clone())
    }

    fn keep(&self, url: &str, key: PublicKey) {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if cache.iter().any(|(cached, _)| cached == url) {
            return;
        }
        if cache.len() >= CACHE_ENTRIES {
            cache.pop_front();
        }
        cache.push_back((url.to_owned(), key));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::FetchError;

    const CERTIFICATE: &str = include_str!("../../../assets/aws-sns-test-certificate.pem");

    #[test]
    fn certificate_urls_follow_aws_validators_rule() {
        for good in [
            "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0000000000000000000000.pem",
            "https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-a.pem",
            "https://sns.us-gov-west-1.amazonaws.com/x.pem",
        ] {
            assert!(is_certificate_url(good), "{good}");
        }
        for bad in [
            "http://sns.us-east-1.amazonaws.com/a.pem",
            "https://sns.us-east-1.amazonaws.com/a.pem?x=1",
            "https://sns.us-east-1.amazonaws.com/a.txt",
            "https://sns.us-east-1.amazonaws.com.evil.example/a.pem",
            "https://evil.example/sns.us-east-1.amazonaws.com/a.pem",
            "https://sns.us.amazonaws.com/a.pem",
            "https://sns.us_east.amazonaws.com/a.pem",
            "https://x.sns.us-east-1.amazonaws.com/a.pem",
            "https://user@sns.us-east-1.amazonaws.com/a.pem",
            "https://sns.us-east-1.amazonaws.com:8443/a.pem",
            "https://sns.us-east-1.amazonaws.com/a.pem#f",
            "sns.us-east-1.amazonaws.com/a.pem",
            "",
        ] {
            assert!(!is_certificate_url(bad), "{bad}");
        }
    }

    #[test]
    fn the_rsa_key_is_read_out_of_an_x509_certificate() {
        let Some(key) = public_key_of(CERTIFICATE.as_bytes()) else { panic!("no key") };
        // RSA-2048: a sequence of a 257-byte modulus and the exponent 65537.
        assert_eq!(key.der().len(), 270);
        assert!(key.der().ends_with(&[0x02, 0x03, 0x01, 0x00, 0x01]));
        for broken in [&b""[..], b"-----BEGIN CERTIFICATE-----\n!!\n-----END CERTIFICATE-----", b"\xff\xfe"] {
            assert!(public_key_of(broken).is_none());
        }
        let der = certificate_der(CERTIFICATE.as_bytes()).unwrap_or_default();
        // Every truncation of a certificate is refused without a panic.
        for cut in 0..der.len() {
            let truncated = der.get(..cut).unwrap_or_default();
            assert!(rsa_public_key(truncated).is_none(), "{cut}");
        }
    }

    /// A loopback HTTP server that answers each connection with `answer` (after reading the
    /// request head), then holds it open for `hold`.
    fn serve(answer: Vec<u8>, hold: Duration) -> String {
        use std::io::{Read as _, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let address = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (answer, mut stream) = (answer.clone(), stream);
                std::thread::spawn(move || {
                    let mut head = [0; 4096];
                    let _ = stream.read(&mut head);
                    let _ = stream.write_all(&answer);
                    std::thread::sleep(hold);
                });
            }
        });
        format!("http://{address}/cert.pem")
    }

    fn client() -> reqwest::Client {
        HttpConfig::new().build("test").unwrap_or_else(|e| panic!("{e}")).client
    }

    #[tokio::test]
    async fn t290_certificate_fetches_are_bounded_in_size_time_and_status() {
        let ok = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{CERTIFICATE}", CERTIFICATE.len());
        let url = serve(ok.into_bytes(), Duration::ZERO);
        let fetched = crate::http::fetch(&client(), &url, Duration::from_secs(5), MAX_CERTIFICATE_BYTES).await;
        assert_eq!(fetched.ok().as_deref(), Some(CERTIFICATE.as_bytes()));
        // Over the cap, declared or streamed without a length.
        let declared = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", MAX_CERTIFICATE_BYTES + 1);
        let url = serve(declared.into_bytes(), Duration::from_secs(1));
        let fetched = crate::http::fetch(&client(), &url, Duration::from_secs(5), MAX_CERTIFICATE_BYTES).await;
        assert_eq!(fetched, Err(FetchError::TooLarge));
        let mut streamed = b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n".to_vec();
        streamed.extend(std::iter::repeat_n(b'A', MAX_CERTIFICATE_BYTES + 1));
        let url = serve(streamed, Duration::ZERO);
        let fetched = crate::http::fetch(&client(), &url, Duration::from_secs(5), MAX_CERTIFICATE_BYTES).await;
        assert_eq!(fetched, Err(FetchError::TooLarge));
        // A server that sends a head and then nothing: the whole exchange ends at the timeout.
        let url = serve(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nabc".to_vec(), Duration::from_secs(30));
        let started = std::time::Instant::now();
        let fetched = crate::http::fetch(&client(), &url, Duration::from_millis(300), MAX_CERTIFICATE_BYTES).await;
        assert_eq!(fetched, Err(FetchError::TimedOut));
        assert!(started.elapsed() < Duration::from_secs(10));
        // Not a 2xx, and not followed.
        let url = serve(
            b"HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:1/\r\ncontent-length: 0\r\n\r\n".to_vec(),
            Duration::ZERO,
        );
        let fetched = crate::http::fetch(&client(), &url, Duration::from_secs(5), MAX_CERTIFICATE_BYTES).await;
        assert_eq!(fetched, Err(FetchError::Status(302)));
    }

    #[tokio::test]
    async fn t290_one_fetch_serves_every_message_and_failures_are_not_kept() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        struct Counting(AtomicUsize, bool);
        impl CertificateSource for Counting {
            fn certificate<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Vec<u8>, BoxError>> {
                self.0.fetch_add(1, Ordering::SeqCst);
                let ok = self.1;
                Box::pin(async move { if ok { Ok(CERTIFICATE.as_bytes().to_vec()) } else { Err("down".into()) } })
            }
        }
        let url = "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-a.pem";
        let source = Arc::new(Counting(AtomicUsize::new(0), true));
        let keys = Keys::fetched(source.clone());
        assert_eq!(keys.cached(url), Ok(None));
        for _ in 0..10 {
            assert!(keys.load(url).await.is_ok());
        }
        assert_eq!(source.0.load(Ordering::SeqCst), 1);
        assert!(matches!(keys.cached(url), Ok(Some(_))));
        assert_eq!(keys.load("https://evil.example/a.pem").await, Err(KeyError::BadUrl));
        // The cache keeps the newest 16 URLs.
        for i in 0..CACHE_ENTRIES {
            let other = format!("https://sns.us-east-1.amazonaws.com/{i}.pem");
            assert!(keys.load(&other).await.is_ok());
        }
        assert_eq!(keys.cached(url), Ok(None));
        let failing = Arc::new(Counting(AtomicUsize::new(0), false));
        let keys = Keys::fetched(failing.clone());
        assert_eq!(keys.load(url).await, Err(KeyError::Unavailable));
        assert_eq!(keys.load(url).await, Err(KeyError::Unavailable));
        assert_eq!(failing.0.load(Ordering::SeqCst), 2, "a failure is asked again, not remembered");
    }

    #[test]
    fn der_lengths_are_bounded_and_checked() {
        assert_eq!(element(&[0x30, 0x00]), Some((0x30, &[][..], &[][..])));
        assert_eq!(element(&[0x30, 0x81, 0x01, 0x05, 0x09]), Some((0x30, &[0x05][..], &[0x09][..])));
        assert_eq!(element(&[0x30, 0x85, 1, 1, 1, 1, 1]), None, "five length bytes");
        assert_eq!(element(&[0x30, 0x80]), None, "indefinite length");
        assert_eq!(element(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]), None, "longer than the input");
    }
}
