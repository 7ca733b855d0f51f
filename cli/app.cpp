// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cli/app.hpp"

#include <algorithm>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "policy/display.hpp"

namespace cordon::cli {

namespace {

constexpr command_doc doc_table[] = {
    {.path = "probe",
     .example = "cordon probe --json",
     .example_does = "report every backend, usable or not, as JSON"},
    {.path = "confine",
     .synopsis = "cordon confine --mode MODE [OPTIONS] -- PROGRAM ARGS...",
     .example = "cordon confine --mode workspace-write -- make test",
     .example_does = "print the argv that `make test` would run as, writing only in the current "
                     "directory"},
    {.path = "run",
     .synopsis = "cordon run [OPTIONS] (-c 'COMMAND' | -- PROGRAM ARGS...)",
     .example = "cordon run --mode workspace-write --timeout 10m -- make test",
     .example_does = "run the tests, writing only in the current directory, for at most ten "
                     "minutes"},
    {.path = "mcp",
     .note = "Tools: bash, job_output, job_write, job_kill, job_list (docs/mcp.md). Every command "
             "runs under --mode (or the session's mode); a bash call may ask for a wider mode, "
             "which the client's user approves through MCP elicitation.",
     .example = "cordon mcp --mode workspace-write --workspace ~/src/app",
     .example_does = "serve an agent whose commands may write in ~/src/app (its MCP client starts "
                     "this)"},
    {.path = "session show",
     .example = "cordon session show ~/.cordon/app.log",
     .example_does = "print the session's mode, approval policy, grants and audit trail"},
    {.path = "session set",
     .example = "cordon session set ~/.cordon/app.log --mode workspace-write",
     .example_does = "let the session's commands write in its workspace from now on"},
    {.path = "session revoke",
     .example = "cordon session revoke ~/.cordon/app.log ap-1f0c9a7e52d4b613",
     .example_does = "end a grant (cordon session show lists their ids)"},
    {.path = "config show",
     .example = "cordon config show --profile ci",
     .example_does = "print the settings a run with --profile ci gets, and where each came from"},
};

std::string example_text(const command_doc& doc) {
    return "Example: " + std::string(doc.example_does) + "\n  " + std::string(doc.example);
}

// What `sub`'s --help ends with: for a command, its synopsis, note and example; for a group of
// commands (`cordon session`), the example of each.
void add_footer(CLI::App& sub, const std::string& path) {
    std::string footer;
    const auto add = [&footer](std::string_view text) {
        if (text.empty()) return;
        if (!footer.empty()) footer += "\n\n";
        footer += text;
    };
    for (const command_doc& doc : doc_table) {
        if (doc.path == path) {
            add(doc.synopsis);
            add(doc.note);
            add(example_text(doc));
        } else if (doc.path.starts_with(path + " ")) {
            add(example_text(doc));
        }
    }
    sub.footer(footer);
    for (CLI::App* child : sub.get_subcommands([](CLI::App*) { return true; }))
        add_footer(*child, path + " " + child->get_name());
}

}  // namespace

cordon_app make_app(std::vector<std::string> command) {
    cordon_app out;
    out.app =
        std::make_unique<CLI::App>("cordon: confined process execution for AI agents", "cordon");
    CLI::App& app = *out.app;
    app.require_subcommand(1);
    // cordon's own options are taken after a command too (`cordon run --verbose ...`): what a
    // command does not know falls through to cordon's. Inherited by every command added below.
    app.fallthrough();
    app.add_flag("-v,--verbose")->description("Log what cordon does (to stderr)");
    app.set_version_flag("-V,--version", std::string("cordon ") + CORDON_VERSION,
                         "Print cordon's version and exit");
    app.footer("cordon help COMMAND, or cordon COMMAND --help: a command's options and example");
    out.actions.emplace("probe", add_probe_command(app));
    out.actions.emplace("confine", add_confine_command(app, command));
    out.actions.emplace("run", add_run_command(app, std::move(command)));
    out.actions.emplace("mcp", add_mcp_command(app));
    out.actions.emplace("session", add_session_command(app));
    out.actions.emplace("config", add_config_command(app));
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
        add_footer(*sub, sub->get_name());
    return out;
}

namespace {

// Optimal string alignment distance: insertions, deletions, substitutions and transpositions.
std::size_t distance(std::string_view a, std::string_view b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
            }
        }
    }
    return d[a.size()][b.size()];
}

std::vector<std::string> option_names(const CLI::App& app) {
    std::vector<std::string> out;
    for (const CLI::Option* option : app.get_options()) {
        for (const std::string& name : option->get_lnames())
            out.push_back("--" + name);
        for (const std::string& name : option->get_snames())
            out.push_back("-" + name);
    }
    return out;
}

bool is_option_of(const CLI::App& app, std::string_view word) {
    const std::string name(word.substr(0, word.find('=')));
    const std::vector<std::string> names = option_names(app);
    return std::find(names.begin(), names.end(), name) != names.end();
}

std::string path_of(const CLI::App& app) {
    return app.get_parent() == nullptr ? "cordon"
                                       : path_of(*app.get_parent()) + " " + app.get_name();
}

const CLI::App* command_named(const CLI::App& app, const std::string& word) {
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        if (sub->check_name(word)) return sub;
    }
    return nullptr;
}

std::vector<std::string> command_names(const CLI::App& app) {
    std::vector<std::string> out;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        out.push_back(sub->get_name());
    return out;
}

// "unknown command "rn" (did you mean "run"?); try 'cordon --help'".
std::string unknown(const CLI::App& at, std::string_view what, const std::string& word,
                    const std::vector<std::string>& names) {
    std::string out = "unknown " + std::string(what) + " \"" + word + "\"";
    if (const std::string near = nearest(word, names); !near.empty()) {
        out += " (did you mean \"" + near + "\"?)";
    }
    return out + "; try '" + path_of(at) + " --help'";
}

}  // namespace

std::string nearest(std::string_view word, const std::vector<std::string>& names) {
    std::string best;
    std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
    for (const std::string& name : names) {
        const std::size_t d = distance(word, name);
        if (d < best_distance) {
            best = name;
            best_distance = d;
        }
    }
    return best;
}

refused_words explain_refusal(const CLI::App& app, const std::vector<std::string>& words) {
    const CLI::App* at = &app;
    for (const std::string& word : words) {
        if (word.starts_with("-")) {
            if (is_option_of(*at, word) || is_option_of(app, word)) continue;
            const std::string name = word.substr(0, word.find('='));
            std::vector<std::string> names = option_names(*at);
            if (at != &app) {
                const std::vector<std::string> global = option_names(app);
                names.insert(names.end(), global.begin(), global.end());
            }
            return {path_of(*at), unknown(*at, "option", name, names)};
        }
        if (const CLI::App* sub = command_named(*at, word); sub != nullptr) {
            at = sub;
            continue;
        }
        // A word that is neither: a command where one is expected, else an option's value or a
        // positional argument, which CLI11's own message covers.
        if (at->get_require_subcommand_min() > 0) {
            std::vector<std::string> names = command_names(*at);
            if (at == &app) names.push_back("help");
            return {path_of(*at), unknown(*at, "command", word, names)};
        }
        break;
    }
    if (at->get_require_subcommand_min() > 0) {
        return {path_of(*at), "a command is required (" +
                                  [&] {
                                      std::string list;
                                      for (const std::string& name : command_names(*at))
                                          list += (list.empty() ? "" : ", ") + name;
                                      return list;
                                  }() +
                                  "); try '" + path_of(*at) + " --help'"};
    }
    return {path_of(*at), ""};
}

std::string help_prefix(const CLI::App& command) {
    return command.get_parent() == nullptr ? std::string() : path_of(*command.get_parent());
}

const CLI::App* help_target(const CLI::App& app, const std::vector<std::string>& path,
                            std::string& refused) {
    const CLI::App* at = &app;
    for (const std::string& word : path) {
        const CLI::App* sub = command_named(*at, word);
        if (sub == nullptr) {
            refused = unknown(*at, "command", word, command_names(*at));
            return nullptr;
        }
        at = sub;
    }
    return at;
}

std::span<const command_doc> command_docs() {
    return doc_table;
}

std::span<const exit_status> exit_statuses(std::string_view command) {
    if (command == "probe") return probe_exit_statuses;
    if (command == "confine") return confine_exit_statuses;
    if (command == "run") return run_exit_statuses;
    if (command == "mcp") return mcp_exit_statuses;
    if (command == "session") return session_exit_statuses;
    if (command == "config") return config_exit_statuses;
    return {};
}

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
