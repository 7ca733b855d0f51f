// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The environment a command starts with: the caller's own (or, with environment_policy::clear, its
// minimal part), minus anything that looks like a credential, plus the non-interactive defaults,
// with explicitly passed variables winning over everything. The policy's `keep` rescues names the
// scrub or the clear would drop; its `unset` removes names whatever else says.
//
//     request.environment.clear = true;            // start from PATH, HOME, LANG, ...
//     request.environment.keep = {"NPM_CONFIG_*"};  // and keep these
//     request.env["CI"] = "1";                      // explicit: wins over everything
//
// The scrub is a heuristic over names and values (docs/execution.md lists it): a credential under
// an innocent name with an innocent-looking value still passes, which is why callers can also
// unset names, or start from the minimal set.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include "cordon/export.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::runtime {

// How the inherited environment is filtered, per call. Patterns are names in which `*` matches
// any run of characters and `?` any one character (case-sensitive, as names are).
struct environment_policy {
    // Start from the minimal set (minimal_environment_name) instead of everything inherited.
    bool clear = false;
    // Kept even when the scrub or the clear would drop them.
    std::vector<std::string> keep;
    // Always removed: over `keep`, the minimal set and the non-interactive defaults. Only an
    // explicitly passed variable wins over it.
    std::vector<std::string> unset;

    friend bool operator==(const environment_policy&, const environment_policy&) = default;
};

// True when `name` is credential-shaped (any case): it contains KEY, PASS (PASSWORD, PASSWD,
// PASSPHRASE), SECRET, TOKEN, CRED, AUTH (but not AUTHOR as in GIT_AUTHOR_NAME; AUTHORIZATION and
// AUTHORITY do count), SESSION (but not in XDG_SESSION_* and DESKTOP_SESSION, which name the
// login session's kind), COOKIE or PRIVATE, or it ends in _PAT or _PWD.
[[nodiscard]] bool is_credential_name(std::string_view name) noexcept;

// True when `value` holds a URL with a password in it, scheme://user:password@host, anywhere
// (a list of URLs too): DATABASE_URL=postgres://u:hunter2@db, https_proxy=http://u:p@proxy:3128.
[[nodiscard]] bool has_url_password(std::string_view value) noexcept;

// True when `value` holds a secret by its shape, whatever the variable's name: a URL with a
// password (has_url_password) or with a token for its user (https://<20+ characters>@host), a JSON
// Web Token, a token with its issuer's prefix (ghp_, github_pat_, glpat-, xoxb-, sk-ant-, npm_,
// ... with 16 more characters), an AWS access key id, a PEM private key, an HTTP credential
// (`Bearer <token>`, `Basic <token>`, an `Authorization:` or `Authorization=` header), or a
// `name=value` pair whose name is credential-shaped (is_credential_name, and `sig`, `pwd`: a
// connection string's AccountKey= or Password=, a URL query's access_token= or sig=).
[[nodiscard]] bool is_secret_value(std::string_view value) noexcept;

// True for the names --env-clear keeps: PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_*, TERM,
// TMPDIR, TZ.
[[nodiscard]] bool is_minimal_environment_name(std::string_view name) noexcept;

// True when `pattern` (`*` and `?` as wildcards) matches the whole of `name`.
[[nodiscard]] bool name_matches(std::string_view pattern, std::string_view name) noexcept;

// True when `pattern` is a name or a glob over names: not empty, only letters, digits, `_` and
// the wildcards `*` and `?`.
[[nodiscard]] bool is_name_pattern(std::string_view pattern) noexcept;

// NO_COLOR=1 TERM=dumb PAGER=cat GIT_PAGER=cat.
[[nodiscard]] const std::map<std::string, std::string>& non_interactive_defaults();

// `parent` is a NULL-terminated "NAME=value" array (environ). In order: the parent's entries that
// `policy` lets through (unset drops; keep keeps; clear drops what is not minimal; the scrub drops
// credential-shaped names and values), the defaults, `policy.unset` again (over the defaults),
// then the explicit entries, which override; one whose value is nullopt removes the name. The
// result is sorted by name.
[[nodiscard]] std::vector<std::string> build_environment(
    const char* const* parent,
    const std::map<std::string, std::optional<std::string>>& explicit_vars,
    const environment_policy& policy = {});

}  // namespace cordon::runtime

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using runtime::environment_policy;
}  // namespace cordon
CORDON_PUBLIC_END
