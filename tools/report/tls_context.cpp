#include "tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace psw_report {

namespace {

std::string openssl_error() {
    unsigned long e = ERR_get_error();
    std::string s;
    while (e != 0) {
        char buf[256];
        ERR_error_string_n(e, buf, sizeof(buf));
        s = buf;  // the last is the innermost reason
        e = ERR_get_error();
    }
    return s.empty() ? "unknown OpenSSL error" : s;
}

int proto(TlsVersion v) {
    switch (v) {
        case TlsVersion::TLS10: return TLS1_VERSION;
        case TlsVersion::TLS11: return TLS1_1_VERSION;
        case TlsVersion::TLS12: return TLS1_2_VERSION;
        case TlsVersion::TLS13: return TLS1_3_VERSION;
    }
    return TLS1_2_VERSION;
}

// RequestClientCert and RequireAnyClientCert take any certificate, as Go's
// tls package does for them: the chain is not checked.
int accept_any(int, X509_STORE_CTX *) { return 1; }

bool fail(SSL_CTX *ctx, std::string *err, const std::string &field, const std::string &what) {
    *err = field + ": " + what + " (" + openssl_error() + ")";
    SSL_CTX_free(ctx);
    return false;
}

}  // namespace

void *make_tls_context(const WebConfig &web, std::string *err) {
    ERR_clear_error();
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) {
        *err = "cannot create a TLS context (" + openssl_error() + ")";
        return nullptr;
    }
    if (!SSL_CTX_set_min_proto_version(ctx, proto(web.min_version)) ||
        !SSL_CTX_set_max_proto_version(ctx, proto(web.max_version))) {
        fail(ctx, err, "tls_server_config.min_version", "not available in this OpenSSL");
        return nullptr;
    }
    long opts = SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION;
    if (web.prefer_server_cipher_suites) opts |= SSL_OP_CIPHER_SERVER_PREFERENCE;
    SSL_CTX_set_options(ctx, opts);
    if (SSL_CTX_use_certificate_chain_file(ctx, web.cert_file.c_str()) != 1) {
        fail(ctx, err, "tls_server_config.cert_file", "cannot load " + web.cert_file);
        return nullptr;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, web.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
        bool mismatch = ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH;
        fail(ctx, err, "tls_server_config.key_file",
             mismatch ? web.key_file + " does not match the certificate of cert_file" : "cannot load " + web.key_file);
        return nullptr;
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
        fail(ctx, err, "tls_server_config.key_file", "does not match the certificate of cert_file");
        return nullptr;
    }
    if (!web.client_ca_file.empty()) {
        if (SSL_CTX_load_verify_locations(ctx, web.client_ca_file.c_str(), nullptr) != 1) {
            fail(ctx, err, "tls_server_config.client_ca_file", "cannot load " + web.client_ca_file);
            return nullptr;
        }
        STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(web.client_ca_file.c_str());
        if (names) SSL_CTX_set_client_CA_list(ctx, names);  // the CAs a client is told to pick from
    }
    switch (web.client_auth) {
        case ClientAuth::None: SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr); break;
        case ClientAuth::Request: SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, accept_any); break;
        case ClientAuth::RequireAny:
            SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, accept_any);
            break;
        case ClientAuth::VerifyIfGiven: SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr); break;
        case ClientAuth::RequireAndVerify:
            SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
            break;
    }
    // Sessions resumed across civetweb's workers need an id context.
    static const unsigned char sid[] = "pg_stat_waits_report";
    SSL_CTX_set_session_id_context(ctx, sid, sizeof(sid) - 1);
    return ctx;
}

void free_tls_context(void *ctx) { SSL_CTX_free(static_cast<SSL_CTX *>(ctx)); }

}  // namespace psw_report
