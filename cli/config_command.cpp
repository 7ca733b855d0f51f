// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon config show [--json] [--profile NAME] [OPTIONS]`: the effective settings of a run or an
// MCP server started with these options, and where each value came from: a flag, a profile in a
// file, a file's top level, or cordon's default (docs/contract.md, "Configuration"). A session
// ranks between the flags and the profile; `cordon session show` says what one records.
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
#include "cli/standing.hpp"
#include "cordon/executor.hpp"
#include "cordon/limits.hpp"
#include "sandbox/identity.hpp"

namespace cordon::cli {

namespace {

constexpr std::string_view show_command_name = "cordon config show";

struct show_options {
    bool json = false;
    std::string profile;
    std::optional<sandbox::sandbox_mode> mode;
    std::optional<sandbox::backend_choice> backend;
    std::optional<std::chrono::milliseconds> timeout;
    std::optional<std::uint64_t> max_output;
    std::optional<std::uint64_t> max_processes;
    std::optional<std::uint64_t> max_memory;
    std::optional<policy::approval_policy> approval;
    std::optional<std::chrono::milliseconds> approval_timeout;
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

// The flag's value, else the configuration's, else the default, with where it came from.
template <typename T, typename Text>
shown pick(std::string_view key, const std::optional<T>& flag,
           const std::optional<sourced<T>>& configured, T fallback, Text text) {
    if (flag) return {key, text(*flag), {origin::kind::flag, {}, {}}};
    if (configured) return {key, text(configured->value), configured->from};
    return {key, text(fallback), {}};
}

int show(const show_options& given) {
    auto loaded = load_config(given.profile);
    if (auto* message = std::get_if<std::string>(&loaded)) {
        return usage_error(show_command_name, *message);
    }
    const loaded_config& config = std::get<loaded_config>(loaded);
    const config_values& values = config.values;
    const runtime::executor_options defaults;
    const auto name = [](auto value) { return std::string(to_string(value)); };
    const auto size = [](std::uint64_t bytes) { return size_text(bytes, true); };
    std::vector<shown> settings{
        pick("mode", given.mode, values.mode, sandbox::sandbox_mode::read_only, name),
        pick("backend", given.backend, values.backend, sandbox::backend_choice::automatic, name),
        pick("timeout", given.timeout, values.timeout, defaults.default_timeout, duration_text),
        pick("max_output", given.max_output, values.max_output,
             std::uint64_t{defaults.limits.tail_bytes}, size),
        pick("max_processes", given.max_processes, values.max_processes,
             std::uint64_t{runtime::default_max_processes},
             [](std::uint64_t count) { return count == 0 ? "unlimited" : std::to_string(count); }),
        pick("max_memory", given.max_memory, values.max_memory,
             defaults.default_limits.max_memory.value_or(0), size),
        pick("approval", given.approval, values.approval, policy::approval_policy::ask, name),
        pick("approval_timeout", given.approval_timeout, values.approval_timeout,
             std::chrono::milliseconds(default_approval_timeout), duration_text),
        pick("identity_range", std::optional<sandbox::identity_range>(), values.identity_range,
             sandbox::identity_range{}, sandbox::identity_range_text),
    };

    auto with_flags = rules_with_flags(config.rules, given.paths);
    if (auto* message = std::get_if<std::string>(&with_flags)) {
        return usage_error(show_command_name, *message);
    }
    const configured_rules& rules = std::get<configured_rules>(with_flags);
    settings.push_back(
        {"tmp", std::string(sandbox::to_string(rules.rules.tmp)), origin_of(rules, "tmp")});
    settings.push_back(given.environment.clear
                           ? shown{"env_clear", "true", {origin::kind::flag, {}, {}}}
                           : (values.env_clear
                                  ? shown{"env_clear", values.env_clear->value ? "true" : "false",
                                          values.env_clear->from}
                                  : shown{"env_clear", "false", {}}));
    const auto env_list = [](std::string_view key, const std::vector<sourced<std::string>>& from,
                             const std::vector<std::string>& flagged) {
        shown_list out{key, {}};
        for (const auto& each : from)
            out.entries.push_back({each.value, each.from});
        for (const auto& each : flagged)
            out.entries.push_back({each, {origin::kind::flag, {}, {}}});
        return out;
    };
    settings.push_back({"accept_partial", rules.rules.accept_partial ? "true" : "false",
                        origin_of(rules, "accept_partial")});
    settings.push_back({"network", std::string(sandbox::to_string(rules.network.policy)),
                        origin_of(rules, "network")});
    settings.push_back({"allow_local_binding", rules.network.allow_local_binding ? "true" : "false",
                        origin_of(rules, "allow_local_binding")});
    // As for a run in the current directory (cordon run's workspace when none is given): the keys
    // found in it are its own to read, and are not listed as hidden.
    std::vector<std::filesystem::path> here;
    std::error_code ec;
    if (auto cwd = std::filesystem::canonical(std::filesystem::current_path(ec), ec); !ec)
        here.push_back(std::move(cwd));
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
        env_list("env_keep", values.env_keep, given.environment.keep),
        env_list("env_unset", values.env_unset, given.environment.unset),
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
        for (const shown& setting : settings) {
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
        for (const auto& rule : values.approval_rules) {
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
    for (const shown& setting : settings) {
        widest = std::max(widest, setting.key.size() + setting.value.size());
    }
    for (const shown& setting : settings) {
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
    for (const auto& rule : values.approval_rules) {
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
        "show", "The effective settings and where each came from (flag, profile, file, default)");
    const auto rule = [](std::function<std::string(const std::string&)> message) {
        return value_rule{std::string(show_command_name), std::move(message), false};
    };
    const auto invalid = [](std::string option) {
        return [option = std::move(option)](const std::string& text) {
            return "invalid " + option + " \"" + text + "\"";
        };
    };
    sub->add_flag("--json", options->json, "Print JSON");
    sub->add_option("--profile", options->profile, "The [profile.NAME] of the config files");
    sub->add_option("--mode", options->mode, "As for cordon run")
        ->transform(mode_value(rule(unknown_mode)))
        ->type_name("TEXT");
    sub->add_option("--backend", options->backend, "As for cordon run")
        ->transform(backend_value(rule(unknown_backend)))
        ->type_name("TEXT");
    add_duration_option(*sub, "--timeout", options->timeout, "As for cordon run",
                        rule(invalid("--timeout")), most_timeout);
    sub->add_option("--max-output", options->max_output, "As for cordon run")
        ->transform(size_value(rule(invalid("--max-output")), 1, most_output, false))
        ->type_name("TEXT");
    sub->add_option("--max-processes", options->max_processes, "As for cordon run")
        ->transform(count_value(rule(invalid("--max-processes")), most_processes, true))
        ->type_name("TEXT");
    sub->add_option("--max-memory", options->max_memory, "As for cordon run")
        ->transform(size_value(rule(invalid("--max-memory")), least_memory,
                               std::numeric_limits<std::uint64_t>::max(), true))
        ->type_name("TEXT");
    sub->add_option("--approval", options->approval, "As for cordon run")
        ->transform(approval_value(rule(unknown_approval)))
        ->type_name("TEXT");
    add_duration_option(*sub, "--approval-timeout", options->approval_timeout, "As for cordon run",
                        rule(invalid("--approval-timeout")));
    add_path_options(*sub, options->paths);
    add_env_options(*sub, options->environment, show_command_name);
    return [options] { return show(*options); };
}

}  // namespace cordon::cli
