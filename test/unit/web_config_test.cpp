// serve's web config (exporter-toolkit format), its basic auth and the
// access guard: what is accepted, what is refused and by which field's
// name, and who gets the report page.
#include <gtest/gtest.h>

#include <openssl/evp.h>

#include "basic_auth.h"
#include "cli.h"
#include "http_guard.h"
#include "web_config.h"

using namespace psw_report;

namespace {

// crypt("secret", "$2b$05$abcdefghijklmnopqrstuu") as Perl's crypt() (the C
// library's) computes it; cost 5 keeps the tests quick.
const char kSecretHash[] = "$2b$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a";

std::string parse_error(const std::string &yaml) {
    WebConfig c;
    std::string err;
    EXPECT_FALSE(parse_web_config(yaml, "/etc/x", &c, &err)) << yaml;
    return err;
}

WebConfig parse_ok(const std::string &yaml) {
    WebConfig c;
    std::string err;
    EXPECT_TRUE(parse_web_config(yaml, "/etc/x", &c, &err)) << err;
    return c;
}

std::string basic(const std::string &user_pw) {
    std::string out(4 * ((user_pw.size() + 2) / 3) + 1, '\0');
    int n = EVP_EncodeBlock(reinterpret_cast<unsigned char *>(&out[0]),
                            reinterpret_cast<const unsigned char *>(user_pw.data()), static_cast<int>(user_pw.size()));
    out.resize(static_cast<size_t>(n));
    return "Basic " + out;
}

}  // namespace

TEST(WebConfig, FullConfigIsRead) {
    WebConfig c = parse_ok(std::string("tls_server_config:\n  cert_file: server.crt\n  key_file: /k/server.key\n"
                                       "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n"
                                       "  min_version: TLS13\n  prefer_server_cipher_suites: false\n"
                                       "http_server_config:\n  http2: false\n"
                                       "basic_auth_users:\n  alice: ") + kSecretHash + "\n");
    EXPECT_TRUE(c.tls);
    EXPECT_EQ(c.cert_file, "/etc/x/server.crt");  // relative to the config's directory
    EXPECT_EQ(c.key_file, "/k/server.key");
    EXPECT_EQ(c.client_ca_file, "/etc/x/ca.crt");
    EXPECT_EQ(c.client_auth, ClientAuth::RequireAndVerify);
    EXPECT_EQ(c.min_version, TlsVersion::TLS13);
    EXPECT_EQ(c.max_version, TlsVersion::TLS13);
    EXPECT_FALSE(c.prefer_server_cipher_suites);
    ASSERT_EQ(c.users.size(), 1u);
    EXPECT_EQ(c.users.at("alice"), kSecretHash);
    EXPECT_TRUE(c.has_login());
}

TEST(WebConfig, EmptyOrTlsLessConfigServesPlainHttp) {
    EXPECT_FALSE(parse_ok("").tls);
    EXPECT_FALSE(parse_ok("# nothing\n").tls);
    // exporter-toolkit: a section without certificate, key or client auth is no TLS.
    WebConfig c = parse_ok("tls_server_config:\n  min_version: TLS12\n");
    EXPECT_FALSE(c.tls);
    EXPECT_FALSE(c.has_login());
    EXPECT_EQ(parse_ok("tls_server_config:\n  cert_file: a\n  key_file: b\n").min_version, TlsVersion::TLS12);
}

TEST(WebConfig, UnsupportedFieldsAreRefusedByName) {
    for (const char *f : {"cipher_suites: [TLS_AES_128_GCM_SHA256]", "curve_preferences: [X25519]",
                          "client_allowed_sans: [x]", "cert: x", "key: x", "client_ca: x"}) {
        std::string field = std::string(f).substr(0, std::string(f).find(':'));
        std::string err = parse_error(std::string("tls_server_config:\n  cert_file: a\n  key_file: b\n  ") + f + "\n");
        EXPECT_EQ(err.rfind("tls_server_config." + field + ": ", 0), 0u) << err;
        EXPECT_NE(err.find("not supported"), std::string::npos) << err;
    }
    EXPECT_EQ(parse_error("http_server_config:\n  headers:\n    X-Frame-Options: deny\n")
                  .rfind("http_server_config.headers: not supported", 0),
              0u);
    EXPECT_EQ(parse_error("http_server_config:\n  http2: true\n").rfind("http_server_config.http2: ", 0), 0u);
    EXPECT_EQ(parse_error("rate_limit:\n  burst: 1\n").rfind("rate_limit: not supported", 0), 0u);
    EXPECT_EQ(parse_error("tls_server_config:\n  certfile: a\n"), "tls_server_config.certfile: unknown field");
    EXPECT_EQ(parse_error("basic_auth:\n  a: b\n"), "basic_auth: unknown field");
}

TEST(WebConfig, InconsistentTlsIsRefused) {
    EXPECT_EQ(parse_error("tls_server_config:\n  cert_file: a\n").rfind("tls_server_config.key_file: missing", 0), 0u);
    EXPECT_EQ(parse_error("tls_server_config:\n  key_file: a\n").rfind("tls_server_config.cert_file: missing", 0), 0u);
    const std::string base = "tls_server_config:\n  cert_file: a\n  key_file: b\n";
    EXPECT_EQ(parse_error(base + "  min_version: TLS13\n  max_version: TLS12\n")
                  .rfind("tls_server_config.min_version: is above", 0),
              0u);
    EXPECT_EQ(parse_error(base + "  min_version: SSL3\n").rfind("tls_server_config.min_version: \"SSL3\"", 0), 0u);
    EXPECT_EQ(parse_error(base + "  client_auth_type: Sometimes\n").rfind("tls_server_config.client_auth_type:", 0), 0u);
    EXPECT_EQ(parse_error(base + "  client_ca_file: ca\n").rfind("tls_server_config.client_auth_type: missing", 0), 0u);
    EXPECT_EQ(parse_error(base + "  client_auth_type: VerifyClientCertIfGiven\n")
                  .rfind("tls_server_config.client_ca_file: missing", 0),
              0u);
    EXPECT_EQ(parse_error(base + "  prefer_server_cipher_suites: maybe\n")
                  .rfind("tls_server_config.prefer_server_cipher_suites: must be true or false", 0),
              0u);
    WebConfig any = parse_ok(base + "  client_auth_type: RequireAnyClientCert\n");
    EXPECT_EQ(any.client_auth, ClientAuth::RequireAny);
    EXPECT_FALSE(any.has_login());  // an unverified certificate is no login
}

TEST(WebConfig, BadYamlAndUsersAreRefused) {
    EXPECT_EQ(parse_error("tls_server_config: [").rfind("not valid YAML: ", 0), 0u);
    EXPECT_EQ(parse_error("- a\n- b\n"), "web config: must be a mapping");
    EXPECT_EQ(parse_error("basic_auth_users:\n  alice: secret\n").rfind("basic_auth_users.alice: not a bcrypt hash", 0),
              0u);
    EXPECT_EQ(parse_error("basic_auth_users:\n  alice: '$1$abc$def'\n").rfind("basic_auth_users.alice: not a bcrypt", 0),
              0u);
    std::string two = std::string("basic_auth_users:\n  alice: ") + kSecretHash + "\n  alice: " + kSecretHash + "\n";
    EXPECT_EQ(parse_error(two), "basic_auth_users.alice: given twice");
    std::string colon = std::string("basic_auth_users:\n  'a:b': ") + kSecretHash + "\n";
    EXPECT_EQ(parse_error(colon).rfind("basic_auth_users.a:b: ", 0), 0u);
}

TEST(WebConfig, LoadNamesTheFile) {
    WebConfig c;
    std::string err;
    EXPECT_FALSE(load_web_config("/nonexistent/web.yml", &c, &err));
    EXPECT_EQ(err, "/nonexistent/web.yml: cannot read the web config file");
}

TEST(BasicAuth, BcryptAndHeader) {
    EXPECT_TRUE(bcrypt_hash_valid(kSecretHash));
    EXPECT_FALSE(bcrypt_hash_valid(std::string(kSecretHash).substr(0, 59)));
    EXPECT_TRUE(bcrypt_matches("secret", kSecretHash));
    EXPECT_FALSE(bcrypt_matches("Secret", kSecretHash));
    EXPECT_FALSE(bcrypt_matches("", kSecretHash));
    std::string u, p;
    ASSERT_TRUE(parse_basic_authorization(basic("alice:se:cret"), &u, &p));
    EXPECT_EQ(u, "alice");
    EXPECT_EQ(p, "se:cret");  // only the first colon splits
    ASSERT_TRUE(parse_basic_authorization(basic("a:"), &u, &p));  // padding "=="
    EXPECT_EQ(u, "a");
    EXPECT_EQ(p, "");
    EXPECT_FALSE(parse_basic_authorization("Basic !!!!", &u, &p));
    EXPECT_FALSE(parse_basic_authorization("Bearer abcd", &u, &p));
    EXPECT_FALSE(parse_basic_authorization(basic("nocolon"), &u, &p));
    std::map<std::string, std::string> users = {{"alice", kSecretHash}};
    EXPECT_TRUE(basic_auth_ok(users, basic("alice:secret").c_str()));
    EXPECT_FALSE(basic_auth_ok(users, basic("alice:wrong").c_str()));
    EXPECT_FALSE(basic_auth_ok(users, basic("bob:secret").c_str()));
    EXPECT_FALSE(basic_auth_ok(users, nullptr));
}

TEST(HttpGuard, LoopbackPeers) {
    for (const char *a : {"127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1"})
        EXPECT_TRUE(is_loopback_peer(a)) << a;
    for (const char *a : {"10.0.0.1", "128.0.0.1", "::2", "::ffff:10.0.0.1", "fe80::1", "::127.0.0.1", "", "localhost",
                          "127.0.0.1.evil", "0.0.0.0"})
        EXPECT_FALSE(is_loopback_peer(a)) << a;
}

TEST(HttpGuard, Decisions) {
    WebConfig open;
    auto req = [](const char *m, const char *path, const char *peer, const char *auth = nullptr) {
        Request r;
        r.method = m;
        r.path = path;
        r.peer = peer;
        r.authorization = auth;
        return r;
    };
    EXPECT_EQ(guard_request(open, req("GET", "/metrics", "192.0.2.1")).status, 0);
    EXPECT_EQ(guard_request(open, req("HEAD", "/probe", "192.0.2.1")).status, 0);
    EXPECT_EQ(guard_request(open, req("GET", "/report/default", "127.0.0.1")).status, 0);
    EXPECT_EQ(guard_request(open, req("GET", "/report/default", "::ffff:127.0.0.1")).status, 0);
    Decision d = guard_request(open, req("GET", "/report/default", "192.0.2.1"));
    EXPECT_EQ(d.status, 403);
    EXPECT_EQ(d.reason.find('\n'), std::string::npos);  // one line
    EXPECT_EQ(guard_request(open, req("GET", "/report", "::ffff:192.0.2.1")).status, 403);
    EXPECT_EQ(guard_request(open, req("POST", "/metrics", "127.0.0.1")).status, 405);
    EXPECT_EQ(guard_request(open, req("OPTIONS", "/", "127.0.0.1")).status, 405);

    WebConfig login;
    login.users["alice"] = kSecretHash;
    const std::string ok = basic("alice:secret"), bad = basic("alice:nope");
    EXPECT_EQ(guard_request(login, req("GET", "/metrics", "127.0.0.1")).status, 401);
    EXPECT_EQ(guard_request(login, req("GET", "/", "127.0.0.1", bad.c_str())).status, 401);
    EXPECT_EQ(guard_request(login, req("GET", "/metrics", "192.0.2.1", ok.c_str())).status, 0);
    EXPECT_EQ(guard_request(login, req("GET", "/report/default", "192.0.2.1", ok.c_str())).status, 0);

    WebConfig certs;  // verified client certificates are a login too
    certs.tls = true;
    certs.client_auth = ClientAuth::RequireAndVerify;
    EXPECT_EQ(guard_request(certs, req("GET", "/report/default", "192.0.2.1")).status, 0);
    certs.client_auth = ClientAuth::VerifyIfGiven;
    EXPECT_EQ(guard_request(certs, req("GET", "/report/default", "192.0.2.1")).status, 403);
}

TEST(HttpGuard, ServeCommandLine) {
    ParseResult p = parse_args({"serve", "--web.config.file", "/etc/web.yml"});
    ASSERT_TRUE(p.error.empty()) << p.error;
    EXPECT_EQ(p.options.web_config_path, "/etc/web.yml");
    EXPECT_FALSE(parse_args({"serve", "--web.config.file"}).error.empty());
    // serve --help begins with who may read what.
    std::string help = serve_usage_text();
    EXPECT_LT(help.find("/report/NAME shows statement"), help.find("Usage:"));
    EXPECT_NE(help.find("127.0.0.0/8"), std::string::npos);
}
