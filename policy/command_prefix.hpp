// What an `allowed-for-session` grant covers: the command's prefix, under the same mode.
//
// A grant must never cover more than the person answering saw. So only a *simple* command has a
// prefix: plain words, optionally quoted, with no expansion, redirection, list, pipeline,
// substitution, glob or leading assignment (`LD_PRELOAD=x git` is not `git`). Its prefix is the
// program and, when the next word looks like a subcommand (`git push`, `npm test`, `cargo
// build`), that word too. A later command is covered when it is simple and its words begin with
// the prefix. Any other command can only be granted as its exact text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/session_log.hpp"

namespace cordon::policy {

// The words of a simple command, unquoted; nullopt when `command` is not one.
[[nodiscard]] std::optional<std::vector<std::string>> simple_command_words(
    std::string_view command);

// The grant that allowing `command` for the session under `mode` records (id left empty).
[[nodiscard]] session_grant grant_for(std::string_view command, sandbox::sandbox_mode mode);

// Whether `grant` covers running `command` under `mode`.
[[nodiscard]] bool covers(const session_grant& grant, std::string_view command,
                          sandbox::sandbox_mode mode);

// The grant as a person reads it: "`git push …`" or "exactly `make && make install`", with
// whatever would not print as itself escaped (display.hpp).
[[nodiscard]] std::string describe(const session_grant& grant);

}  // namespace cordon::policy
