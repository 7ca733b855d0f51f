// The environment a command starts with: the caller's own, minus anything that looks like a
// credential, plus the non-interactive defaults, with explicitly passed variables winning over
// both. The scrub is a name heuristic (KEY, PASSWORD, SECRET, TOKEN, case-insensitive): a
// credential under another name still passes, which is why callers can also pass `unset`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::runtime {

// True when `name` contains KEY, PASSWORD, SECRET or TOKEN in any case.
[[nodiscard]] bool is_credential_name(std::string_view name) noexcept;

// NO_COLOR=1 TERM=dumb PAGER=cat GIT_PAGER=cat.
[[nodiscard]] const std::map<std::string, std::string>& non_interactive_defaults();

// `parent` is a NULL-terminated "NAME=value" array (environ). Explicit entries override; an entry
// whose value is nullopt removes the name. The result is sorted by name.
[[nodiscard]] std::vector<std::string> build_environment(
    const char* const* parent,
    const std::map<std::string, std::optional<std::string>>& explicit_vars);

}  // namespace cordon::runtime
