// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "policy/presets.hpp"

#include <algorithm>

namespace cordon::policy {

using sandbox::sandbox_mode;

std::vector<preset> default_presets() {
    return {
        {"workspace-write", sandbox_mode::workspace_write, approval_policy::ask,
         "Write inside the workspace and permitted temporary directories; wider retries require "
         "approval."},
        {"danger-full-access", sandbox_mode::danger_full_access, approval_policy::never,
         "Full file access without approval prompts."},
    };
}

std::optional<std::string> check_presets(const std::vector<preset>& table) {
    if (table.empty()) return "the preset table is empty";
    for (std::size_t i = 0; i < table.size(); ++i) {
        const std::string& name = table[i].name;
        if (name.empty()) return "a preset has no name";
        if (name == custom_preset) {
            return "\"custom\" names the knobs matching no preset; no preset may take that name";
        }
        for (std::size_t j = 0; j < i; ++j) {
            if (table[j].name == name) return "two presets are named \"" + name + "\"";
        }
    }
    return std::nullopt;
}

knobs effective_knobs(const session_state& state, const knobs& defaults) {
    return knobs{state.mode.value_or(defaults.mode), state.approval.value_or(defaults.approval)};
}

namespace {

bool matches(const preset& entry, const knobs& now) {
    return entry.mode == now.mode && entry.approval == now.approval;
}

std::string available(const std::vector<preset>& table) {
    std::string names;
    for (const auto& entry : table) {
        if (!names.empty()) names += ", ";
        names += entry.name;
    }
    return names;
}

}  // namespace

const preset* find_preset(const std::vector<preset>& table, std::string_view name) {
    const auto found = std::find_if(table.begin(), table.end(),
                                    [&](const preset& entry) { return entry.name == name; });
    return found == table.end() ? nullptr : &*found;
}

std::string unknown_preset(const std::vector<preset>& table, std::string_view name) {
    return "unknown preset \"" + std::string(name) + "\" (available: " + available(table) + ")";
}

std::string current_preset(const std::vector<preset>& table, const session_state& state,
                           const knobs& defaults) {
    const knobs now = effective_knobs(state, defaults);
    if (state.preset) {
        const auto recorded = std::find_if(table.begin(), table.end(), [&](const preset& entry) {
            return entry.name == *state.preset;
        });
        if (recorded != table.end() && matches(*recorded, now)) return recorded->name;
    }
    const auto first = std::find_if(table.begin(), table.end(),
                                    [&](const preset& entry) { return matches(entry, now); });
    return first != table.end() ? first->name : std::string(custom_preset);
}

std::variant<std::vector<nlohmann::json>, log_error> set_preset(const session_log& log,
                                                                const std::vector<preset>& table,
                                                                std::string_view name,
                                                                const knobs& defaults) {
    const preset* chosen = find_preset(table, name);
    if (chosen == nullptr) return log_error{unknown_preset(table, name)};
    auto state = log.state();
    if (auto* error = std::get_if<log_error>(&state)) return *error;
    const session_state& now = std::get<session_state>(state);
    std::vector<nlohmann::json> events;
    if (current_preset(table, now, defaults) != chosen->name) {
        events.push_back({{"type", event_type::permission_preset}, {"preset", chosen->name}});
    }
    // The preset's knobs are recorded unless the session records them already (set_mode).
    if (now.mode != chosen->mode) {
        events.push_back(
            {{"type", event_type::sandbox_mode}, {"mode", sandbox::to_string(chosen->mode)}});
    }
    if (now.approval != chosen->approval) {
        events.push_back(
            {{"type", event_type::approval_policy}, {"policy", to_string(chosen->approval)}});
    }
    for (const auto& event : events) {
        if (auto error = log.append(event)) return *error;
    }
    return events;
}

std::variant<bool, log_error> set_mode(const session_log& log, sandbox_mode mode) {
    auto state = log.state();
    if (auto* error = std::get_if<log_error>(&state)) return *error;
    // Compared with what the session records, not with the defaults: a mode left unrecorded is
    // not pinned, and a layer below the session (a configuration file) would choose it.
    if (std::get<session_state>(state).mode == mode) return false;
    if (auto error =
            log.append({{"type", event_type::sandbox_mode}, {"mode", sandbox::to_string(mode)}})) {
        return *error;
    }
    return true;
}

std::variant<bool, log_error> set_approval_policy(const session_log& log, approval_policy policy) {
    auto state = log.state();
    if (auto* error = std::get_if<log_error>(&state)) return *error;
    // As set_mode: compared with what the session records.
    if (std::get<session_state>(state).approval == policy) return false;
    if (auto error =
            log.append({{"type", event_type::approval_policy}, {"policy", to_string(policy)}})) {
        return *error;
    }
    return true;
}

}  // namespace cordon::policy
