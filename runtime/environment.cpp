// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cordon/environment.hpp"

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

bool has_url_password(std::string_view value) noexcept {
    for (std::size_t at = value.find("://"); at != std::string_view::npos;
         at = value.find("://", at + 3)) {
        std::size_t scheme = at;
        while (scheme > 0 && is_scheme_char(value[scheme - 1]))
            --scheme;
        if (scheme == at || std::isalpha(static_cast<unsigned char>(value[scheme])) == 0) continue;
        // The authority ends where the path, query or fragment starts, or at a space (a list of
        // URLs); the user information ends at its last '@', since passwords hold raw '@'s.
        const std::string_view rest = value.substr(at + 3);
        const std::string_view authority =
            rest.substr(0, std::min(rest.find_first_of("/?#"), rest.find_first_of(" \t\n")));
        const auto last_at = authority.rfind('@');
        if (last_at == std::string_view::npos) continue;
        const std::string_view user_info = authority.substr(0, last_at);
        const auto colon = user_info.find(':');
        if (colon != std::string_view::npos && colon + 1 < user_info.size()) return true;
    }
    return false;
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
            if (is_credential_name(name) || has_url_password(value)) continue;
        }
        merged.insert_or_assign(std::string(name), std::string(value));
    }
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
