// cordon: confine, run and classify commands for AI agents.
//
//   cordon probe   [--json] [--backend B]
//   cordon confine --mode M [--workspace DIR] [--backend B] [--json] -- ARGV...
//   cordon run     [options] (-c 'COMMAND' | -- PROGRAM ARGS...)
//   cordon mcp     [options]                  (an MCP server on stdin/stdout)
//   cordon session show|set|revoke FILE ...   (a session log: policy, grants, audit trail)
//   cordon config show [--json] [--profile NAME] [options]   (the effective settings)
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <signal.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "policy/display.hpp"

namespace cordon::cli {

int usage_error(std::string_view command, std::string_view message) {
    std::cerr << command << ": " << message << '\n';
    return exit_usage;
}

int internal_error(std::string_view command, std::string_view what) noexcept {
    try {
        // One line, whatever the exception's text holds (a path's bytes, a newline).
        std::cerr << command << ": internal error: " << cordon::policy::shown_safely(what) << '\n';
    } catch (...) {
        // Nothing more can be said; the exit code still says it.
    }
    return exit_internal_error;
}

}  // namespace cordon::cli

namespace {

int cordon_main(int argc, char** argv, std::string& running) {
    using namespace cordon::cli;
    // A reader of cordon's output that goes away (`cordon run ... | head -1`) must not kill
    // cordon before it has ended the command's tree: writes fail with EPIPE instead. The program
    // decides this; the library never touches signal dispositions. Commands start with every
    // disposition at its default (spawn.hpp).
    ::signal(SIGPIPE, SIG_IGN);
    CLI::App app{"cordon: confined process execution for AI agents", "cordon"};
    app.require_subcommand(1);
    bool verbose = false;
    app.add_flag("-v,--verbose", verbose, "Log what cordon does (to stderr)");
    app.set_version_flag("--version", std::string("cordon ") + CORDON_VERSION,
                         "Print cordon's version and exit");

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

    auto probe = add_probe_command(app);
    auto confine = add_confine_command(app, command);
    auto run = add_run_command(app, command);
    auto mcp = add_mcp_command(app);
    auto session = add_session_command(app);
    auto config = add_config_command(app);

    try {
        app.parse(static_cast<int>(kept.size()), kept.data());
    } catch (const CLI::CallForHelp&) {
        const auto subs = app.get_subcommands();
        std::cout << (subs.empty() ? app.help() : subs.front()->help());
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
        // One line: which command and what is wrong. CLI11's messages are single lines.
        std::string context = "cordon";
        for (const auto* sub : app.get_subcommands())
            context += " " + sub->get_name();
        return usage_error(context, error.what());
    }

    // Logs go to cordon's own stderr, never into a child's pipes; quiet unless --verbose.
    auto logger = spdlog::stderr_color_mt("cordon");
    logger->set_pattern("cordon: [%l] %v");
    spdlog::set_default_logger(logger);
    spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn);

    const std::string& name = app.get_subcommands().front()->get_name();
    running = "cordon " + name;
    if (name == "probe") return probe();
    if (name == "confine") return confine();
    if (name == "mcp") return mcp();
    if (name == "session") return session();
    if (name == "config") return config();
    return run();
}

}  // namespace

// An exception that escapes a command is a bug of cordon's, never a crash: it is caught here, so
// that the stack unwinds (a running command's tree is ended by its owners' destructors), and ends
// as one line on stderr and exit_internal_error. Standard output holds nothing of it: every JSON
// document is serialised whole before its first byte is written.
int main(int argc, char** argv) {
    std::string context = "cordon";
    try {
        return cordon_main(argc, argv, context);
    } catch (const std::exception& error) {
        return cordon::cli::internal_error(context, error.what());
    } catch (...) {
        return cordon::cli::internal_error(context, "an exception that is not std::exception");
    }
}
