// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon config show [--json] [--profile NAME] [--session FILE] [OPTIONS]`: the effective
// settings of a run or an MCP server started with these options, and where each value came from:
// a flag, the session, a profile in a file, a file's top level, or cordon's default
// (docs/contract.md, "Configuration"). The values are cli/settings.hpp's, which `cordon run` and
// `cordon mcp` resolve too. The session log is read, never created; `cordon session show` says
// everything it records.
//
// Exits 0, or 2 when an option or a configuration file is bad (the same one line `cordon run`
// prints).
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <optional>
#include <type_traits>

#include "base/json_text.hpp"
#include "cli/commands.hpp"
#include "cli/config_file.hpp"
#include "cli/options.hpp"
#include "cli/path_options.hpp"
#include "cli/run_options.hpp"
#include "cli/settings.hpp"
#include "cli/standing.hpp"
#include "cordon/executor.hpp"
#include "cordon/limits.hpp"
#include "sandbox/identity.hpp"

namespace cordon::cli {

namespace {

constexpr std::string_view show_command_name = "cordon config show";

struct show_options {
    bool json = false;
    policy_flags policy;  // --mode, --workspace, --session, --profile, --approval, ...
    limit_flags limits;   // --timeout, --max-output, --max-processes, --max-memory
    path_flags paths;
    env_flags environment;
};

// One entry of a list setting (protect, deny_read, ...).
struct shown_entry {
    std::string value;
    origin from;
};
struct shown_list {
    std::string_view key;
    std::vector<shown_entry> entries;
};

// The origin of `key` in `rules` (none: a default).
origin origin_of(const configured_rules& rules, const std::string& key) {
    const auto found = rules.origins.find(key);
    return found == rules.origins.end() ? origin{} : found->second;
}

template <typename List>
shown_list list_of(std::string_view key, const List& list, const configured_rules& rules) {
    shown_list out{key, {}};
    for (const auto& each : list) {
        std::string text;
        if constexpr (std::is_same_v<typename List::value_type, std::string>) {
            text = each;
        } else {
            text = each.string();
        }
        out.entries.push_back({text, origin_of(rules, std::string(key) + " " + text)});
    }
    return out;
}

void describe(const origin& from, nlohmann::json& into) {
    switch (from.from) {
        case origin::kind::flag:
            into["source"] = "flag";
            break;
        case origin::kind::session:
            into["source"] = "session";
            into["file"] = from.file.string();
            break;
        case origin::kind::profile:
            into["source"] = "profile";
            into["profile"] = from.profile;
            into["file"] = from.file.string();
            break;
        case origin::kind::file:
            into["source"] = "file";
            into["file"] = from.file.string();
            break;
        case origin::kind::built_in:
            into["source"] = "default";
            break;
    }
}

// "TEXT" as TOML writes a basic string.
// The settings shown as TOML booleans rather than strings.
bool is_boolean(std::string_view key) {
    return key == "accept_partial" || key == "env_clear" || key == "allow_local_binding";
}

std::string quoted(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// One setting: its key, its value as a configuration file would spell it, where it came from.
struct shown {
    std::string_view key;
    std::string value;
    origin from;
};

// One setting as shown: `text` spells its value.
template <typename T, typename Text>
shown shown_as(std::string_view key, const sourced<T>& setting, Text text) {
    return {key, text(setting.value), setting.from};
}

// What the session log at `raw` records, as `cordon run --session` would read it; nullopt when
// there is none yet (a run would create it, recording only its root). Read, never created.
std::variant<std::optional<policy::session_state>, std::string> read_session(
    const std::string& raw) {
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(raw, ec))) {
        return std::optional<policy::session_state>();
    }
    auto opened = policy::session_log::open_existing(raw);
    if (auto* error = std::get_if<policy::log_error>(&opened)) {
        return session_error_text(raw, *error);
    }
    const policy::session_log& log = std::get<policy::session_log>(opened);
    auto state = log.state();
    if (auto* error = std::get_if<policy::log_error>(&state)) {
        return session_error_text(log.path(), *error);
    }
    return std::optional<policy::session_state>(std::get<policy::session_state>(std::move(state)));
}

int show(const show_options& given) {
    auto loaded = load_config(given.policy.profile);
    if (auto* message = std::get_if<std::string>(&loaded)) {
        return usage_error(show_command_name, *message);
    }
    const loaded_config& config = std::get<loaded_config>(loaded);
    std::optional<policy::session_state> state;
    if (!given.policy.session.empty()) {
        auto read = read_session(given.policy.session);
        if (auto* message = std::get_if<std::string>(&read)) {
            return usage_error(show_command_name, *message);
        }
        state = std::get<std::optional<policy::session_state>>(std::move(read));
    }
    const std::filesystem::path session_file = given.policy.session.empty()
                                                   ? std::filesystem::path()
                                                   : sandbox::canonical_path(given.policy.session);
    const session_layer session{session_file, state ? *state : policy::session_state{}};
    auto resolved = resolve_settings({given.policy, given.limits, given.paths, given.environment},
                                     config, state ? &session : nullptr);
    if (auto* message = std::get_if<std::string>(&resolved)) {
        return usage_error(show_command_name, *message);
    }
    const settings& effective = std::get<settings>(resolved);
    const auto name = [](auto value) { return std::string(to_string(value)); };
    const auto size = [](std::uint64_t bytes) { return size_text(bytes, true); };
    const auto boolean = [](bool value) { return std::string(value ? "true" : "false"); };
    std::vector<shown> scalars{
        shown_as("mode", effective.mode, name),
        shown_as("backend", effective.backend, name),
        shown_as("timeout", effective.timeout, duration_text),
        shown_as("max_output", effective.max_output, size),
        shown_as(
            "max_processes", effective.max_processes,
            [](std::uint64_t count) { return count == 0 ? "unlimited" : std::to_string(count); }),
        shown_as("max_memory", effective.max_memory, size),
        shown_as("approval", effective.approval, name),
        shown_as("approval_timeout", effective.approval_timeout, duration_text),
        shown_as("identity_range", effective.identity_range, sandbox::identity_range_text),
    };
    const configured_rules& rules = effective.rules;
    scalars.push_back(
        {"tmp", std::string(sandbox::to_string(rules.rules.tmp)), origin_of(rules, "tmp")});
    scalars.push_back(shown_as("env_clear", effective.env_clear, boolean));
    const auto env_list = [](std::string_view key, const std::vector<sourced<std::string>>& from) {
        shown_list out{key, {}};
        for (const auto& each : from)
            out.entries.push_back({each.value, each.from});
        return out;
    };
    scalars.push_back({"accept_partial", rules.rules.accept_partial ? "true" : "false",
                       origin_of(rules, "accept_partial")});
    scalars.push_back({"network", std::string(sandbox::to_string(rules.network.policy)),
                       origin_of(rules, "network")});
    scalars.push_back({"allow_local_binding", rules.network.allow_local_binding ? "true" : "false",
                       origin_of(rules, "allow_local_binding")});
    // As for a run in its workspace (--workspace, the session's root, else the current
    // directory): the keys found in it are its own to read, and are not listed as hidden.
    std::vector<std::filesystem::path> here;
    std::error_code ec;
    const std::filesystem::path workspace = effective.workspace.value.empty()
                                                ? std::filesystem::current_path(ec)
                                                : effective.workspace.value;
    if (auto root = std::filesystem::canonical(workspace, ec); !ec) here.push_back(std::move(root));
    const std::vector<std::filesystem::path> denied =
        sandbox::requested_deny_read(rules.rules, here);
    const std::vector<shown_list> lists{
        list_of("writable_roots", rules.rules.writable_roots, rules),
        list_of("read_only", rules.rules.read_only, rules),
        list_of("protect", rules.rules.protect, rules),
        list_of("deny_read", denied, rules),
        list_of("allow_read", rules.rules.allow_read, rules),
        list_of("allow_unix_sockets", rules.network.allow_unix_sockets, rules),
        list_of("allowed_domains", rules.network.allowed_domains, rules),
        list_of("denied_domains", rules.network.denied_domains, rules),
        env_list("env_keep", effective.env_keep),
        env_list("env_unset", effective.env_unset),
    };

    if (given.json) {
        nlohmann::json files = nlohmann::json::array();
        for (const auto& file : config.files)
            files.push_back(file.string());
        nlohmann::json looked = nlohmann::json::array();
        for (const auto& file : config.looked_in)
            looked.push_back(file.string());
        nlohmann::json out = {{"files", files},
                              {"lookedIn", looked},
                              {"profile", config.profile.empty() ? nlohmann::json(nullptr)
                                                                 : nlohmann::json(config.profile)},
                              {"settings", nlohmann::json::object()}};
        for (const shown& setting : scalars) {
            nlohmann::json from = {{"value", is_boolean(setting.key)
                                                 ? nlohmann::json(setting.value == "true")
                                                 : nlohmann::json(setting.value)}};
            describe(setting.from, from);
            out["settings"][std::string(setting.key)] = std::move(from);
        }
        for (const shown_list& list : lists) {
            nlohmann::json entries = nlohmann::json::array();
            for (const shown_entry& entry : list.entries) {
                nlohmann::json one = {{"value", entry.value}};
                describe(entry.from, one);
                entries.push_back(std::move(one));
            }
            out["settings"][std::string(list.key)] = std::move(entries);
        }
        // A table as the file holds it: each name with its address and origin.
        nlohmann::json resolve = nlohmann::json::object();
        for (const auto& each : rules.network.proxy_resolve) {
            nlohmann::json one = {{"value", each.address}};
            describe(origin_of(rules, "proxy_resolve " + each.name), one);
            resolve[each.name] = std::move(one);
        }
        out["settings"]["proxy_resolve"] = std::move(resolve);
        nlohmann::json rules_shown = nlohmann::json::array();
        for (const auto& rule : effective.approval_rules) {
            nlohmann::json one = {{"value", policy::to_json(rule.value)}};
            describe(rule.from, one);
            rules_shown.push_back(std::move(one));
        }
        out["settings"]["approval_rule"] = std::move(rules_shown);
        std::cout << base::dump_json(out) << '\n';
        return 0;
    }

    // TOML a file could hold, each value's source in a comment.
    std::string text = "# files:";
    if (config.files.empty()) text += " none";
    for (const auto& file : config.files)
        text += " " + file.string();
    text += "\n";
    if (!config.profile.empty()) text += "# profile: " + config.profile + "\n";
    std::size_t widest = 0;
    for (const shown& setting : scalars) {
        widest = std::max(widest, setting.key.size() + setting.value.size());
    }
    for (const shown& setting : scalars) {
        std::string line = std::string(setting.key) + " = " +
                           (is_boolean(setting.key) ? setting.value : quoted(setting.value));
        line.append(widest + 6 - std::min(widest + 5, line.size()), ' ');
        text += line + "# " + setting.from.text() + "\n";
    }
    for (const shown_list& list : lists) {
        if (list.entries.empty()) {
            text += std::string(list.key) + " = []\n";
            continue;
        }
        text += std::string(list.key) + " = [\n";
        std::size_t longest = 0;
        for (const shown_entry& entry : list.entries) {
            longest = std::max(longest, quoted(entry.value).size());
        }
        for (const shown_entry& entry : list.entries) {
            std::string line = "  " + quoted(entry.value) + ",";
            line.append(longest + 5 - std::min(longest + 4, line.size()), ' ');
            text += line + "# " + entry.from.text() + "\n";
        }
        text += "]\n";
    }
    // Last: a table header ends the top level, and an inline table holds no comments.
    if (rules.network.proxy_resolve.empty()) {
        text += "proxy_resolve = {}\n";
    } else {
        text += "[proxy_resolve]\n";
        const auto entry = [](const sandbox::host_mapping& each) {
            return quoted(each.name) + " = " + quoted(each.address);
        };
        std::size_t longest = 0;
        for (const auto& each : rules.network.proxy_resolve) {
            longest = std::max(longest, entry(each).size());
        }
        for (const auto& each : rules.network.proxy_resolve) {
            std::string line = entry(each);
            line.append(longest + 2 - line.size(), ' ');
            text += line + "# " + origin_of(rules, "proxy_resolve " + each.name).text() + "\n";
        }
    }
    // Each rule as the [[approval_rule]] table that says it (JSON values are TOML ones).
    for (const auto& rule : effective.approval_rules) {
        text += "[[approval_rule]]  # " + rule.from.text() + "\n";
        const nlohmann::json shown_rule = policy::to_json(rule.value);
        for (const char* key : {"name", "pattern", "decision", "mode", "match", "not_match"}) {
            if (shown_rule.contains(key)) {
                // JSON's strings are TOML's basic strings, but for DEL, which TOML escapes.
                std::string value = base::dump_json(shown_rule[key]);
                for (auto at = value.find('\x7f'); at != std::string::npos;
                     at = value.find('\x7f', at)) {
                    value.replace(at, 1, "\\u007f");
                }
                text += std::string(key) + " = " + value + "\n";
            }
        }
    }
    std::cout << text;
    return 0;
}

}  // namespace

std::function<int()> add_config_command(CLI::App& app) {
    auto options = std::make_shared<show_options>();
    auto* config = app.add_subcommand("config", "Show the configuration (config files, profiles)");
    config->require_subcommand(1);
    auto* sub = config->add_subcommand(
        "show",
        "The effective settings and where each came from (flag, session, profile, file, default)");
    sub->add_flag("--json", options->json, "Print JSON");
    add_policy_options(*sub, options->policy, show_command_name);
    add_limit_options(*sub, options->limits, show_command_name);
    add_path_options(*sub, options->paths);
    add_env_options(*sub, options->environment, show_command_name);
    return [options] { return show(*options); };
}

}  // namespace cordon::cli
