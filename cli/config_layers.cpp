// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The parts of the configuration that need no parser: origins, the policy's layers applied in
// turn, the refusal of files a run could write, and how values are shown. config_file.cpp reads
// and checks the files.
#include "cli/config_file.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "cordon/policy.hpp"

namespace cordon::cli {

namespace fs = std::filesystem;

namespace {

// The key a path option's message names, for a message about a file's layer.
std::string keyed(std::string message) {
    // The one message that names two options (path_options.cpp).
    if (message == "--allow-domain needs --network proxy") {
        return "allowed_domains needs network proxy";
    }
    static const std::pair<std::string_view, std::string_view> keys[] = {
        {"--writable-root", "writable_roots"},
        {"--read-only-path", "read_only"},
        {"--deny-read", "deny_read"},
        {"--allow-read", "allow_read"},
        {"--protect", "protect"},
        {"--unprotect", "unprotect"},
        {"--tmp", "tmp"},
        {"--network", "network"},
        {"--allow-unix-socket", "allow_unix_sockets"},
        {"--allow-domain", "allowed_domains"},
        {"--deny-domain", "denied_domains"},
        {"--proxy-resolve", "proxy_resolve"}};
    for (const auto& [flag, key] : keys) {
        if (const auto at = message.find(flag); at != std::string::npos) {
            message.replace(at, flag.size(), key);
            break;
        }
    }
    return message;
}

// A layer's scalar, where it sets one, over the one below.
template <typename T>
void overlay(std::optional<T>& onto, const std::optional<T>& over) {
    if (over) onto = over;
}

}  // namespace

void overlay(config_values& onto, const config_values& over) {
    overlay(onto.mode, over.mode);
    overlay(onto.backend, over.backend);
    overlay(onto.timeout, over.timeout);
    overlay(onto.max_output, over.max_output);
    overlay(onto.max_processes, over.max_processes);
    overlay(onto.max_memory, over.max_memory);
    overlay(onto.approval, over.approval);
    overlay(onto.identity_range, over.identity_range);
    overlay(onto.approval_timeout, over.approval_timeout);
    overlay(onto.env_clear, over.env_clear);
    onto.env_keep.insert(onto.env_keep.end(), over.env_keep.begin(), over.env_keep.end());
    onto.env_unset.insert(onto.env_unset.end(), over.env_unset.begin(), over.env_unset.end());
    onto.approval_rules.insert(onto.approval_rules.end(), over.approval_rules.begin(),
                               over.approval_rules.end());
}

// Applies one layer's path settings on top of `into`, noting where each new entry came from
// (entries without a note are the defaults').
std::optional<std::string> apply_rules(configured_rules& into, const path_flags& paths,
                                       std::optional<bool> accept_partial, const origin& from,
                                       std::optional<bool> allow_local_binding) {
    auto applied = path_rules_of(paths, into.rules);
    if (auto* error = std::get_if<std::string>(&applied)) {
        return from.from == origin::kind::flag ? *error : from.text() + ": " + keyed(*error);
    }
    auto network = network_rules_of(paths, into.network);
    if (auto* error = std::get_if<std::string>(&network)) {
        return from.from == origin::kind::flag ? *error : from.text() + ": " + keyed(*error);
    }
    const sandbox::path_rules before = into.rules;
    const sandbox::network_rules network_before = into.network;
    into.rules = std::get<sandbox::path_rules>(std::move(applied));
    into.network = std::get<sandbox::network_rules>(std::move(network));
    if (accept_partial) into.rules.accept_partial = *accept_partial;
    if (allow_local_binding) into.network.allow_local_binding = *allow_local_binding;
    std::map<std::string, origin> origins;
    const auto note = [&](const std::string& key, bool was_there) {
        if (const auto found = into.origins.find(key); found != into.origins.end()) {
            origins[key] = found->second;
        } else if (!was_there) {
            origins[key] = from;
        }
    };
    const auto had = [](const auto& list, const auto& item) {
        return std::find(list.begin(), list.end(), item) != list.end();
    };
    for (const auto& each : into.rules.writable_roots)
        note("writable_roots " + each.string(), had(before.writable_roots, each));
    for (const auto& each : into.rules.read_only)
        note("read_only " + each.string(), had(before.read_only, each));
    for (const auto& each : into.rules.deny_read)
        note("deny_read " + each.string(), had(before.deny_read, each));
    for (const auto& each : into.rules.allow_read)
        note("allow_read " + each.string(), had(before.allow_read, each));
    for (const auto& each : into.rules.protect)
        note("protect " + each, had(before.protect, each));
    for (const auto& each : into.network.allow_unix_sockets)
        note("allow_unix_sockets " + each.string(), had(network_before.allow_unix_sockets, each));
    for (const auto& each : into.network.allowed_domains)
        note("allowed_domains " + each, had(network_before.allowed_domains, each));
    for (const auto& each : into.network.denied_domains)
        note("denied_domains " + each, had(network_before.denied_domains, each));
    // A name this layer maps is this layer's, whether it was mapped below or not (the entries
    // are valid: network_rules_of() took them).
    for (const auto& each : into.network.proxy_resolve)
        note("proxy_resolve " + each.name, true);
    for (const std::string& entry : paths.proxy_resolve) {
        const std::size_t equals = entry.find('=');
        const auto mapping = host_mapping_of(std::string_view(entry).substr(0, equals),
                                             std::string_view(entry).substr(equals + 1));
        if (const auto* mapped = std::get_if<sandbox::host_mapping>(&mapping)) {
            origins["proxy_resolve " + mapped->name] = from;
        }
    }
    for (const std::string key : {"tmp", "accept_partial", "network", "allow_local_binding"}) {
        if (const auto found = into.origins.find(key); found != into.origins.end()) {
            origins[key] = found->second;
        }
    }
    if (!paths.tmp.empty()) origins["tmp"] = from;
    if (accept_partial || paths.accept_partial) origins["accept_partial"] = from;
    // --allow-domain (allowed_domains) without a network of its layer's makes it proxy.
    if (!paths.network.empty() || !paths.allowed_domains.empty()) origins["network"] = from;
    if (allow_local_binding || paths.allow_local_binding) origins["allow_local_binding"] = from;
    into.origins = std::move(origins);
    return std::nullopt;
}

std::variant<configured_rules, std::string> rules_with_flags(const configured_rules& configured,
                                                             const path_flags& flags) {
    configured_rules out = configured;
    if (auto error = apply_rules(out, flags, std::nullopt, {origin::kind::flag, {}, {}})) {
        return *error;
    }
    return out;
}

const std::vector<std::string_view>& config_keys() {
    static const std::vector<std::string_view> keys{"mode",
                                                    "backend",
                                                    "timeout",
                                                    "max_output",
                                                    "max_processes",
                                                    "max_memory",
                                                    "approval",
                                                    "approval_timeout",
                                                    "identity_range",
                                                    "writable_roots",
                                                    "read_only",
                                                    "deny_read",
                                                    "allow_read",
                                                    "protect",
                                                    "unprotect",
                                                    "tmp",
                                                    "accept_partial",
                                                    "env_clear",
                                                    "env_keep",
                                                    "env_unset",
                                                    "network",
                                                    "allow_unix_sockets",
                                                    "allow_local_binding",
                                                    "allowed_domains",
                                                    "denied_domains",
                                                    "proxy_resolve",
                                                    "approval_rule"};
    return keys;
}

std::string origin::text() const {
    switch (from) {
        case kind::flag:
            return "flag";
        case kind::session:
            return "session " + file.string();
        case kind::profile:
            return "profile " + profile + " in " + file.string();
        case kind::file:
            return file.string();
        case kind::built_in:
            return "default";
    }
    return "default";
}

std::optional<std::string> config_refusal(const loaded_config& config,
                                          const sandbox::sandbox_policy& policy,
                                          std::vector<fs::path>& protected_paths) {
    const std::vector<fs::path> roots = sandbox::writable_roots(policy);
    const auto root_holding = [&roots](const fs::path& path) -> const fs::path* {
        for (const fs::path& root : roots) {
            if (sandbox::is_within(path, root)) return &root;
        }
        return nullptr;
    };
    std::vector<fs::path> every = config.files;
    every.insert(every.end(), config.links.begin(), config.links.end());
    for (const fs::path& file : every) {
        if (const fs::path* root = root_holding(file)) {
            return "the configuration file " + file.string() + " lies in " + root->string() +
                   ", which workspace-write commands may write; keep it elsewhere";
        }
    }
    // Every place a cordon of this account would read, whichever environment it was started with
    // (another XDG_CONFIG_HOME or HOME looks elsewhere): a run that could create or rewrite the
    // file there, or the link that names it, would set the defaults of every later cordon. Each as
    // the kernel would reach it: the name (its directory resolved) and where it leads (a dangling
    // link to its target).
    std::vector<fs::path> places = config.looked_in;
    places.emplace_back("/etc/cordon/config.toml");
    for (const fs::path& home : {sandbox::invoking_home(), sandbox::account_home()}) {
        if (!home.empty()) places.push_back(home / ".config" / "cordon" / "config.toml");
    }
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && xdg[0] == '/') {
        places.push_back(fs::path(xdg) / "cordon" / "config.toml");
    }
    for (const fs::path& place : places) {
        std::error_code ec;
        const bool there = fs::exists(place, ec);
        const fs::path named =
            sandbox::canonical_path(fs::absolute(place, ec).parent_path()) / place.filename();
        for (const fs::path& reached : {named, sandbox::canonical_path(place)}) {
            // A root of / is refused with its own reason by every rung (it holds /dev).
            if (const fs::path* root = root_holding(reached); root != nullptr && *root != "/") {
                if (there) {
                    return "the configuration file " + reached.string() + " lies in " +
                           root->string() +
                           ", which workspace-write commands may write; keep it elsewhere";
                }
                return "the configuration file " + reached.string() +
                       " is not there, and a workspace-write command could create it in " +
                       root->string() +
                       " to set the defaults of every later run; keep the workspace and the "
                       "writable roots away from it";
            }
            if (std::find(every.begin(), every.end(), reached) == every.end()) {
                every.push_back(reached);
            }
        }
    }
    protected_paths.insert(protected_paths.end(), every.begin(), every.end());
    return std::nullopt;
}

std::string duration_text(std::chrono::milliseconds value) {
    const auto ms = value.count();
    if (ms != 0 && ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
    if (ms != 0 && ms % 60'000 == 0) return std::to_string(ms / 60'000) + "m";
    if (ms % 1'000 == 0) return std::to_string(ms / 1'000) + "s";
    return std::to_string(ms) + "ms";
}

std::string size_text(std::uint64_t bytes, bool zero_is_unlimited) {
    if (bytes == 0 && zero_is_unlimited) return "unlimited";
    for (const auto& [shift, unit] : {std::pair{30, "G"}, std::pair{20, "M"}, std::pair{10, "K"}}) {
        const std::uint64_t step = 1ULL << shift;
        if (bytes != 0 && bytes % step == 0) return std::to_string(bytes / step) + unit;
    }
    return std::to_string(bytes);
}

}  // namespace cordon::cli
