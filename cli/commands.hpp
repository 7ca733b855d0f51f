// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The `cordon` subcommands. Each registers its options on a CLI11 app and returns the process
// exit code when run; cli/app.hpp puts them together into the program's command line.
//
// Each exits with the codes of its table below, which its man page prints (cli/docgen.cpp).
// `cordon run`'s has one code per outcome (docs/contract.md, "Exit codes"; a test per code in
// tests/cli/exit_codes_test.cpp). As with timeout(1), a command's own status can take the same
// values; --json tells them apart by "outcome".
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::policy {
struct log_error;
}  // namespace cordon::policy

namespace cordon::cli {

inline constexpr int exit_usage = 2;
inline constexpr int exit_not_approved = 3;
inline constexpr int exit_session_failed = 1;  // `cordon session`
inline constexpr int exit_timeout = 124;
inline constexpr int exit_sandbox_unavailable = 125;
inline constexpr int exit_cannot_execute = 126;
inline constexpr int exit_not_found = 127;
inline constexpr int exit_signal_base = 128;
// The leader's status was lost (someone else reaped it): a failure, never a success.
inline constexpr int exit_status_lost = 1;

// cordon itself failed (every subcommand): an exception escaped. As timeout(1) and env(1) do, the
// code cordon shares with "the sandbox could not run the command": either way cordon, not the
// command, failed.
inline constexpr int exit_internal_error = 125;

// One row of a command's exit status table.
struct exit_status {
    std::string_view code;     // "124", "128+N", "0-255"
    std::string_view outcome;  // the record's outcome, for `cordon run`; otherwise ""
    std::string_view meaning;
};

// Every subcommand's last row.
inline constexpr exit_status internal_error_status{
    "125", "", "cordon itself failed: an exception escaped, reported as one line on stderr"};

inline constexpr exit_status run_exit_statuses[] = {
    {"0-255", "exited", "the command's own exit status"},
    {"2", "not-started, stage policy; usage errors", "cordon refused the invocation"},
    {"3", "no record: ESCALATION_NOT_APPROVED",
     "--escalate was not granted: refused, cancelled, nobody to ask, or not wider than the "
     "standing mode; nothing ran"},
    {"124", "timed-out", "cordon's --timeout ended the command"},
    {"125", "runner-failed; SANDBOX_UNAVAILABLE; not-started, stage cgroup",
     "the sandbox could not run the command (no usable backend, or its runner failed), or a "
     "--max-* limit could not be enforced"},
    {"126", "not-started, other stages",
     "the program could not be executed, or the working directory could not be entered"},
    {"127", "not-started, ENOENT at resolve or exec", "the program was not found"},
    {"128+N", "signaled", "signal N ended the command"},
    {"128+N", "aborted",
     "cordon got signal N (INT, TERM or HUP) and ended the command first, or started nothing "
     "(it came during the set-up)"},
    {"141", "aborted",
     "the reader of cordon's output went away: cordon ended the command as SIGPIPE would have "
     "(128 + SIGPIPE), and says nothing more"},
    {"137", "out-of-memory",
     "the run met its memory limit and the OOM killer ended it (128 + SIGKILL)"},
    {"1", "exited without a status",
     "the leader's status was lost (someone else reaped it): a failure, never a success"},
    internal_error_status,
};
inline constexpr exit_status probe_exit_statuses[] = {
    {"0", "", "a backend is usable, and the report names it"},
    {"2", "", "a usage error"},
    {"125", "", "no backend is usable on this host"},
    internal_error_status,
};
inline constexpr exit_status confine_exit_statuses[] = {
    {"0", "", "the argv was printed"},
    {"2", "", "a usage error, or a policy cordon refuses"},
    {"125", "", "no backend can enforce the mode on this host"},
    internal_error_status,
};
inline constexpr exit_status mcp_exit_statuses[] = {
    {"0", "", "the input ended"},
    {"2", "", "a usage error"},
    {"128+N", "", "signal N (INT, TERM or HUP) stopped the server"},
    internal_error_status,
};
inline constexpr exit_status session_exit_statuses[] = {
    {"0", "", "done"},
    {"1", "",
     "the session log cannot be read or written (a corrupt line: FILE:LINE: reason), or names "
     "no such grant"},
    {"2", "", "a usage error"},
    internal_error_status,
};
inline constexpr exit_status config_exit_statuses[] = {
    {"0", "", "the settings were printed"},
    {"2", "", "a bad option or a bad configuration file"},
    internal_error_status,
};

// The table of the subcommand named `command` ("run"), or an empty one.
[[nodiscard]] std::span<const exit_status> exit_statuses(std::string_view command);

// Prints "cordon <command>: <message>" on one line and returns exit_usage.
int usage_error(std::string_view command, std::string_view message);
// Prints "cordon <command>: internal error: <what>" on one line (what shown safely) and returns
// exit_internal_error.
int internal_error(std::string_view command, std::string_view what) noexcept;

// "FILE:LINE: <reason>" for a session log's corrupt line; otherwise the library's message, which
// names the file.
[[nodiscard]] std::string session_error_text(const std::filesystem::path& file,
                                             const policy::log_error& error);

// Each returns the action to run after parsing.
std::function<int()> add_probe_command(CLI::App& app);
// `command` is everything after the first "--" on the command line, split off before parsing.
std::function<int()> add_confine_command(CLI::App& app, std::vector<std::string> command);
std::function<int()> add_run_command(CLI::App& app, std::vector<std::string> command);
std::function<int()> add_mcp_command(CLI::App& app);
std::function<int()> add_session_command(CLI::App& app);
std::function<int()> add_config_command(CLI::App& app);

}  // namespace cordon::cli
