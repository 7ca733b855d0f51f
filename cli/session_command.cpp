// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon session`: read and change a session log (cordon/session_log.hpp).
//
//   cordon session show   FILE [--json]     the effective mode, approval policy, preset and root,
//                                           the live grants and the audit trail
//   cordon session set    FILE (--mode M | --approval P | --preset NAME)
//                                           writes only what changes, then compacts the log
//   cordon session revoke FILE GRANT_ID     ends an allowed-for-session grant
//
// The knobs fall back to `cordon run`'s defaults (read-only, ask) when the session records none.
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "base/json_text.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/shell_quote.hpp"
#include "cordon/approval.hpp"
#include "cordon/policy.hpp"
#include "cordon/session_log.hpp"
#include "policy/command_prefix.hpp"
#include "policy/display.hpp"
#include "policy/presets.hpp"
#include "policy/resolve.hpp"

namespace cordon::cli {

namespace {

constexpr std::string_view session_command_name = "cordon session";

// What `cordon run` stands under without a session event saying otherwise.
constexpr policy::knobs run_defaults{sandbox::sandbox_mode::read_only,
                                     policy::approval_policy::ask};

struct session_options {
    std::string file;
    bool json = false;
    std::optional<sandbox::sandbox_mode> mode;        // "" is not given
    std::optional<policy::approval_policy> approval;  // "" is not given
    std::string preset;
    std::string grant;
};

int session_failed(const std::filesystem::path& file, const policy::log_error& error) {
    std::cerr << session_command_name << ": " << session_error_text(file, error) << '\n';
    return exit_session_failed;
}

std::string text_of(const nlohmann::json& body, const char* key) {
    const auto found = body.find(key);
    if (found == body.end() || !found->is_string()) return "";
    return found->get<std::string>();
}

// A logged grant ({"id","prefix","exact","mode","workdir"}), read as far as it goes: for showing
// only.
policy::session_grant grant_of(const nlohmann::json& body) {
    policy::session_grant grant;
    grant.id = text_of(body, "id");
    if (const auto prefix = body.find("prefix"); prefix != body.end() && prefix->is_array()) {
        for (const auto& word : *prefix) {
            if (word.is_string()) grant.prefix.push_back(word.get<std::string>());
        }
    }
    const auto exact = body.find("exact");
    grant.exact = exact != body.end() && exact->is_boolean() && exact->get<bool>();
    grant.workdir = text_of(body, "workdir");
    return grant;
}

// One line of the audit trail, as a person reads it. Everything taken from the log is shown
// through policy::shown_safely(): a logged command cannot rewrite the screen.
std::string describe_event(const policy::session_event& event) {
    const nlohmann::json& body = event.body;
    const auto field = [&body](const char* key) {
        return policy::shown_safely(text_of(body, key));
    };
    namespace type = policy::event_type;
    if (event.type == type::session_start) return "session started in " + field("cwd");
    if (event.type == type::sandbox_mode) return "mode set to " + field("mode");
    if (event.type == type::approval_policy) return "approval policy set to " + field("policy");
    if (event.type == type::permission_preset) return "preset set to " + field("preset");
    if (event.type == type::approval_revoked) return "grant " + field("grant") + " revoked";
    if (event.type == type::session_compacted) {
        const auto dropped = body.find("dropped");
        return "log compacted: " +
               (dropped != body.end() && dropped->is_number_unsigned()
                    ? std::to_string(dropped->get<std::uint64_t>())
                    : std::string("some")) +
               " earlier events dropped";
    }
    if (event.type == type::approval_asked) {
        return field("id") + " asked by " + field("tool") + ": " + field("reason") + " (command `" +
               field("command") + "` in " + field("workdir") + ", " + field("from") + " \u2192 " +
               field("mode") + ")";
    }
    if (event.type == type::approval_decided) {
        std::string line = field("id") + " decided: " + field("outcome") + " by " + field("by");
        if (const auto grant = body.find("grant"); grant != body.end() && grant->is_object()) {
            line += "; grant " + policy::shown_safely(text_of(*grant, "id")) + " for " +
                    policy::describe(grant_of(*grant)) + " under " +
                    policy::shown_safely(text_of(*grant, "mode"));
        }
        if (const std::string detail = field("detail"); !detail.empty()) {
            line += " (" + detail + ")";
        }
        return line;
    }
    return policy::shown_safely(base::dump_json(body));
}

nlohmann::json grant_json(const policy::session_grant& grant) {
    nlohmann::json out{{"id", grant.id},
                       {"prefix", grant.prefix},
                       {"exact", grant.exact},
                       {"mode", std::string(sandbox::to_string(grant.mode))},
                       {"covers", policy::describe(grant)}};
    policy::put_network(out, grant.network, "network", "domains");
    if (!grant.workdir.empty()) out["workdir"] = grant.workdir.string();
    return out;
}

int show(const session_options& options) {
    auto opened = policy::session_log::open_existing(options.file);
    if (auto* error = std::get_if<policy::log_error>(&opened)) {
        return session_failed(options.file, *error);
    }
    const auto& log = std::get<policy::session_log>(opened);
    auto read = log.state();
    if (auto* error = std::get_if<policy::log_error>(&read))
        return session_failed(log.path(), *error);
    const auto& state = std::get<policy::session_state>(read);

    const policy::knobs knobs = policy::effective_knobs(state, run_defaults);
    const std::string preset =
        policy::current_preset(policy::default_presets(), state, run_defaults);
    const std::string mode(sandbox::to_string(knobs.mode));
    const std::string approval(policy::to_string(knobs.approval));
    const std::string root = state.cwd ? sandbox::canonical_path(*state.cwd).string() : "";

    if (options.json) {
        nlohmann::json out = {{"path", sandbox::canonical_path(log.path()).string()},
                              {"root", state.cwd ? nlohmann::json(root) : nlohmann::json(nullptr)},
                              {"mode", mode},
                              {"modeFrom", state.mode ? "session" : "default"},
                              {"approval", approval},
                              {"approvalFrom", state.approval ? "session" : "default"},
                              {"preset", preset},
                              {"grants", nlohmann::json::array()},
                              {"events", nlohmann::json::array()}};
        for (const auto& grant : state.grants)
            out["grants"].push_back(grant_json(grant));
        for (const auto& event : state.events) {
            nlohmann::json line = event.body;
            line["line"] = event.line;
            out["events"].push_back(std::move(line));
        }
        std::cout << base::dump_json(out) << '\n';
        return 0;
    }

    const auto from = [](bool recorded) { return recorded ? "" : " (default: none recorded)"; };
    std::string text;
    text +=
        "session   " + policy::shown_safely(sandbox::canonical_path(log.path()).string()) + "\n";
    text += "root      " +
            (state.cwd ? policy::shown_safely(root) : std::string("(none recorded)")) + "\n";
    text += "mode      " + mode + from(state.mode.has_value()) + "\n";
    text += "approval  " + approval + from(state.approval.has_value()) + "\n";
    text += "preset    " + preset + "\n";
    text += "grants";
    if (state.grants.empty()) text += "    (none)";
    text += "\n";
    for (const auto& grant : state.grants) {
        // The network only where it was asked for: danger-full-access has the host's anyway.
        const bool network = sandbox::is_confined(grant.mode) &&
                             grant.network.policy != sandbox::network_policy::deny;
        text += "  " + policy::shown_safely(grant.id) + "  " + policy::describe(grant) + " under " +
                std::string(sandbox::to_string(grant.mode)) +
                (network ? " with network " + policy::to_string(grant.network) : std::string()) +
                "\n";
    }
    text += "trail\n";
    for (const auto& event : state.events) {
        text += "  " + policy::shown_safely(text_of(event.body, "at")) + "  " +
                describe_event(event) + "\n";
    }
    std::cout << text;
    return 0;
}

// The knobs' and the preset's values before and after a change, one line each that changed.
std::string changes(const policy::session_state& before, const policy::session_state& after) {
    const policy::knobs old_knobs = policy::effective_knobs(before, run_defaults);
    const policy::knobs new_knobs = policy::effective_knobs(after, run_defaults);
    const auto presets = policy::default_presets();
    const std::string old_preset = policy::current_preset(presets, before, run_defaults);
    const std::string new_preset = policy::current_preset(presets, after, run_defaults);
    std::string out;
    if (old_knobs.mode != new_knobs.mode) {
        out += "mode: " + std::string(sandbox::to_string(old_knobs.mode)) + " \u2192 " +
               std::string(sandbox::to_string(new_knobs.mode)) + "\n";
    }
    if (old_knobs.approval != new_knobs.approval) {
        out += "approval: " + std::string(policy::to_string(old_knobs.approval)) + " \u2192 " +
               std::string(policy::to_string(new_knobs.approval)) + "\n";
    }
    if (old_preset != new_preset) out += "preset: " + old_preset + " \u2192 " + new_preset + "\n";
    return out;
}

int set(const session_options& options) {
    const int given = static_cast<int>(options.mode.has_value()) +
                      static_cast<int>(options.approval.has_value()) +
                      static_cast<int>(!options.preset.empty());
    if (given != 1) {
        return usage_error("cordon session set",
                           "give exactly one of --mode, --approval, --preset");
    }
    const std::optional<sandbox::sandbox_mode>& mode = options.mode;
    const std::optional<policy::approval_policy>& approval = options.approval;

    if (!options.preset.empty()) {
        // Checked before anything is opened or created; the text is presets.hpp's.
        const auto table = policy::default_presets();
        if (policy::find_preset(table, options.preset) == nullptr) {
            return usage_error("cordon session set", policy::unknown_preset(table, options.preset));
        }
    }

    // A session set before its first run is rooted where it is set, as `cordon run` would root
    // it in its workspace (the current directory by default).
    std::error_code ec;
    const bool existed = std::filesystem::exists(options.file, ec);
    auto opened = policy::session_log::open_or_create(options.file, sandbox::canonical_path("."));
    if (auto* error = std::get_if<policy::log_error>(&opened)) {
        return session_failed(options.file, *error);
    }
    const auto& log = std::get<policy::session_log>(opened);
    auto before = log.state();
    if (auto* error = std::get_if<policy::log_error>(&before)) {
        return session_failed(log.path(), *error);
    }

    std::optional<policy::log_error> failed;
    bool recorded = false;  // an event was appended, even one that leaves the state as it read
    if (mode) {
        auto written = policy::set_mode(log, *mode);
        if (auto* error = std::get_if<policy::log_error>(&written)) failed = *error;
        recorded = std::get_if<bool>(&written) != nullptr && std::get<bool>(written);
    } else if (approval) {
        auto written = policy::set_approval_policy(log, *approval);
        if (auto* error = std::get_if<policy::log_error>(&written)) failed = *error;
        recorded = std::get_if<bool>(&written) != nullptr && std::get<bool>(written);
    } else {
        auto written =
            policy::set_preset(log, policy::default_presets(), options.preset, run_defaults);
        if (auto* error = std::get_if<policy::log_error>(&written)) failed = *error;
        const auto* events = std::get_if<std::vector<nlohmann::json>>(&written);
        recorded = events != nullptr && !events->empty();
    }
    if (failed) return session_failed(log.path(), *failed);

    // The log keeps what folds to the session's state and its latest events (the audit tail):
    // what `set` changed is the newest of them.
    // A compaction that fails (a reader holds the lock) is said, not a failure: the change was
    // written, and a script that retried it would make it twice.
    auto compacted = log.compact();
    if (auto* error = std::get_if<policy::log_error>(&compacted)) {
        std::cerr << session_command_name << ": warning: the change was written, but the log was "
                  << "not compacted: " << session_error_text(log.path(), *error) << '\n';
    }
    auto after = log.state();
    if (auto* error = std::get_if<policy::log_error>(&after))
        return session_failed(log.path(), *error);
    const std::string changed =
        changes(std::get<policy::session_state>(before), std::get<policy::session_state>(after));
    if (!existed) {
        std::cout << "created "
                  << policy::shown_safely(sandbox::canonical_path(log.path()).string()) << " (root "
                  << policy::shown_safely(sandbox::canonical_path(".").string()) << ")\n";
    }
    const policy::compaction none{};
    const auto* was = std::get_if<policy::compaction>(&compacted);
    const policy::compaction& done = was != nullptr ? *was : none;
    // A default value recorded: the session now pins it above the configuration files.
    std::cout << (!changed.empty() ? changed
                  : recorded       ? "recorded: the session now pins what it showed by default\n"
                  : done.rewritten ? "unchanged\n"
                                   : "unchanged: nothing written\n");
    if (done.rewritten) {
        std::cout << "compacted: " << done.dropped << " events dropped (" << done.bytes_before
                  << " \u2192 " << done.bytes_after << " bytes)\n";
    }
    return 0;
}

int revoke(const session_options& options) {
    auto opened = policy::session_log::open_existing(options.file);
    if (auto* error = std::get_if<policy::log_error>(&opened)) {
        return session_failed(options.file, *error);
    }
    auto log = std::make_shared<const policy::session_log>(
        std::get<policy::session_log>(std::move(opened)));
    auto read = log->state();
    if (auto* error = std::get_if<policy::log_error>(&read))
        return session_failed(log->path(), *error);
    std::string covered;  // already shown safely by describe()
    for (const auto& grant : std::get<policy::session_state>(read).grants) {
        if (grant.id == options.grant) {
            covered =
                policy::describe(grant) + " under " + std::string(sandbox::to_string(grant.mode));
        }
    }
    policy::approval_service service({}, log);
    if (auto error = service.revoke(options.grant)) return session_failed(log->path(), *error);
    std::cout << "revoked " << policy::shown_safely(options.grant);
    if (!covered.empty()) std::cout << ": " << covered;
    std::cout << '\n';
    return 0;
}

}  // namespace

std::string session_error_text(const std::filesystem::path& file, const policy::log_error& error) {
    // The library's messages about the file as a whole name it already.
    if (error.line == 0) return error.message;
    return file.string() + ":" + std::to_string(error.line) + ": " + error.message;
}

std::function<int()> add_session_command(CLI::App& app) {
    auto options = std::make_shared<session_options>();
    auto* sub = app.add_subcommand("session", "Show or change a session log");
    sub->require_subcommand(1);

    auto* show_sub = sub->add_subcommand("show", "The session's policy, grants and audit trail");
    show_sub->add_option("FILE", options->file, "The session log")->required();
    show_sub->add_flag("--json", options->json, "Print it as JSON");

    auto* set_sub = sub->add_subcommand("set", "Change the session's mode, approval or preset");
    set_sub->add_option("FILE", options->file, "The session log (created if missing)")->required();
    // An empty value is no value, as before the values were checked while parsing.
    set_sub->add_option("--mode", options->mode, "read-only, workspace-write or danger-full-access")
        ->transform(mode_value({"cordon session set", unknown_mode, true}))
        ->type_name("TEXT");
    set_sub->add_option("--approval", options->approval, "ask or never")
        ->transform(approval_value({"cordon session set", unknown_approval, true}))
        ->type_name("TEXT");
    set_sub->add_option("--preset", options->preset, "workspace-write or danger-full-access");

    auto* revoke_sub = sub->add_subcommand("revoke", "End an allowed-for-session grant");
    revoke_sub->add_option("FILE", options->file, "The session log")->required();
    revoke_sub->add_option("GRANT_ID", options->grant, "The grant's id (cordon session show)")
        ->required();

    return [options, show_sub, set_sub] {
        if (show_sub->parsed()) return show(*options);
        if (set_sub->parsed()) return set(*options);
        return revoke(*options);
    };
}

}  // namespace cordon::cli
