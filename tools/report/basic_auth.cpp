#include "basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstring>
#include <memory>
#include <vector>

namespace psw_report {

namespace {

bool bcrypt_prefix(const std::string &h) {
    return h.size() == 60 && (h.compare(0, 4, "$2a$") == 0 || h.compare(0, 4, "$2b$") == 0 ||
                              h.compare(0, 4, "$2y$") == 0);
}

// crypt_rn into a heap buffer (struct crypt_data is about 32 KiB: too big
// for a civetweb worker's stack to carry casually). Empty on failure.
std::string crypt_of(const std::string &password, const std::string &setting) {
    auto data = std::make_unique<crypt_data>();
    std::memset(data.get(), 0, sizeof(crypt_data));
    const char *r = crypt_rn(password.c_str(), setting.c_str(), data.get(), sizeof(crypt_data));
    if (!r || r[0] == '*') return std::string();
    return r;
}

// Compared against when the user is unknown: a valid hash of cost 10 (the
// cost htpasswd -B and exporter-toolkit's docs use), of no known password.
const char kDummyHash[] = "$2b$10$abcdefghijklmnopqrstuuoeMZy5eAoNoOweyYM5SObq5w.gq3x86";

}  // namespace

bool bcrypt_hash_valid(const std::string &hash) {
    if (!bcrypt_prefix(hash) || crypt_checksalt(hash.c_str()) != CRYPT_SALT_OK) return false;
    return crypt_of("", hash).size() == hash.size();
}

bool bcrypt_matches(const std::string &password, const std::string &hash) {
    std::string r = crypt_of(password, hash);
    return !r.empty() && r.size() == hash.size() && CRYPTO_memcmp(r.data(), hash.data(), r.size()) == 0;
}

bool parse_basic_authorization(const std::string &header, std::string *user, std::string *password) {
    const std::string scheme = "Basic ";
    if (header.size() <= scheme.size() || strncasecmp(header.c_str(), scheme.c_str(), scheme.size()) != 0) return false;
    // "Basic" followed by spaces only has no credentials (find_first_not_of
    // gives npos, which substr would throw on: a 500 to an unauthenticated
    // client).
    size_t from = header.find_first_not_of(' ', scheme.size());
    if (from == std::string::npos) return false;
    std::string b64 = header.substr(from);
    if (b64.size() % 4 != 0 || b64.size() > 4096) return false;
    std::vector<unsigned char> out(b64.size() / 4 * 3 + 1);
    int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char *>(b64.data()), static_cast<int>(b64.size()));
    if (n < 0) return false;
    // EVP_DecodeBlock decodes the '=' padding as zero bytes.
    if (b64[b64.size() - 1] == '=') n--;
    if (b64[b64.size() - 2] == '=') n--;
    std::string plain(reinterpret_cast<const char *>(out.data()), static_cast<size_t>(n));
    size_t colon = plain.find(':');
    if (colon == std::string::npos) return false;
    *user = plain.substr(0, colon);
    *password = plain.substr(colon + 1);
    return true;
}

bool basic_auth_ok(const std::map<std::string, std::string> &users, const char *authorization) {
    std::string user, password;
    if (!authorization || !parse_basic_authorization(authorization, &user, &password)) return false;
    auto u = users.find(user);
    if (u == users.end()) {
        bcrypt_matches(password, kDummyHash);
        return false;
    }
    return bcrypt_matches(password, u->second);
}

}  // namespace psw_report
