// serve's web configuration file (--web.config.file), in the format of the
// Prometheus exporter-toolkit that node_exporter and postgres_exporter read:
// tls_server_config (certificate, key, client certificates, TLS versions)
// and basic_auth_users (bcrypt hashes). The fields of that format this tool
// does not implement are refused by name, never ignored: a config written for
// another exporter must not look safer here than it is. PostgreSQL-free.
#pragma once

#include <map>
#include <string>

namespace psw_report {

// exporter-toolkit's client_auth_type values, in Go's tls.ClientAuthType order.
enum class ClientAuth { None, Request, RequireAny, VerifyIfGiven, RequireAndVerify };
// min_version/max_version: TLS10 .. TLS13.
enum class TlsVersion { TLS10, TLS11, TLS12, TLS13 };

struct WebConfig {
    // TLS is on when tls_server_config names a certificate, key or client
    // authentication (exporter-toolkit: a section with none of them serves
    // plain HTTP); then cert_file and key_file are both required.
    bool tls = false;
    std::string cert_file, key_file, client_ca_file;  // absolute, or relative to the config's directory
    ClientAuth client_auth = ClientAuth::None;
    TlsVersion min_version = TlsVersion::TLS12, max_version = TlsVersion::TLS13;
    bool prefer_server_cipher_suites = true;
    std::map<std::string, std::string> users;  // basic_auth_users: name -> bcrypt hash

    // A login stands between a remote peer and the statement texts of
    // /report/...: passwords, or client certificates that must verify.
    bool has_login() const { return !users.empty() || client_auth == ClientAuth::RequireAndVerify; }
};

// text: the file's YAML; base_dir: the directory relative file names are
// taken from. On error, *err is one line that starts with the field's path
// (e.g. "tls_server_config.cipher_suites: ...") and false is returned.
bool parse_web_config(const std::string &text, const std::string &base_dir, WebConfig *out, std::string *err);

// Reads and parses the file at path; *err names the file or the field.
bool load_web_config(const std::string &path, WebConfig *out, std::string *err);

const char *tls_version_name(TlsVersion v);

}  // namespace psw_report
