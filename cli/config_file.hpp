// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The configuration files: TOML, parsed with toml++ (docs/contract.md, "Configuration").
//
// `/etc/cordon/config.toml`, then `$XDG_CONFIG_HOME/cordon/config.toml` (else
// `~/.config/cordon/config.toml`), each later file overriding the earlier per key; the environment
// variable CORDON_CONFIG_DIRS, when set, replaces that list with its colon-separated directories
// (each may hold a config.toml), so that tests and deployments never depend on the real /etc.
// Top-level keys are defaults; `[profile.NAME]` tables are named profiles (`--profile NAME`), which
// rank above every file's top level. Everything is checked whole, selected or not: an unknown key,
// a wrong type or a bad value is one line naming the file, the line and the key, and the command
// exits 2 (a misspelt key must never drop a setting silently). So is a file whose content someone
// other than its owner (root or the invoking user) could change: whoever writes it sets the
// sandbox's defaults.
//
// Layers, highest first: flags, the session, the profile, the files, the built-in defaults
// (cli/settings.hpp resolves them, with each value's origin). The configuration ranks below the
// session, so that it never conflicts with what a session records.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cli/path_options.hpp"
#include "cordon/approval_rules.hpp"
#include "cordon/mode.hpp"
#include "cordon/policy.hpp"
#include "cordon/session_log.hpp"
#include "sandbox/local_provider.hpp"

namespace cordon::cli {

// Where a value came from.
struct origin {
    enum class kind { flag, session, profile, file, built_in };
    kind from = kind::built_in;
    std::filesystem::path file;  // the session log for session; the file for profile and file
    std::string profile;         // for profile

    // "flag", "session FILE", "profile NAME in FILE", "FILE", "default".
    [[nodiscard]] std::string text() const;
};

template <typename T>
struct sourced {
    T value;
    origin from;
};

// The values one layer of the configuration sets (a file's top level, or a profile in one file),
// or, merged, all of them; empty where none did. Durations in milliseconds, sizes in bytes; 0 is
// "unlimited" for max_processes and max_memory, as for the flags.
struct config_values {
    std::optional<sourced<sandbox::sandbox_mode>> mode;
    std::optional<sourced<sandbox::backend_choice>> backend;
    std::optional<sourced<std::chrono::milliseconds>> timeout;
    std::optional<sourced<std::uint64_t>> max_output;
    std::optional<sourced<std::uint64_t>> max_processes;
    std::optional<sourced<std::uint64_t>> max_memory;
    std::optional<sourced<policy::approval_policy>> approval;
    // The ids of cordon's commands when cordon runs as root (docs/sandbox.md, "Identity").
    std::optional<sourced<sandbox::identity_range>> identity_range;
    std::optional<sourced<std::chrono::milliseconds>> approval_timeout;
    // The policy beyond the mode, as the flags spell it (paths absolute, "~/" expanded): each
    // layer's lists extend the layers below, its unprotect and allow_read take away from them.
    path_flags paths;
    std::optional<bool> accept_partial;  // a later layer may turn it off again
    // The network (paths.network, paths.allow_unix_sockets, paths.allowed_domains,
    // paths.denied_domains, and paths.proxy_resolve as "NAME=ADDRESS"): allow_local_binding
    // likewise.
    std::optional<bool> allow_local_binding;
    // The environment: env_clear as a value (a later layer may turn it off again), env_keep and
    // env_unset as lists that extend the layers below (names or globs, cordon/environment.hpp).
    std::optional<sourced<bool>> env_clear;
    std::vector<sourced<std::string>> env_keep;
    std::vector<sourced<std::string>> env_unset;
    // [[approval_rule]] tables (cordon/approval_rules.hpp), each checked as it loads: each
    // layer's extend the layers below.
    std::vector<sourced<policy::command_rule>> approval_rules;
};

// The policy beyond the mode a set of layers makes, on top of the defaults, with where each list
// entry and value came from ("protect .envrc", "deny_read /root/.ssh", "tmp", "accept_partial").
struct configured_rules {
    sandbox::path_rules rules;
    // "network", "allow_unix_sockets PATH", "allow_local_binding", "allowed_domains D",
    // "denied_domains D", "proxy_resolve NAME"
    sandbox::network_rules network;
    std::map<std::string, origin> origins;
};

// The keys a file or a profile may hold, in the order `cordon config show` lists them.
[[nodiscard]] const std::vector<std::string_view>& config_keys();

struct loaded_config {
    std::vector<std::filesystem::path> looked_in;  // every candidate file, in order
    std::vector<std::filesystem::path> files;      // those that exist, canonical, in order
    std::vector<std::filesystem::path> links;      // the symlinks among the candidates read
    std::string profile;                           // "" without --profile
    config_values values;                          // the scalars, merged (values.paths is unused)
    configured_rules rules;
};

// The scalars of `over` (a higher layer) over those of `onto`; its env_keep and env_unset added.
void overlay(config_values& onto, const config_values& over);

// Applies one layer's policy parts (a file's, a profile's, the flags') on top of `into`, noting
// where each new entry came from; the message, naming the layer and the key, when one is bad.
[[nodiscard]] std::optional<std::string> apply_rules(configured_rules& into,
                                                     const path_flags& paths,
                                                     std::optional<bool> accept_partial,
                                                     const origin& from,
                                                     std::optional<bool> allow_local_binding = {});

// The rules `flags` (the command line) ask for on top of the configuration's, with their origins.
[[nodiscard]] std::variant<configured_rules, std::string> rules_with_flags(
    const configured_rules& configured, const path_flags& flags);

// The candidate files, in order (CORDON_CONFIG_DIRS, else /etc and the user's).
[[nodiscard]] std::vector<std::filesystem::path> config_candidates();

// Reads and checks every candidate that exists and applies `profile` ("" for none), or returns
// the one-line reason it cannot (without the command's name).
[[nodiscard]] std::variant<loaded_config, std::string> load_config(const std::string& profile);

// Why `config` must not be used for a run of `policy` (a workspace-write command could rewrite one
// of its files, or create or rewrite one where a cordon of this account would look: the
// candidates, /etc/cordon, ~/.config/cordon under $HOME and the account's home, and
// $XDG_CONFIG_HOME/cordon), or nullopt. Its files and those places (each named, and where it
// leads) are added to `protected_paths` either way, so that no run under a wider mode can write
// them.
[[nodiscard]] std::optional<std::string> config_refusal(
    const loaded_config& config, const sandbox::sandbox_policy& policy,
    std::vector<std::filesystem::path>& protected_paths);

// "120s", "500ms", "5m", "1h": the shortest exact form.
[[nodiscard]] std::string duration_text(std::chrono::milliseconds value);
// "64000", "512K", "16M", "2G"; "unlimited" for 0 when `zero_is_unlimited`.
[[nodiscard]] std::string size_text(std::uint64_t bytes, bool zero_is_unlimited);

}  // namespace cordon::cli
