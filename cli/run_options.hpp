// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon run`'s options: registered on CLI11 with the shared validators of cli/options.hpp (so a
// bad mode, backend, approval policy, duration or size is a usage error while the command line is
// parsed), then checked as a whole (validate): the command, the escalation fields, the workspace
// and working directory, the --stdin-file, --tty against the options it excludes. Everything that
// can be wrong with the invocation is found before anything runs.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cli/path_options.hpp"
#include "cli/settings.hpp"
#include "cli/standing.hpp"
#include "cordon/executor.hpp"
#include "cordon/mode.hpp"
#include "cordon/network_request.hpp"
#include "sandbox/local_provider.hpp"

namespace cordon::cli {

inline constexpr std::string_view run_command_name = "cordon run";

// The options as parsed.
struct run_options {
    policy_flags policy;  // --mode, --workspace, --backend, --approval(-timeout), --session
    limit_flags limits;   // --timeout, --max-output, --max-processes, --max-memory
    path_flags paths;     // --writable-root, --deny-read, --protect, --tmp, ...
    std::optional<sandbox::sandbox_mode> escalate;
    std::string escalate_network;               // --escalate-network proxy|allow ("" not given)
    std::vector<std::string> escalate_domains;  // --escalate-domain D
    std::string justification;
    bool has_justification = false;
    std::string workdir;
    std::vector<std::string> env;  // NAME=VALUE each
    env_flags environment;         // --env-clear, --env-keep, --env-unset
    std::string stdin_file;
    bool tty = false;      // --tty
    std::string tty_size;  // --tty-size ROWSxCOLS ("" not given); implies --tty
    bool json = false;
    std::string shell_command;
    bool has_shell_command = false;
    std::vector<std::string> argv;
};

// Registers the options on `sub`; `options` must outlive the parse.
void add_run_options(CLI::App& sub, run_options& options);

// The flags as the resolver reads them.
[[nodiscard]] setting_flags setting_flags_of(const run_options& options);

// The invocation, checked. The request holds the command and what it is given (argv, workdir,
// env, stdin, terminal); its policy and limits come from the settings once the session is known
// (take_settings).
struct validated {
    runtime::run_request request;
    policy::deployment where;
    std::optional<sandbox::sandbox_mode> escalate;  // --escalate
    // --escalate-network and --escalate-domain: what the run asks for beside its own network.
    std::optional<policy::network_request> escalate_network;
    std::string justification;
    std::string command_text;  // the command as the person asked sees it
    std::string input_text;    // what --stdin-file feeds it, as the person asked sees it
    // --tty: the run has a terminal (request.tty, its size filled in by the command from
    // cordon's own terminal unless --tty-size gave it).
    bool tty = false;
    bool tty_size_given = false;
};

// The checked invocation against `deployed` (the settings without a session), or the one-line
// message for a usage error.
[[nodiscard]] std::variant<validated, std::string> validate(run_options& options,
                                                            const settings& deployed);

// The request's policy and limits: the standing policy's mode and root (the session's, else the
// deployment's: resolve_standing), and the rest of `effective` (the settings with the session),
// where they are not cordon's defaults. An approved escalation widens it afterwards, once
// (cordon/escalate.hpp).
void take_settings(runtime::run_request& request, const settings& effective,
                   const policy::resolved_policy& standing);

}  // namespace cordon::cli
