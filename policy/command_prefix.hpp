// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What an `allowed-for-session` grant covers: the command's prefix, under the same mode.
//
// A grant must never cover more than the person answering saw. So only a *simple* command has a
// prefix: plain words, optionally quoted, with no expansion, redirection, list, pipeline,
// substitution, glob or leading assignment (`LD_PRELOAD=x git` is not `git`). Its prefix is the
// program and, when the next word looks like a subcommand (`git push`, `npm test`, `cargo
// build`), that word too; with no such word, every word given; and every word up to the last
// that is not a plain operand (below), so that the grant names the options it was given and
// covers its own command. Any other command can only be granted as its exact text.
//
// A later command is covered when it is simple, its words begin with the prefix, and every word
// after the prefix is a plain operand: made of the characters a word needs no quoting for, not
// starting with `-`, `+` or `@`, holding no `=`. What a program does with an option or an
// assignment is up to the program, and too often it is "run this": `git push
// --receive-pack=CMD`, `git -c core.sshCommand=CMD fetch`, `make SHELL=CMD`, `make --eval`,
// `npm --script-shell=CMD`, `find -exec`, `gcc @file` (options read from a file), `git push
// origin +main` (a forced push). A grant names its options or does not cover them.
//
// A command whose program runs another command given in its operands (`env`, `sudo`, `xargs`,
// `timeout`, `nice`, `bash`, `python3`, `sed`, `ssh`, `npx`, `.`, `eval`, ...) or whose
// subcommand does (`npm exec`, `uv run`, `docker run`, `git submodule foreach`, `git bisect run`,
// `nix shell`, ...) is granted only as its exact text, and a prefix grant never covers one:
// whatever follows such a word is a command nobody was asked about.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/session_log.hpp"

namespace cordon::policy {

// The words of a simple command, unquoted; nullopt when `command` is not one.
[[nodiscard]] std::optional<std::vector<std::string>> simple_command_words(
    std::string_view command);

// Whether a simple command's words run another command given in them (above).
[[nodiscard]] bool runs_a_command(const std::vector<std::string>& words);

// Whether `word`, after a grant's prefix, is a plain operand a prefix grant may cover (above).
[[nodiscard]] bool plain_operand(std::string_view word);

// The grant that allowing `command` for the session under `mode` records (id left empty).
[[nodiscard]] session_grant grant_for(std::string_view command, sandbox::sandbox_mode mode);

// Whether `grant` covers running `command` under `mode` with `network`: never a call that asks
// for more network than the grant was given under (covers() of network_request.hpp).
[[nodiscard]] bool covers(const session_grant& grant, std::string_view command,
                          sandbox::sandbox_mode mode, const network_request& network = {});

// The grant as a person reads it, with the rule of what it covers: "`git push …` (… = more
// plain words, none starting with -, + or @ or holding =)" or "exactly `make && make
// install`", with whatever would not print as itself escaped (display.hpp).
[[nodiscard]] std::string describe(const session_grant& grant);

}  // namespace cordon::policy
