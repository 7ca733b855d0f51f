// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The standing policy a command line asks for, shared by `cordon run` and `cordon mcp`: the
// options both take (--mode, --workspace, --backend, --approval, --session), the deployment they
// name, and the session log a --session opens.
//
// `cordon run` resolves its standing policy once, before anything runs (resolve_standing): the
// session's mode, approval policy and root, else the deployment's, and an option that disagrees
// with what the session records is a usage error. `cordon mcp` opens the session where no run can
// write it (open_protected_session) and its server resolves the standing policy per call, since the
// session can change while it serves.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cli/config_file.hpp"
#include "cordon/environment.hpp"
#include "cordon/mode.hpp"
#include "cordon/session_log.hpp"
#include "policy/resolve.hpp"
#include "sandbox/local_provider.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace cordon::cli {

// The policy options as given on the command line (cli/settings.hpp registers them).
struct policy_flags {
    std::optional<sandbox::sandbox_mode> mode;  // --mode
    std::string workspace;                      // --workspace; "" is the current directory
    bool has_workspace = false;                 // given, even as ""
    // --backend. (Targets are std::optional: CLI11 would print a plain enumerator through our
    // to_string(), which returns a string_view.)
    std::optional<sandbox::backend_choice> backend;
    std::optional<policy::approval_policy> approval;  // --approval
    std::optional<std::chrono::milliseconds> approval_timeout;
    std::string session;  // --session; "" without one
    std::string profile;  // --profile; "" without one
};

// The environment options as given on the command line: --env-clear, --env-keep NAME and
// --env-unset NAME (repeatable; NAME may be a glob with * and ?). The same for every call.
struct env_flags {
    bool clear = false;
    std::vector<std::string> keep;
    std::vector<std::string> unset;
};

// Registers the environment options on `sub` for `command` ("cordon run"): a bad NAME is a usage
// error, "<command>: invalid --env-keep "NAME" (...)", while the command line is parsed.
void add_env_options(CLI::App& sub, env_flags& flags, std::string_view command);

// Opens the session log at `path`, creating it, recorded as started in `root`, when missing.
[[nodiscard]] std::variant<std::shared_ptr<const policy::session_log>, policy::log_error>
open_session_log(const std::filesystem::path& path, const std::filesystem::path& root);

// The policy a run stands under before any escalation: the session's, else the deployment's
// (--mode, --workspace).
struct standing {
    policy::deployment where;
    std::shared_ptr<const policy::session_log> log;  // null without --session
    policy::session_state state;
    policy::resolved_policy policy;
    policy::approval_policy approval = policy::approval_policy::ask;  // the effective one

    [[nodiscard]] std::variant<policy::resolved_policy, std::string> with(
        std::optional<sandbox::sandbox_mode> approved) const {
        return policy::resolve(where, {log ? &state : nullptr, approved});
    }
};

// An option given on the command line never silently overrides what the session records: a
// difference is a usage error that says how to change the session instead. `approval` is the
// approval policy below the session (the flag's, the configuration's, or the default).
[[nodiscard]] std::variant<standing, std::string> resolve_standing(
    const policy_flags& flags, policy::deployment where, policy::approval_policy approval);

// Opens the session log (creating it, recorded as started in `workspace`) where no run of this
// server may write it: refused at start-up when it lies where a workspace-write deployment's
// runs could write, and protected for every run (a run under which it would be writable is
// refused), since whoever can write the log can widen every later run.
[[nodiscard]] std::variant<std::shared_ptr<const policy::session_log>, std::string>
open_protected_session(const std::string& raw, const std::filesystem::path& workspace,
                       sandbox::sandbox_mode mode,
                       std::vector<std::filesystem::path>& protected_paths);

}  // namespace cordon::cli
