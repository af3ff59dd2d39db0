"""The screen over HTTPS (``--screen ... --tls``): phones give a microphone only to a secure page.

The referee makes its own certificate on first use (a self-signed one for
the machine's network addresses and ``localhost``, an ECDSA P-256 key) and
keeps it in the user's data folder (``$REFEREE_DATA``, else
``$XDG_DATA_HOME/referee``, else ``~/.local/share/referee``), so phones that
accepted it once are not asked again; a new address (another network) makes
a new one. A table that has a certificate of its own gives it with
``--tls-cert FILE --tls-key FILE``.

It is a TLS server certificate as phones require one: ``serverAuth`` in its
extended key usage and valid :data:`VALID_DAYS` days (Apple's rules since
iOS 13 and macOS 10.15 refuse a server certificate without it or valid over
825 days, and browsers refuse one valid over 398 days in other cases). It is
renewed at the start of a game when it has fewer than :data:`RENEW_DAYS` days
left (or was made by an older referee without those fields), and the table
is told: each phone must accept the new one again.

A phone opening the page the first time sees the browser's warning that the
certificate is not from an authority it knows; :data:`FIRST_VISIT` says what
to tap, and the referee prints and says it.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from collections.abc import Callable
from pathlib import Path

#: What a player sees the first time, and what to tap.
FIRST_VISIT = ("The first time, the phone warns that the page's certificate is not "
               "trusted: it is the referee's own. Tap Advanced, then Proceed (on an "
               "iPhone: Show Details, then visit this website).")


#: How long the referee's own certificate is valid (from a day before it is made).
VALID_DAYS = 397
#: A certificate with fewer days than this left is renewed when a game starts.
RENEW_DAYS = 30
#: What the table is told when the certificate is made again.
RENEWED = ("The screen's certificate was renewed{why}: each phone must accept it again "
           "the next time it opens its page.")


class TLSError(RuntimeError):
    """A certificate that cannot be made or read."""


def data_folder() -> Path:
    """Where the referee keeps what it makes for the user (its certificate)."""
    if os.environ.get("REFEREE_DATA"):
        return Path(os.environ["REFEREE_DATA"])
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "referee"


def own_certificate(hosts: list[str], folder: Path | None = None,
                    told: Callable[[str], object] = lambda text: None,
                    now: datetime.datetime | None = None) -> tuple[Path, Path]:
    """The referee's certificate and key for ``hosts``: made when missing, and
    made again (``told`` says why) when it does not name them all or is to be
    renewed (:func:`renewal`); ``now``: the time to judge it by."""
    folder = folder or data_folder() / "tls"
    cert, key = folder / "screen-cert.pem", folder / "screen-key.pem"
    wanted = sorted({*hosts, "localhost", "127.0.0.1"})
    now = now or datetime.datetime.now(datetime.UTC)
    why = None
    if cert.exists() and key.exists():
        why = (" for this network's address" if not set(wanted) <= set(_names(cert))
               else renewal(cert, now))
        if why is None:
            return cert, key
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _make(cert, key, wanted, now)
    except OSError as error:
        raise TLSError(f"Cannot make the screen's certificate in {folder}: "
                       f"{error.strerror or error}.") from error
    if why is not None:
        told(RENEWED.format(why=why))
    return cert, key


def renewal(cert: Path, now: datetime.datetime) -> str | None:
    """Why the certificate at ``cert`` is to be made again (words for
    :data:`RENEWED`), or None: it ends within :data:`RENEW_DAYS` days, lacks
    ``serverAuth``, or is valid longer than :data:`VALID_DAYS` days."""
    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID

    refused = " (it was not a server certificate phones accept)"
    try:
        loaded = x509.load_pem_x509_certificate(cert.read_bytes())
        usage = loaded.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except (OSError, ValueError, x509.ExtensionNotFound):
        return refused
    ends = loaded.not_valid_after_utc
    if ends - now < datetime.timedelta(days=RENEW_DAYS):
        return f" (it {'ended' if ends <= now else 'ends'} on {ends:%d %B %Y})"
    if (ExtendedKeyUsageOID.SERVER_AUTH not in usage
            or ends - loaded.not_valid_before_utc > datetime.timedelta(days=VALID_DAYS)):
        return refused
    return None


def checked_pair(cert: Path, key: Path) -> tuple[Path, Path]:
    """A certificate and key the user gave, if they can be read and belong together."""
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as error:
        raise TLSError(f"Cannot use the certificate {cert} with the key {key}: "
                       f"{getattr(error, 'strerror', None) or error}.") from error
    return cert, key


def _names(cert: Path) -> list[str]:
    """The host names and addresses a certificate is for (none if unreadable)."""
    from cryptography import x509

    try:
        loaded = x509.load_pem_x509_certificate(cert.read_bytes())
        names = loaded.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (OSError, ValueError, x509.ExtensionNotFound):
        return []
    return [*names.get_values_for_type(x509.DNSName),
            *(str(a) for a in names.get_values_for_type(x509.IPAddress))]


def _make(cert: Path, key: Path, hosts: list[str], now: datetime.datetime) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    private = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "The referee's screen")])
    begins = now - datetime.timedelta(days=1)  # (a phone's clock may be a little behind)
    certificate = (
        x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
        .public_key(private.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(begins)
        .not_valid_after(begins + datetime.timedelta(days=VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False,
                                     key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, key_cert_sign=False, crl_sign=False,
                                     encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(private.public_key()),
                       critical=False)
        .sign(private, hashes.SHA256())
    )
    secret = private.private_bytes(serialization.Encoding.PEM,
                                   serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption())
    fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(secret)
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
