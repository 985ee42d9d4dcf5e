/* The "libssl.so" that pg_stat_waits_report's civetweb loads.
 *
 * civetweb as Debian 12 builds it (1.15, OpenSSL 1.1 API, OpenSSL loaded at
 * run time by the names "libssl.so" and "libcrypto.so") looks up
 * SSL_get_peer_certificate, which OpenSSL 3 has only as a macro for
 * SSL_get1_peer_certificate: civetweb keeps a NULL pointer and calls it on
 * every TLS connection (Debian's own civetweb binary crashes the same way).
 * The program's DT_RPATH makes civetweb's dlopen("libssl.so") find this
 * object (Makefile, install-report). It needs libssl.so.3, so every other
 * function civetweb looks up in it resolves there; it adds the missing one
 * with OpenSSL 1.1's meaning (a new reference that the caller frees, as
 * civetweb does). Nothing else. */
#include <openssl/ssl.h>

#undef SSL_get_peer_certificate
X509 *SSL_get_peer_certificate(const SSL *s);

X509 *SSL_get_peer_certificate(const SSL *s) { return SSL_get1_peer_certificate(s); }
