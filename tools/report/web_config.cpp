#include "web_config.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>

#include "basic_auth.h"

namespace psw_report {

namespace {

// Documented exporter-toolkit fields that this tool does not implement, and
// why; they are refused so that nobody believes they took effect.
const std::map<std::string, std::string> kUnsupported = {
    {"tls_server_config.cert", "inline certificates are not supported; use cert_file"},
    {"tls_server_config.key", "inline keys are not supported; use key_file"},
    {"tls_server_config.client_ca", "inline client CAs are not supported; use client_ca_file"},
    {"tls_server_config.cipher_suites", "not supported (OpenSSL's system-wide cipher configuration applies)"},
    {"tls_server_config.curve_preferences", "not supported (OpenSSL's default groups apply)"},
    {"tls_server_config.client_allowed_sans", "not supported (any client certificate the CA signed is accepted)"},
    {"http_server_config.headers", "not supported (the report page sets its own security headers)"},
    {"rate_limit", "not supported"},
};

struct Error {
    std::string msg;
};

[[noreturn]] void fail(const std::string &field, const std::string &msg) { throw Error{field + ": " + msg}; }

void refuse_unknown(const std::string &field) {
    auto u = kUnsupported.find(field);
    if (u != kUnsupported.end()) fail(field, u->second);
    fail(field, "unknown field");
}

std::string scalar(const YAML::Node &n, const std::string &field) {
    if (!n.IsScalar()) fail(field, "must be a string");
    return n.Scalar();
}

bool boolean(const YAML::Node &n, const std::string &field) {
    bool b = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, b)) fail(field, "must be true or false");
    return b;
}

// Iterates a mapping, refusing a key that appears twice (YAML forbids it;
// yaml-cpp keeps both, the Go parser of exporter-toolkit refuses them).
template <typename F>
void each_field(const YAML::Node &map, const std::string &prefix, F f) {
    if (map.IsNull()) return;
    if (!map.IsMap()) fail(prefix.empty() ? "web config" : prefix, "must be a mapping");
    std::set<std::string> seen;
    for (const auto &kv : map) {
        std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
        std::string field = prefix.empty() ? key : prefix + "." + key;
        if (!seen.insert(key).second) fail(field, "given twice");
        f(key, field, kv.second);
    }
}

std::string in_dir(const std::string &base_dir, const std::string &file) {
    if (file.empty() || file[0] == '/' || base_dir.empty()) return file;
    return base_dir + "/" + file;
}

TlsVersion tls_version(const std::string &s, const std::string &field) {
    if (s == "TLS10") return TlsVersion::TLS10;
    if (s == "TLS11") return TlsVersion::TLS11;
    if (s == "TLS12") return TlsVersion::TLS12;
    if (s == "TLS13") return TlsVersion::TLS13;
    fail(field, "\"" + s + "\" is not one of TLS10, TLS11, TLS12, TLS13");
}

ClientAuth client_auth(const std::string &s, const std::string &field) {
    if (s == "" || s == "NoClientCert") return ClientAuth::None;
    if (s == "RequestClientCert") return ClientAuth::Request;
    if (s == "RequireAnyClientCert" || s == "RequireClientCert") return ClientAuth::RequireAny;
    if (s == "VerifyClientCertIfGiven") return ClientAuth::VerifyIfGiven;
    if (s == "RequireAndVerifyClientCert") return ClientAuth::RequireAndVerify;
    fail(field, "\"" + s + "\" is not one of NoClientCert, RequestClientCert, RequireAnyClientCert, "
                "VerifyClientCertIfGiven, RequireAndVerifyClientCert");
}

void parse_tls(const YAML::Node &n, const std::string &base_dir, WebConfig *c) {
    bool auth_given = false;
    each_field(n, "tls_server_config", [&](const std::string &key, const std::string &field, const YAML::Node &v) {
        if (key == "cert_file") {
            c->cert_file = in_dir(base_dir, scalar(v, field));
        } else if (key == "key_file") {
            c->key_file = in_dir(base_dir, scalar(v, field));
        } else if (key == "client_ca_file") {
            c->client_ca_file = in_dir(base_dir, scalar(v, field));
        } else if (key == "client_auth_type") {
            std::string s = scalar(v, field);
            auth_given = !s.empty();
            c->client_auth = client_auth(s, field);
        } else if (key == "min_version") {
            c->min_version = tls_version(scalar(v, field), field);
        } else if (key == "max_version") {
            c->max_version = tls_version(scalar(v, field), field);
        } else if (key == "prefer_server_cipher_suites") {
            c->prefer_server_cipher_suites = boolean(v, field);
        } else {
            refuse_unknown(field);
        }
    });
    c->tls = !c->cert_file.empty() || !c->key_file.empty() || !c->client_ca_file.empty() || auth_given;
    if (!c->tls) return;
    if (c->cert_file.empty()) fail("tls_server_config.cert_file", "missing (TLS needs a certificate and its key)");
    if (c->key_file.empty()) fail("tls_server_config.key_file", "missing (TLS needs a certificate and its key)");
    if (c->min_version > c->max_version)
        fail("tls_server_config.min_version", "is above max_version");
    bool verifies = c->client_auth == ClientAuth::VerifyIfGiven || c->client_auth == ClientAuth::RequireAndVerify;
    if (verifies && c->client_ca_file.empty())
        fail("tls_server_config.client_ca_file", "missing (client_auth_type verifies client certificates against it)");
    if (!c->client_ca_file.empty() && c->client_auth == ClientAuth::None)
        fail("tls_server_config.client_auth_type", "missing (client_ca_file is given without a client auth policy)");
}

void parse_http(const YAML::Node &n) {
    each_field(n, "http_server_config", [&](const std::string &key, const std::string &field, const YAML::Node &v) {
        if (key == "http2") {
            // HTTP/1.1 only: accepting "true" would promise what is not served.
            if (boolean(v, field)) fail(field, "HTTP/2 is not supported; set it to false or remove it");
        } else {
            refuse_unknown(field);
        }
    });
}

void parse_users(const YAML::Node &n, WebConfig *c) {
    each_field(n, "basic_auth_users", [&](const std::string &key, const std::string &field, const YAML::Node &v) {
        if (key.empty() || key.find(':') != std::string::npos) fail(field, "a user name is non-empty and has no ':'");
        std::string hash = scalar(v, field);
        if (!bcrypt_hash_valid(hash))
            fail(field, "not a bcrypt hash ($2a$, $2b$ or $2y$, 60 characters; see htpasswd -nBC 10 in the docs)");
        c->users[key] = hash;
    });
}

}  // namespace

const char *tls_version_name(TlsVersion v) {
    switch (v) {
        case TlsVersion::TLS10: return "TLS10";
        case TlsVersion::TLS11: return "TLS11";
        case TlsVersion::TLS12: return "TLS12";
        case TlsVersion::TLS13: return "TLS13";
    }
    return "?";
}

bool parse_web_config(const std::string &text, const std::string &base_dir, WebConfig *out, std::string *err) {
    WebConfig c;
    try {
        YAML::Node root = YAML::Load(text);
        each_field(root, "", [&](const std::string &key, const std::string &field, const YAML::Node &v) {
            if (key == "tls_server_config")
                parse_tls(v, base_dir, &c);
            else if (key == "http_server_config")
                parse_http(v);
            else if (key == "basic_auth_users")
                parse_users(v, &c);
            else
                refuse_unknown(field);
        });
    } catch (const Error &e) {
        *err = e.msg;
        return false;
    } catch (const YAML::Exception &e) {
        *err = "not valid YAML: " + e.msg + " (line " + std::to_string(e.mark.line + 1) + ")";
        return false;
    }
    *out = c;
    return true;
}

bool load_web_config(const std::string &path, WebConfig *out, std::string *err) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        *err = path + ": cannot read the web config file";
        return false;
    }
    std::stringstream ss;
    ss << f.rdbuf();
    size_t slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
    if (!parse_web_config(ss.str(), dir, out, err)) {
        *err = path + ": " + *err;
        return false;
    }
    return true;
}

}  // namespace psw_report
