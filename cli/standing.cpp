// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cli/standing.hpp"

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/shell_quote.hpp"
#include "cordon/policy.hpp"
#include "sandbox/protected_paths.hpp"

namespace cordon::cli {

std::variant<std::shared_ptr<const policy::session_log>, policy::log_error> open_session_log(
    const std::filesystem::path& path, const std::filesystem::path& root) {
    auto opened = policy::session_log::open_or_create(path, root);
    if (auto* error = std::get_if<policy::log_error>(&opened)) return *error;
    return std::make_shared<const policy::session_log>(
        std::get<policy::session_log>(std::move(opened)));
}

std::variant<standing, std::string> resolve_standing(const policy_flags& flags,
                                                     policy::deployment where,
                                                     policy::approval_policy approval) {
    standing out;
    out.where = std::move(where);
    out.approval = approval;
    if (flags.session.empty()) {
        auto resolved = out.with(std::nullopt);
        if (auto* refused = std::get_if<std::string>(&resolved)) return *refused;
        out.policy = std::get<policy::resolved_policy>(std::move(resolved));
        return out;
    }
    auto opened = open_session_log(flags.session, out.where.workspace_root);
    if (auto* error = std::get_if<policy::log_error>(&opened)) {
        return session_error_text(flags.session, *error);
    }
    out.log = std::get<std::shared_ptr<const policy::session_log>>(std::move(opened));
    auto state = out.log->standing();
    if (auto* error = std::get_if<policy::log_error>(&state)) {
        return session_error_text(out.log->path(), *error);
    }
    out.state = std::get<policy::session_state>(std::move(state));
    auto resolved = out.with(std::nullopt);
    if (auto* refused = std::get_if<std::string>(&resolved)) return *refused;
    out.policy = std::get<policy::resolved_policy>(std::move(resolved));

    const std::string file = sandbox::canonical_path(out.log->path()).string();
    const std::string change = "; to change it: cordon session set " + shell_quote(file);
    if (flags.mode && out.state.mode && *out.state.mode != out.where.default_mode) {
        const std::string asked(sandbox::to_string(out.where.default_mode));
        return "--mode " + asked + " conflicts with the mode the session " + file + " records, " +
               std::string(sandbox::to_string(*out.state.mode)) + change + " --mode " + asked;
    }
    if (flags.has_workspace && out.policy.workspace_root != out.where.workspace_root) {
        return "--workspace " + out.where.workspace_root.string() +
               " conflicts with the root of the session " + file + ", " +
               out.policy.workspace_root.string() +
               "; leave --workspace out, or use another session";
    }
    if (flags.approval && out.state.approval && *out.state.approval != *flags.approval) {
        const std::string asked(policy::to_string(*flags.approval));
        return "--approval " + asked + " conflicts with the approval policy the session " + file +
               " records, " + std::string(policy::to_string(*out.state.approval)) + change +
               " --approval " + asked;
    }
    if (out.state.approval) out.approval = *out.state.approval;
    return out;
}

std::variant<std::shared_ptr<const policy::session_log>, std::string> open_protected_session(
    const std::string& raw, const std::filesystem::path& workspace, sandbox::sandbox_mode mode,
    std::vector<std::filesystem::path>& protected_paths) {
    // Where the log is, as a run would reach it (its directory's symlinks resolved), checked
    // before anything is created there.
    const std::filesystem::path given = std::filesystem::absolute(raw);
    const std::filesystem::path where =
        sandbox::canonical_path(given.parent_path()) / given.filename();
    if (mode == sandbox::sandbox_mode::workspace_write) {
        for (const auto& root : sandbox::writable_roots({mode, workspace})) {
            if (sandbox::is_within(where, root)) {
                return "--session " + where.string() + " lies in " + root.string() +
                       ", which workspace-write commands may write; keep the log elsewhere";
            }
        }
    }
    auto opened = open_session_log(where, workspace);
    if (auto* error = std::get_if<policy::log_error>(&opened)) {
        return "cannot use --session " + raw + ": " + error->message;
    }
    protected_paths.push_back(where);
    return std::get<std::shared_ptr<const policy::session_log>>(std::move(opened));
}

namespace {

// A variable's NAME or a glob over names (runtime::is_name_pattern), checked only; a bad one is
// a usage error with cordon's own message (cli/options.hpp).
CLI::Validator name_pattern_value(std::string_view command, std::string option) {
    return CLI::Validator(
        [command = std::string(command), option = std::move(option)](std::string& text) {
            if (!runtime::is_name_pattern(text)) {
                throw bad_option_value(command, "invalid " + option + " \"" + text +
                                                    "\" (expected a NAME, or a glob of letters, "
                                                    "digits, _, * and ?)");
            }
            return std::string();
        },
        "");
}

}  // namespace

void add_env_options(CLI::App& sub, env_flags& flags, std::string_view command) {
    sub.add_flag("--env-clear", flags.clear,
                 "Pass on only PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_*, TERM, TMPDIR and TZ "
                 "of cordon's environment");
    sub.add_option("--env-keep", flags.keep,
                   "NAME or glob (* ?), repeatable: passed on even where the scrub or --env-clear "
                   "would drop it")
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->check(name_pattern_value(command, "--env-keep"));
    sub.add_option("--env-unset", flags.unset,
                   "NAME or glob (* ?), repeatable: never passed on (--env still sets it)")
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->check(name_pattern_value(command, "--env-unset"));
}

}  // namespace cordon::cli
