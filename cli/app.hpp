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
