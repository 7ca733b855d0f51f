#include "cli/app.hpp"

#include <iostream>
#include <utility>

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
    app.add_flag("-v,--verbose")->description("Log what cordon does (to stderr)");
    app.set_version_flag("--version", std::string("cordon ") + CORDON_VERSION,
                         "Print cordon's version and exit");
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
