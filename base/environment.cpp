// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cordon/environment.hpp"

#include "base/secret_shapes.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace cordon::runtime {

namespace {

char upper(char c) noexcept {
    return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
}

// True when `text` holds `marker` (upper case) at `at`, in any case.
bool holds_at(std::string_view text, std::size_t at, std::string_view marker) noexcept {
    if (at > text.size() || text.size() - at < marker.size()) return false;
    for (std::size_t i = 0; i < marker.size(); ++i) {
        if (upper(text[at + i]) != marker[i]) return false;
    }
    return true;
}

bool starts_with(std::string_view text, std::string_view marker) noexcept {
    return holds_at(text, 0, marker);
}

bool ends_with(std::string_view text, std::string_view marker) noexcept {
    return text.size() >= marker.size() && holds_at(text, text.size() - marker.size(), marker);
}

// True when `marker` occurs in `name` at a place `counts` accepts (any case).
template <typename Counts>
bool occurs(std::string_view name, std::string_view marker, Counts counts) noexcept {
    for (std::size_t at = 0; at + marker.size() <= name.size(); ++at) {
        if (holds_at(name, at, marker) && counts(at)) return true;
    }
    return false;
}

bool occurs(std::string_view name, std::string_view marker) noexcept {
    return occurs(name, marker, [](std::size_t) { return true; });
}

bool is_scheme_char(char c) noexcept {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
}

bool any_matches(const std::vector<std::string>& patterns, std::string_view name) noexcept {
    return std::any_of(patterns.begin(), patterns.end(),
                       [name](const std::string& pattern) { return name_matches(pattern, name); });
}

}  // namespace

bool is_credential_name(std::string_view name) noexcept {
    // Anywhere in the name. PASS covers PASSWORD, PASSWD and PASSPHRASE (PATH has no PASS).
    static constexpr std::array<std::string_view, 6> markers{"KEY",   "PASS",   "SECRET",
                                                             "TOKEN", "COOKIE", "PRIVATE"};
    for (std::string_view marker : markers) {
        if (occurs(name, marker)) return true;
    }
    if (occurs(name, "CRED")) return true;
    // AUTH as in NPM_AUTH, SSH_AUTH_SOCK, HTTP_AUTHORIZATION, XAUTHORITY; not the AUTHOR of
    // GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL, which git commit needs.
    if (occurs(name, "AUTH", [name](std::size_t at) {
            return !holds_at(name, at + 4, "OR") || holds_at(name, at + 6, "I");
        })) {
        return true;
    }
    // SESSION as in AWS_SESSION_TOKEN, SESSION_COOKIE, DBUS_SESSION_BUS_ADDRESS; not the names
    // that say what kind of login session this is (XDG_SESSION_TYPE, DESKTOP_SESSION).
    if (!starts_with(name, "XDG_SESSION_") &&
        !(name.size() == 15 && starts_with(name, "DESKTOP_SESSION")) && occurs(name, "SESSION")) {
        return true;
    }
    // Personal access tokens (GITHUB_PAT) and MySQL's MYSQL_PWD; not PWD and OLDPWD.
    return ends_with(name, "_PAT") || ends_with(name, "_PWD");
}

namespace {

// Whether `credential` holds for the user information (`user` or `user:password`) of any URL in
// `value` (a list of URLs too).
template <typename Credential>
bool any_url_user(std::string_view value, Credential credential, bool web_only = false) noexcept {
    for (std::size_t at = value.find("://"); at != std::string_view::npos;
         at = value.find("://", at + 3)) {
        std::size_t scheme = at;
        while (scheme > 0 && is_scheme_char(value[scheme - 1]))
            --scheme;
        if (scheme == at || std::isalpha(static_cast<unsigned char>(value[scheme])) == 0) continue;
        if (web_only && !ends_with(value.substr(scheme, at - scheme), "HTTP") &&
            !ends_with(value.substr(scheme, at - scheme), "HTTPS")) {
            continue;
        }
        // The authority ends where the path, query or fragment starts, or at a space (a list of
        // URLs); the user information ends at its last '@', since passwords hold raw '@'s.
        const std::string_view rest = value.substr(at + 3);
        const std::string_view authority =
            rest.substr(0, std::min(rest.find_first_of("/?#"), rest.find_first_of(" \t\n")));
        const auto last_at = authority.rfind('@');
        if (last_at != std::string_view::npos && credential(authority.substr(0, last_at)))
            return true;
    }
    return false;
}

}  // namespace

bool has_url_password(std::string_view value) noexcept {
    return any_url_user(value, [](std::string_view user_info) {
        const auto colon = user_info.find(':');
        return colon != std::string_view::npos && colon + 1 < user_info.size();
    });
}

namespace {

bool is_base64url(char c) noexcept {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
}

// A JSON Web Token anywhere: three base64url segments joined by '.', the header a JSON object
// ("eyJ" is how `{"` starts in base64).
bool has_jwt(std::string_view value) noexcept {
    for (std::size_t at = value.find("eyJ"); at != std::string_view::npos;
         at = value.find("eyJ", at + 1)) {
        if (at > 0 && is_base64url(value[at - 1])) continue;
        std::size_t i = at;
        int segments = 0;
        while (true) {
            const std::size_t start = i;
            while (i < value.size() && is_base64url(value[i]))
                ++i;
            if (i - start < 4) break;
            ++segments;
            if (segments == 3 || i >= value.size() || value[i] != '.') break;
            ++i;
        }
        if (segments == 3) return true;
    }
    return false;
}

// Tokens whose issuers give them a prefix of their own, so that they can be found where they
// leak (base/secret_shapes.hpp, shared with the content scan of the homes); and a PEM private key.
bool has_token_prefix(std::string_view value) noexcept {
    return base::has_issuer_token(value) ||
           value.find("PRIVATE KEY-----") != std::string_view::npos;
}

// An HTTP credential in a header's words: `Bearer <token>`, `Basic <token>`, an Authorization
// header (OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20..., git's http.extraheader).
bool has_auth_header(std::string_view value) noexcept {
    for (std::string_view scheme : {std::string_view("BEARER"), std::string_view("BASIC")}) {
        if (occurs(value, scheme, [&](std::size_t at) {
                if (at > 0 && std::isalnum(static_cast<unsigned char>(value[at - 1])) != 0)
                    return false;
                std::size_t i = at + scheme.size();
                // A space, or its URL encoding.
                if (holds_at(value, i, "%20")) {
                    i += 3;
                } else if (i < value.size() && (value[i] == ' ' || value[i] == '\t')) {
                    ++i;
                } else {
                    return false;
                }
                std::size_t end = i;
                bool random = false;  // a digit or an upper-case letter: not an English word
                while (end < value.size() && value[end] != ' ' && value[end] != ',' &&
                       value[end] != ';') {
                    const auto c = static_cast<unsigned char>(value[end]);
                    random = random || std::isdigit(c) != 0 || (end > i && std::isupper(c) != 0);
                    ++end;
                }
                return end - i >= 8 && random;
            })) {
            return true;
        }
    }
    return occurs(value, "AUTHORIZATION", [&](std::size_t at) {
        const std::size_t after = at + 13;
        return after < value.size() && (value[after] == ':' || value[after] == '=');
    });
}

// `name=value` whose name ends in what a credential is called, as in a connection string
// (`AccountKey=...;`, `Password=...`), a URL's query (`?access_token=...`, Azure's `&sig=`) or a
// list of headers. make's own `--jobserver-auth=` (in MAKEFLAGS) is no credential.
bool has_credential_pair(std::string_view value) noexcept {
    for (std::size_t eq = value.find('='); eq != std::string_view::npos;
         eq = value.find('=', eq + 1)) {
        std::size_t start = eq;
        while (start > 0 &&
               (std::isalnum(static_cast<unsigned char>(value[start - 1])) != 0 ||
                value[start - 1] == '_' || value[start - 1] == '-' || value[start - 1] == '.')) {
            --start;
        }
        const std::string_view name = value.substr(start, eq - start);
        std::size_t end = eq + 1;
        while (end < value.size() && value[end] != ';' && value[end] != '&' && value[end] != ' ' &&
               value[end] != ',')
            ++end;
        if (name.empty() || end == eq + 1) continue;
        if (ends_with(name, "JOBSERVER-AUTH")) continue;
        // A switch (client.auth=false) is a setting, not a credential.
        static constexpr std::array<std::string_view, 9> switches{
            "true", "false", "yes", "no", "on", "off", "none", "0", "1"};
        const std::string_view setting = value.substr(eq + 1, end - eq - 1);
        if (std::find(switches.begin(), switches.end(), setting) != switches.end()) continue;
        // The name ends in what a credential is called: AccountKey, SharedAccessSignature,
        // Password, access_token, api-key, -Dapp.password; not keyboard=.
        static constexpr std::array<std::string_view, 13> endings{
            "KEY",  "PASSWORD", "PASSWD",    "PWD",           "PW",         "SECRET",     "TOKEN",
            "AUTH", "SIG",      "SIGNATURE", "AUTHORIZATION", "CREDENTIAL", "CREDENTIALS"};
        for (std::string_view ending : endings) {
            if (ends_with(name, ending)) return true;
        }
    }
    return false;
}

// GIT_CONFIG_COUNT, GIT_CONFIG_KEY_<n>, GIT_CONFIG_VALUE_<n>: configuration git takes from the
// environment, one entry a KEY and VALUE pair.
bool is_git_config_variable(std::string_view name) noexcept {
    if (name == "GIT_CONFIG_COUNT") return true;
    for (std::string_view prefix :
         {std::string_view("GIT_CONFIG_KEY_"), std::string_view("GIT_CONFIG_VALUE_")}) {
        if (name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix &&
            std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()), name.end(),
                        [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
            return true;
        }
    }
    return false;
}

// The whole set goes when one entry is a credential (a value of secret shape, or a key such as
// credential.helper or http.extraHeader), and stays whole otherwise: never a KEY without its
// VALUE, nor a COUNT without its entries. What `keep` names stays.
void drop_git_config_with_secrets(std::map<std::string, std::string>& merged,
                                  const environment_policy& policy) {
    bool secret = false;
    for (const auto& [name, value] : merged) {
        if (!is_git_config_variable(name) || name == "GIT_CONFIG_COUNT") continue;
        std::string key(value);
        for (char& c : key)
            c = upper(c);
        const bool is_key = name.rfind("GIT_CONFIG_KEY_", 0) == 0;
        if (is_secret_value(value) ||
            (is_key && (is_credential_name(key) || occurs(key, "EXTRAHEADER")))) {
            secret = true;
        }
    }
    if (!secret) return;
    std::erase_if(merged, [&policy](const auto& item) {
        return is_git_config_variable(item.first) && !any_matches(policy.keep, item.first);
    });
}

}  // namespace

bool is_secret_value(std::string_view value) noexcept {
    // A web URL whose user is a token: https://ghp_...@github.com, https://<20+ characters>@host
    // (an ssh:// or git@ user is an account's name, however long).
    const bool token_user = any_url_user(
        value,
        [](std::string_view user_info) {
            return user_info.find(':') == std::string_view::npos && user_info.size() >= 20;
        },
        /*web_only=*/true);
    return has_url_password(value) || token_user || has_jwt(value) || has_token_prefix(value) ||
           has_auth_header(value) || has_credential_pair(value);
}

bool is_minimal_environment_name(std::string_view name) noexcept {
    static constexpr std::array<std::string_view, 9> names{
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TERM", "TMPDIR", "TZ"};
    return name.rfind("LC_", 0) == 0 || std::find(names.begin(), names.end(), name) != names.end();
}

bool name_matches(std::string_view pattern, std::string_view name) noexcept {
    // The usual linear glob match: on a mismatch, the last `*` takes one character more.
    std::size_t p = 0;
    std::size_t n = 0;
    std::size_t star = std::string_view::npos;
    std::size_t resume = 0;
    while (n < name.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
            ++p;
            ++n;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            resume = n;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            n = ++resume;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*')
        ++p;
    return p == pattern.size();
}

bool is_name_pattern(std::string_view pattern) noexcept {
    return !pattern.empty() && std::all_of(pattern.begin(), pattern.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '*' || c == '?';
    });
}

const std::map<std::string, std::string>& non_interactive_defaults() {
    static const std::map<std::string, std::string> defaults{
        {"NO_COLOR", "1"}, {"TERM", "dumb"}, {"PAGER", "cat"}, {"GIT_PAGER", "cat"}};
    return defaults;
}

std::vector<std::string> build_environment(
    const char* const* parent,
    const std::map<std::string, std::optional<std::string>>& explicit_vars,
    const environment_policy& policy) {
    std::map<std::string, std::string> merged;
    for (const char* const* entry = parent; entry != nullptr && *entry != nullptr; ++entry) {
        std::string_view text(*entry);
        auto equals = text.find('=');
        if (equals == std::string_view::npos || equals == 0) continue;
        std::string_view name = text.substr(0, equals);
        std::string_view value = text.substr(equals + 1);
        if (any_matches(policy.unset, name)) continue;
        if (!any_matches(policy.keep, name)) {
            if (policy.clear && !is_minimal_environment_name(name)) continue;
            // git's configuration triples are judged whole, below (GIT_CONFIG_KEY_n has KEY in
            // its name, and dropping it alone leaves a COUNT that makes every git fail).
            if (!is_git_config_variable(name) && is_credential_name(name)) continue;
            // A search path's value is directories (PATH, LD_LIBRARY_PATH, CLASSPATH, ...):
            // dropping one for a shape a directory name happens to have would break every
            // command; the minimal set likewise.
            if (!is_git_config_variable(name) && !is_minimal_environment_name(name) &&
                !ends_with(name, "PATH") && is_secret_value(value)) {
                continue;
            }
        }
        merged.insert_or_assign(std::string(name), std::string(value));
    }
    drop_git_config_with_secrets(merged, policy);
    for (const auto& [name, value] : non_interactive_defaults())
        merged[name] = value;
    if (!policy.unset.empty()) {
        std::erase_if(
            merged, [&policy](const auto& item) { return any_matches(policy.unset, item.first); });
    }
    for (const auto& [name, value] : explicit_vars) {
        if (value) {
            merged[name] = *value;
        } else {
            merged.erase(name);
        }
    }
    std::vector<std::string> out;
    out.reserve(merged.size());
    for (const auto& [name, value] : merged)
        out.push_back(name + "=" + value);
    return out;
}

}  // namespace cordon::runtime
