// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cli/run_options.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>

#include "cli/options.hpp"
#include "cli/shell_quote.hpp"
#include "cli/stdin_pump.hpp"
#include "cordon/policy.hpp"
#include "cordon/unique_fd.hpp"
#include "policy/display.hpp"
#include "policy/escalation.hpp"
#include "sandbox/runner_path.hpp"

namespace cordon::cli {

namespace {

// The message for a bad value of an option whose text is quoted in it: `before` "TEXT" `after`.
std::function<std::string(const std::string&)> quoting(std::string before, std::string after) {
    return [before = std::move(before), after = std::move(after)](const std::string& text) {
        return before + " \"" + text + "\" " + after;
    };
}

// The command's stdin for --stdin-file: a regular file, a FIFO, or "-" (cordon's own stdin,
// which may be a terminal or a description the caller shares read-write), copied through a pipe
// (stdin_pump.hpp), so that the command gets bytes and nothing else. A regular file's own
// description is never handed over: through it (fchmod, futimens, fsetxattr, flock) the command
// could change the host file's metadata even where no wall lets it reach the file by its path.
// Nothing is read into cordon's memory. A path is opened without blocking (open(2) of a FIFO
// would wait for a writer); anything but a regular file or a FIFO is refused.
std::variant<unique_fd, std::string> open_stdin_file(const std::string& path) {
    const auto failed = [&path](std::string_view what) {
        return std::string(what) + " --stdin-file " + path + ": " + std::strerror(errno);
    };
    unique_fd source;
    if (path == "-") {
        source = unique_fd(::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3));
        if (!source) return failed("cannot use cordon's stdin for");
    } else {
        source = unique_fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        if (!source) return failed("cannot open");
        struct stat st {};
        if (::fstat(source.get(), &st) != 0) return failed("cannot open");
        if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
            return "--stdin-file " + path + " is " +
                   (S_ISDIR(st.st_mode) ? "a directory" : "not a regular file or a pipe") +
                   " (give a file, a pipe, or - for cordon's own stdin)";
        }
    }
    auto pipe = start_stdin_pump(std::move(source));
    if (auto* error = std::get_if<std::error_code>(&pipe)) {
        return "cannot copy --stdin-file " + path + ": " + error->message();
    }
    return std::get<unique_fd>(std::move(pipe));
}

}  // namespace

void add_run_options(CLI::App& sub, run_options& options) {
    add_path_options(sub, options.paths);
    const auto rule = [](std::function<std::string(const std::string&)> message,
                         bool empty_is_unset) {
        return value_rule{std::string(run_command_name), std::move(message), empty_is_unset};
    };
    const bool given = false;  // an empty value is a bad one
    add_policy_options(sub, options.policy, run_command_name);
    sub.add_option("--escalate", options.escalate,
                   "Ask (on the terminal) to run this once under a wider MODE")
        ->transform(mode_value(rule(
            [](const std::string& text) { return "--escalate: " + unknown_mode(text); }, given)))
        ->type_name("TEXT");
    offer_choices(sub.add_option("--escalate-network", options.escalate_network,
                                 "Ask (on the terminal) to run this once with more network: proxy "
                                 "(with --escalate-domain) or allow"),
                  names_of({sandbox::network_policy::proxy, sandbox::network_policy::allow}));
    sub.add_option("--escalate-domain", options.escalate_domains,
                   "Ask (on the terminal) to run this once with domain D allowed through the "
                   "proxy, beside the run's own (repeatable; implies --escalate-network proxy)");
    sub.add_option("--justification", options.justification,
                   "Why the wider mode is needed: one sentence, shown to the person asked")
        ->each([&options](const std::string&) { options.has_justification = true; });
    sub.add_option("--workdir", options.workdir, "Working directory (default: the workspace)")
        ->type_name("DIR");
    add_limit_options(sub, options.limits, run_command_name);
    sub.add_option("--env", options.env,
                   "NAME=VALUE, repeatable; wins over the scrub and every --env-* option")
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->check(assignment_value(rule(quoting("invalid --env", "(expected NAME=VALUE)"), given)));
    add_env_options(sub, options.environment, run_command_name);
    sub.add_option("--stdin-file", options.stdin_file, "Feed this file (or - for stdin)")
        ->type_name("FILE");
    sub.add_flag("--tty", options.tty,
                 "Run it under a pseudo-terminal of its own, to which cordon relays its own "
                 "terminal: keys (raw), size, resizes");
    sub.add_option("--tty-size", options.tty_size,
                   "The pseudo-terminal's size, e.g. 24x80 (default: cordon's own terminal's, "
                   "else 24x80); implies --tty")
        ->transform(terminal_size_value(
            rule(quoting("invalid --tty-size",
                         "(ROWSxCOLS: 1 to 500 rows, 2 to 1000 columns, e.g. 24x80)"),
                 given)))
        ->type_name("ROWSxCOLS");
    sub.add_flag("--json", options.json, "Print the record as JSON instead of streaming");
    sub.add_option("-c", options.shell_command, "Run COMMAND with bash -c")
        ->each([&options](const std::string&) { options.has_shell_command = true; });
}

namespace {

// --escalate-network and --escalate-domain as a network request (nullopt: neither was given),
// or the usage error.
std::optional<std::variant<policy::network_request, std::string>> escalated_network(
    const std::string& policy_text, const std::vector<std::string>& domains) {
    if (policy_text.empty() && domains.empty()) return std::nullopt;
    policy::network_request out{sandbox::network_policy::proxy, {}};
    if (!policy_text.empty()) {
        const auto policy = sandbox::parse_network_policy(policy_text);
        if (!policy || *policy == sandbox::network_policy::deny) {
            return "invalid --escalate-network \"" + policy_text + "\" (proxy or allow)";
        }
        out.policy = *policy;
    }
    if (out.policy == sandbox::network_policy::allow) {
        if (!domains.empty()) return "--escalate-domain needs --escalate-network proxy";
        return out;
    }
    for (const std::string& raw : domains) {
        auto domain = canonical_domain(raw);
        if (auto* error = std::get_if<domain_error>(&domain)) {
            return "invalid --escalate-domain \"" + raw + "\": " + error->reason;
        }
        std::string& canonical = std::get<std::string>(domain);
        if (std::find(out.domains.begin(), out.domains.end(), canonical) == out.domains.end()) {
            out.domains.push_back(std::move(canonical));
        }
    }
    // Proxy to no new domain lets nothing more through: nothing to ask for.
    if (out.domains.empty()) return "--escalate-network proxy needs --escalate-domain";
    return out;
}

}  // namespace

setting_flags setting_flags_of(const run_options& options) {
    return {options.policy, options.limits, options.paths, options.environment};
}

std::variant<validated, std::string> validate(run_options& options, const settings& deployed) {
    validated out;
    out.escalate = options.escalate;
    if (auto network = escalated_network(options.escalate_network, options.escalate_domains)) {
        if (auto* wrong = std::get_if<std::string>(&*network)) return *wrong;
        out.escalate_network = std::get<policy::network_request>(std::move(*network));
    }
    const char* field = "--escalate";
    if (!options.escalate && out.escalate_network) {
        field = options.escalate_network.empty() ? "--escalate-domain" : "--escalate-network";
    }
    if (auto wrong = policy::check_escalation_fields(
            options.escalate.has_value() || out.escalate_network.has_value(),
            options.has_justification ? std::optional<std::string>(options.justification)
                                      : std::nullopt,
            field)) {
        return *wrong;
    }
    out.justification = options.justification;

    if (options.has_shell_command && !options.argv.empty()) {
        return "give either -c 'COMMAND' or -- PROGRAM ARGS..., not both";
    }
    if (options.has_shell_command) {
        if (options.shell_command.find_first_not_of(" \t\r\n") == std::string::npos) {
            return "empty command";
        }
        // bash from a directory no command can write: one planted on PATH by an earlier run
        // would otherwise stand in for every later -c command.
        const std::filesystem::path bash = sandbox::find_trusted_executable("bash");
        if (bash.empty()) {
            return "-c needs bash in a system directory (/usr/local/bin, /usr/bin, /bin, ...); "
                   "none is there: give -- PROGRAM ARGS... instead";
        }
        out.request.argv = {bash.string(), "-c", options.shell_command};
        out.command_text = options.shell_command;
    } else {
        if (options.argv.empty() || options.argv.front().empty()) {
            return "missing command: give -c 'COMMAND' or -- PROGRAM ARGS...";
        }
        out.request.argv = options.argv;
        out.command_text = shell_join(options.argv);
    }

    // A workspace that may become writable (by the mode asked for, or by an escalation) is
    // checked as a workspace-write one.
    const sandbox::sandbox_mode mode = deployed.mode.value;
    const sandbox::sandbox_mode widest =
        out.escalate && policy::is_strictly_wider(*out.escalate, mode) ? *out.escalate : mode;
    auto where = deployment_of(deployed, widest);
    if (auto* message = std::get_if<std::string>(&where)) return *message;
    out.where = std::get<policy::deployment>(std::move(where));
    std::error_code ec;
    if (!options.workdir.empty()) {
        std::filesystem::path workdir = sandbox::canonical_path(options.workdir);
        if (!std::filesystem::is_directory(workdir, ec)) {
            return "workdir is not a directory: " + options.workdir;
        }
        out.request.workdir = workdir;
    }
    for (const auto& entry : options.env) {
        const auto equals = entry.find('=');  // there is one, not first (assignment_value)
        out.request.env[entry.substr(0, equals)] = entry.substr(equals + 1);
    }
    if (options.tty || !options.tty_size.empty()) {
        // Under a terminal the command's input is what is typed, cordon's own stdin relayed
        // (cli/terminal_relay.hpp): a second source would mean two things at once.
        if (!options.stdin_file.empty()) {
            return "--tty with --stdin-file: under --tty the command reads what cordon reads on "
                   "its own stdin, typed into its terminal (pipe the file into cordon instead)";
        }
        out.input_text = "stdin: what cordon itself reads on its stdin, typed into a terminal";
        out.tty = true;
        out.tty_size_given = !options.tty_size.empty();
        // Whatever the size, it is replaced by the real one before the run (run_command.cpp).
        out.request.tty = parse_terminal_size(options.tty_size).value_or(runtime::terminal_size{});
    }
    if (!options.stdin_file.empty()) {
        auto input = open_stdin_file(options.stdin_file);
        if (auto* message = std::get_if<std::string>(&input)) return *message;
        out.request.stdin_fd =
            std::make_shared<const unique_fd>(std::move(std::get<unique_fd>(input)));
        out.input_text = options.stdin_file == "-"
                             ? "stdin: what cordon itself reads on its stdin"
                             : "stdin: the file " + policy::shown_compactly(options.stdin_file);
    }
    return out;
}

void take_settings(runtime::run_request& request, const settings& effective,
                   const policy::resolved_policy& standing) {
    request.mode = standing.mode;
    request.workspace_root = standing.workspace_root;
    request.rules = effective.rules.rules;
    request.network = effective.rules.network;
    request.timeout = unless_default(effective.timeout);
    if (auto bytes = unless_default(effective.max_output)) {
        request.stdout_max_bytes = static_cast<std::size_t>(*bytes);
    }
    request.max_processes = unless_default(effective.max_processes);
    request.max_memory = unless_default(effective.max_memory);
    request.environment = effective.environment();
}

}  // namespace cordon::cli
