// The OpenSSL server context of serve's TLS, built from the web config
// before anything listens, so that a bad certificate, key or CA file stops
// the start with the field's name. civetweb takes it through its
// external_ssl_ctx callback and only does the I/O.
#pragma once

#include <string>

#include "web_config.h"

namespace psw_report {

// Builds the context (an SSL_CTX *, owned by the caller: free_tls_context).
// nullptr and *err naming the field and OpenSSL's reason on failure.
void *make_tls_context(const WebConfig &web, std::string *err);
void free_tls_context(void *ctx);

}  // namespace psw_report
