// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The `cordon` command line as one CLI11 app, built in one place for the program (cli/main.cpp)
// and for cordon-docgen (cli/docgen.cpp), which writes the man pages and the bash completion from
// it: what they say about an option is what the parser was given, so the two cannot drift.
//
// Beyond its options, each command has a few words of its own (command_doc): how it is called
// where CLI11's usage line cannot say it (the words after "--"), a note, and one example. Its
// --help ends with them, and its man page shows them.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::cli {

struct cordon_app {
    std::unique_ptr<CLI::App> app;
    // What each subcommand does once the command line is parsed, by the subcommand's name.
    std::map<std::string, std::function<int()>, std::less<>> actions;
};

// The app with its global options and every subcommand. `command` is everything after the first
// "--" on the command line, split off before parsing (cli/main.cpp says why).
[[nodiscard]] cordon_app make_app(std::vector<std::string> command = {});

// The nearest of `names` to `word` within a few edits (a third of its length, at least two), or
// empty: the suggestion for a mistyped command or option.
[[nodiscard]] std::string nearest(std::string_view word, const std::vector<std::string>& names);

// Why CLI11 refused `words` (cordon's arguments before "--"), said better where it can be: the
// command it was at ("cordon run") and one line naming the unknown command or option, the
// nearest valid name and where the help is; an empty message when CLI11's own says it best.
struct refused_words {
    std::string command;
    std::string message;
};
[[nodiscard]] refused_words explain_refusal(const CLI::App& app,
                                            const std::vector<std::string>& words);

// What CLI::App::help() is given to start `command`'s usage line with its whole path: the path
// of the command above it ("cordon session" for `set`).
[[nodiscard]] std::string help_prefix(const CLI::App& command);

// The command `path` names (`cordon help session set`), or null with `refused` saying why.
[[nodiscard]] const CLI::App* help_target(const CLI::App& app, const std::vector<std::string>& path,
                                          std::string& refused);

struct command_doc {
    std::string_view path;               // the words after `cordon`: "run", "session set"
    std::string_view synopsis = {};      // "" where CLI11's usage line says it all
    std::string_view note = {};          // "" or a paragraph
    std::string_view example = {};       // a command line
    std::string_view example_does = {};  // what it does: "run the tests, ..."
};

// One for each command that does something (a subcommand without subcommands of its own).
[[nodiscard]] std::span<const command_doc> command_docs();

}  // namespace cordon::cli
