// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cli/settings.hpp"

#include <functional>
#include <limits>
#include <utility>

#include "cli/options.hpp"
#include "cli/workspace.hpp"
#include "cordon/executor.hpp"
#include "cordon/limits.hpp"

namespace cordon::cli {

namespace {

const origin from_flag{origin::kind::flag, {}, {}};

// The flag's value, else the configuration's, else `fallback` (cordon's default).
template <typename T>
sourced<T> pick(const std::optional<T>& flag, const std::optional<sourced<T>>& configured,
                T fallback) {
    if (flag) return {*flag, from_flag};
    if (configured) return *configured;
    return {std::move(fallback), {}};
}

// The message for a bad value whose text is quoted in it: `before` "TEXT" `after`.
std::function<std::string(const std::string&)> bad_value_text(std::string before,
                                                              std::string after) {
    return [before = std::move(before), after = std::move(after)](const std::string& text) {
        return before + " \"" + text + "\" " + after;
    };
}

}  // namespace

runtime::environment_policy settings::environment() const {
    runtime::environment_policy out;
    out.clear = env_clear.value;
    for (const auto& each : env_keep)
        out.keep.push_back(each.value);
    for (const auto& each : env_unset)
        out.unset.push_back(each.value);
    return out;
}

std::vector<policy::command_rule> settings::approval_rule_values() const {
    std::vector<policy::command_rule> out;
    for (const auto& rule : approval_rules)
        out.push_back(rule.value);
    return out;
}

std::variant<settings, std::string> resolve_settings(const setting_flags& flags,
                                                     const loaded_config& config,
                                                     const session_layer* session) {
    const config_values& values = config.values;
    const runtime::executor_options defaults;
    settings out;
    out.mode = pick(flags.policy.mode, values.mode, sandbox::sandbox_mode::read_only);
    out.workspace = flags.policy.has_workspace
                        ? sourced<std::filesystem::path>{flags.policy.workspace, from_flag}
                        : sourced<std::filesystem::path>{};
    out.backend = pick(flags.policy.backend, values.backend, sandbox::backend_choice::automatic);
    out.timeout = pick(flags.limits.timeout, values.timeout, defaults.default_timeout);
    out.max_output =
        pick(flags.limits.max_output, values.max_output, std::uint64_t{defaults.limits.tail_bytes});
    out.max_processes = pick(flags.limits.max_processes, values.max_processes,
                             std::uint64_t{runtime::default_max_processes});
    out.max_memory = pick(flags.limits.max_memory, values.max_memory,
                          defaults.default_limits.max_memory.value_or(0));
    out.approval = pick(flags.policy.approval, values.approval, policy::approval_policy::ask);
    out.approval_timeout = pick(flags.policy.approval_timeout, values.approval_timeout,
                                std::chrono::milliseconds(default_approval_timeout));
    out.identity_range = pick(std::optional<sandbox::identity_range>(), values.identity_range,
                              sandbox::identity_range{});
    // --env-clear turns the clear on; it cannot turn off a configuration's.
    out.env_clear = flags.environment.clear ? sourced<bool>{true, from_flag}
                                            : pick(std::optional<bool>(), values.env_clear, false);
    out.env_keep = values.env_keep;
    for (const auto& each : flags.environment.keep)
        out.env_keep.push_back({each, from_flag});
    out.env_unset = values.env_unset;
    for (const auto& each : flags.environment.unset)
        out.env_unset.push_back({each, from_flag});
    auto rules = rules_with_flags(config.rules, flags.paths);
    if (auto* message = std::get_if<std::string>(&rules)) return *message;
    out.rules = std::get<configured_rules>(std::move(rules));
    out.approval_rules = values.approval_rules;
    if (session != nullptr) return with_session(std::move(out), *session);
    return out;
}

std::variant<policy::deployment, std::string> deployment_of(const settings& deployed,
                                                            sandbox::sandbox_mode widest) {
    auto workspace = resolve_workspace(deployed.workspace.value.string(), widest);
    if (auto* message = std::get_if<std::string>(&workspace)) return *message;
    return policy::deployment{deployed.mode.value,
                              std::get<std::filesystem::path>(std::move(workspace))};
}

settings with_session(settings below, const session_layer& session) {
    const origin from{origin::kind::session, session.file, {}};
    const auto over = [&from](auto& setting, const auto& recorded) {
        if (setting.from.from != origin::kind::flag && recorded) {
            setting = {*recorded, from};
        }
    };
    over(below.mode, session.state.mode);
    over(below.approval, session.state.approval);
    over(below.workspace, session.state.cwd);
    return below;
}

void add_policy_options(CLI::App& sub, policy_flags& flags, std::string_view command) {
    const auto rule = [command](std::function<std::string(const std::string&)> message,
                                bool empty_is_unset) {
        return value_rule{std::string(command), std::move(message), empty_is_unset};
    };
    const bool given = false;  // an empty value is a bad one
    const bool unset = true;   // an empty value means the option was not given
    sub.add_option("--mode", flags.mode,
                   "read-only (default), workspace-write or danger-full-access")
        ->transform(mode_value(rule(unknown_mode, given)))
        ->type_name("TEXT");
    sub.add_option("--workspace", flags.workspace, "Workspace root (default: .)")
        ->type_name("DIR")
        ->each([&flags](const std::string&) { flags.has_workspace = true; });
    sub.add_option("--session", flags.session,
                   "Session log: its mode, approval policy, root and grants apply (cordon run and "
                   "cordon mcp create it when missing)")
        ->type_name("FILE");
    sub.add_option("--profile", flags.profile,
                   "Configuration profile: the [profile.NAME] table of the config files");
    sub.add_option("--approval", flags.approval,
                   "ask (default: an escalation asks) or never (refused without asking)")
        ->transform(approval_value(rule(unknown_approval, unset)))
        ->type_name("TEXT");
    add_duration_option(
        sub, "--approval-timeout", flags.approval_timeout,
        "How long a question waits for an answer, e.g. 30s (default 5m)",
        rule(bad_value_text("invalid --approval-timeout", "(e.g. 30s, 5m)"), unset));
    sub.add_option("--backend", flags.backend, "auto, bwrap, landlock or seatbelt")
        ->transform(backend_value(rule(unknown_backend, given)))
        ->type_name("TEXT");
}

void add_limit_options(CLI::App& sub, limit_flags& flags, std::string_view command) {
    const auto rule = [command](std::function<std::string(const std::string&)> message) {
        // An empty value means the option was not given.
        return value_rule{std::string(command), std::move(message), true};
    };
    // Beyond the cap is refused, never quietly lowered: the same rule as config.toml's timeout.
    add_duration_option(
        sub, "--timeout", flags.timeout, "e.g. 500ms, 30s, 2m (default 120s, max 600s)",
        rule(bad_value_text("invalid timeout", "(e.g. 500ms, 30s, 2m; at most 10m)")),
        most_timeout);
    sub.add_option("--max-output", flags.max_output, "Bytes of stdout kept in memory")
        ->transform(
            size_value(rule(bad_value_text("invalid --max-output",
                                           "(1 to 16M bytes kept in memory, e.g. 64000, 512K, "
                                           "16M)")),
                       1, most_output, false))
        ->type_name("TEXT");
    sub.add_option("--max-processes", flags.max_processes,
                   "Processes and threads the run may hold at once (default 4096; unlimited)")
        ->transform(count_value(
            rule(bad_value_text("invalid --max-processes", "(1 to 4194304, or unlimited)")),
            most_processes, true))
        ->type_name("TEXT");
    sub.add_option("--max-memory", flags.max_memory,
                   "Memory the run may use, e.g. 512M, 2G, or unlimited (default: half of the "
                   "host's memory)")
        ->transform(size_value(rule(bad_value_text("invalid --max-memory",
                                                   "(at least 4M, e.g. 512M, 2G, or unlimited)")),
                               least_memory, std::numeric_limits<std::uint64_t>::max(), true))
        ->type_name("TEXT");
}

}  // namespace cordon::cli
