// HTTP basic authentication against bcrypt hashes (the web config's
// basic_auth_users). bcrypt is libxcrypt's crypt_rn, base64 is OpenSSL's
// decoder; nothing here hashes by itself. PostgreSQL-free.
#pragma once

#include <map>
#include <string>

namespace psw_report {

// A bcrypt hash libxcrypt can check against ($2a$, $2b$ or $2y$, 60 characters).
bool bcrypt_hash_valid(const std::string &hash);

// Whether password hashes to hash (compared in constant time).
bool bcrypt_matches(const std::string &password, const std::string &hash);

// Splits an Authorization header "Basic base64(user:password)".
bool parse_basic_authorization(const std::string &header, std::string *user, std::string *password);

// Whether the header names a user of users with its password. An unknown
// user costs a bcrypt run as well, so response times do not tell which names
// exist.
bool basic_auth_ok(const std::map<std::string, std::string> &users, const char *authorization);

}  // namespace psw_report
