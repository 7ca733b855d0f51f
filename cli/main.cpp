// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon: confine, run and classify commands for AI agents.
//
//   cordon probe   [--json] [--backend B]
//   cordon confine --mode M [--workspace DIR] [--backend B] [--json] -- ARGV...
//   cordon run     [options] (-c 'COMMAND' | -- PROGRAM ARGS...)
//   cordon mcp     [options]                  (an MCP server on stdin/stdout)
//   cordon session show|set|revoke FILE ...   (a session log: policy, grants, audit trail)
//   cordon config show [--json] [--profile NAME] [options]   (the effective settings)
//
// The command line itself is built by cli/app.hpp, which cordon-docgen turns into the man pages
// and the bash completion.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/start_signals.hpp"
#include "cordon/limits.hpp"
#include "cordon/logging.hpp"

namespace {

// A parent may start cordon with a standard descriptor closed (`cordon run ... >&-`). Whatever
// cordon opened first would then be its stdout: its JSON record written into an event loop's
// descriptor, or into a file. Each closed one is held by /dev/null opened the other way round
// (read-only for stdout and stderr, write-only for stdin), so that using it fails with EBADF, as
// it would closed, and nothing cordon opens can take its number.
void hold_closed_standard_descriptors() noexcept {
    for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
        if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
        // open() takes the lowest free number: this one, the lower ones being open by now.
        (void)::open("/dev/null", (fd == STDIN_FILENO ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    }
}

int cordon_main(int argc, char** argv, std::string& running) {
    using namespace cordon::cli;
    // Nothing of the signal state a parent passed down stays (cli/start_signals.hpp): the program
    // decides this; the library never touches signal dispositions.
    reset_inherited_signals();
    hold_closed_standard_descriptors();
    // The descriptors of many runs at once (a `cordon mcp` server's jobs, their pipes and proxy
    // connections) need more than the usual soft limit of 1024: cordon takes its hard limit, and
    // every command it starts gets the soft limit cordon was started with back (a program using
    // select() breaks above 1024). Before any thread: the program decides this, the library never
    // changes a limit of its host process (cordon/limits.hpp).
    cordon::runtime::raise_descriptor_limit();
    // Everything after the first "--" is the command, verbatim. It is cut off before CLI11 sees
    // the arguments: CLI11 lets a multi-value option consume "--", after which the command's own
    // words would be parsed as cordon's options (`--mode danger-full-access` among them).
    std::vector<std::string> words(argv + 1, argv + argc);
    std::vector<std::string> command;
    if (auto dashes = std::find(words.begin(), words.end(), "--"); dashes != words.end()) {
        command.assign(dashes + 1, words.end());
        words.erase(dashes, words.end());
    }
    std::vector<const char*> kept{argv[0]};
    for (const auto& word : words)
        kept.push_back(word.c_str());

    cordon_app cordon = make_app(std::move(command));
    CLI::App& app = *cordon.app;
    // `cordon help [COMMAND...]`: that command's help, as `cordon COMMAND --help` prints it.
    if (!words.empty() && words.front() == "help") {
        std::string refused;
        const CLI::App* target =
            help_target(app, std::vector<std::string>(words.begin() + 1, words.end()), refused);
        if (target == nullptr) return usage_error("cordon help", refused);
        std::cout << (target == &app ? app.help() : target->help(help_prefix(*target)));
        return 0;
    }
    try {
        app.parse(static_cast<int>(kept.size()), kept.data());
    } catch (const CLI::CallForHelp&) {
        // The help of the (sub)command asked about, its usage line starting with "cordon".
        std::cout << app.help();
        return 0;
    } catch (const CLI::CallForAllHelp&) {
        std::cout << app.help("", CLI::AppFormatMode::All);
        return 0;
    } catch (const CLI::CallForVersion& version) {
        std::cout << version.what() << '\n';
        return 0;
    } catch (const bad_option_value& error) {
        // A bad value of one of cordon's options: its own message (cli/options.hpp).
        return usage_error(error.command(), error.what());
    } catch (const CLI::ParseError& error) {
        // One line: which command and what is wrong, with the nearest valid name of a mistyped
        // command or option and where the help is. CLI11's messages are single lines.
        const refused_words refused = explain_refusal(app, words);
        if (!refused.message.empty()) return usage_error(refused.command, refused.message);
        return usage_error(refused.command,
                           std::string(error.what()) + "; try '" + refused.command + " --help'");
    }

    // Logs go to cordon's own stderr, never into a child's pipes (cordon/logging.hpp, as for any
    // program of the library): warnings and errors only, unless --verbose.
    cordon::set_log_level(app.count("--verbose") > 0 ? cordon::log_level::debug
                                                     : cordon::log_level::warn);

    const std::string& name = app.get_subcommands().front()->get_name();
    running = "cordon " + name;
    // `cordon run` releases them itself, once it catches them (cli/run_command.cpp).
    if (name != "run") release_interrupts();
    return cordon.actions.at(name)();
}

}  // namespace

// An exception that escapes a command is a bug of cordon's, never a crash: it is caught here, so
// that the stack unwinds (a running command's tree is ended by its owners' destructors), and ends
// as one line on stderr and exit_internal_error. Standard output holds nothing of it: every JSON
// document is serialised whole before its first byte is written.
int main(int argc, char** argv) {
    std::string context = "cordon";
    try {
        const int status = cordon_main(argc, argv, context);
        // What a command printed (a probe's JSON, `config show`, a session's events, the help) is
        // its answer: one that never reached a closed or full stdout is a failure, never a silent
        // success. (A run's record says why itself: cli/run_output.cpp.)
        std::cout.flush();
        if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
            const int failed = cordon::cli::internal_error(context, "cannot write to stdout");
            return status != 0 ? status : failed;
        }
        return status;
    } catch (const std::exception& error) {
        return cordon::cli::internal_error(context, error.what());
    } catch (...) {
        return cordon::cli::internal_error(context, "an exception that is not std::exception");
    }
}
