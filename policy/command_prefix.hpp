// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What an `allowed-for-session` grant covers: exactly the command the person saw, under the same
// mode, in the same working directory. Nothing is guessed.
//
// A grant that guesses which words are safe to vary always misses a program: an option's argument
// given as a separate word reads as an operand (`tar xf a.tar -I gzip` would cover `tar xf a.tar
// -I ./x`, `npm run build --script-shell bash` would cover `--script-shell ./sh`), and a program
// that runs what its operands name (`setarch x86_64 -R ./x`, `corepack pnpm dlx PKG`) is missing
// from any table of such programs. So a grant covers the very argument vector the question showed
// and nothing else. What may vary is said by a person, in an approval rule
// (cordon/approval_rules.hpp), with examples checked when it loads.
//
// A *simple* command (plain words, optionally quoted: no expansion, redirection, list, pipeline,
// substitution, glob or leading assignment) is granted as its words: `git push origin main` and
// `git push 'origin' main` run the same argument vector and are one grant. Any other command is
// granted as its exact text. Either way the grant names the working directory it was asked in
// (`./build.sh` is another program in another directory) and the environment the command started
// with (PATH or NODE_OPTIONS change what runs as much as the words).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/session_log.hpp"

namespace cordon::policy {

// The words of a simple command, unquoted; nullopt when `command` is not one.
[[nodiscard]] std::optional<std::vector<std::string>> simple_command_words(
    std::string_view command);

// Whether `word` is a plain operand: made of the characters a word needs no quoting for, not
// starting with `-`, `+` or `@`, holding no `=`. What a program does with an option or an
// assignment is up to the program, and too often it is "run this": an approval rule's `<operand>`
// stands for such a word only.
[[nodiscard]] bool plain_operand(std::string_view word);

// The grant that allowing `command` for the session under `mode` in `workdir`, starting with
// `environment`, records (id left empty): its words when it is simple (exact false), its text
// otherwise (exact true).
[[nodiscard]] session_grant grant_for(std::string_view command, sandbox::sandbox_mode mode,
                                      const std::filesystem::path& workdir = {},
                                      const std::vector<std::string>& environment = {});

// Whether `grant` covers running `command` under `mode` with `network` in `workdir`, starting
// with `environment`: the same words (or, for an exact grant, the same text), the same mode, the
// same working directory and environment when the grant records them, and never a call that
// asks for more network than the grant was given under (covers() of network_request.hpp). A
// grant logged before grants were exact (a prefix) covers only its own words.
[[nodiscard]] bool covers(const session_grant& grant, std::string_view command,
                          sandbox::sandbox_mode mode, const network_request& network = {},
                          const std::filesystem::path& workdir = {},
                          const std::vector<std::string>& environment = {});

// The grant as a person reads it: "exactly `git push origin main` in /src/app" (words quoted
// where they need it), "exactly the text `make && make install`", with whatever would not print
// as itself escaped (display.hpp).
[[nodiscard]] std::string describe(const session_grant& grant);

// A word as a command line would spell it: as itself when it needs no quoting, else in single
// quotes with whatever would not print as itself escaped.
[[nodiscard]] std::string shown_word(const std::string& word);

}  // namespace cordon::policy
