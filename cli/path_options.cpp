// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cli/path_options.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <tuple>

#include "cli/options.hpp"
#include "sandbox/domain_pattern.hpp"

namespace cordon::cli {

namespace fs = std::filesystem;

void add_path_options(CLI::App& sub, path_flags& flags) {
    const std::string group = "Policy beyond the mode (docs/sandbox.md)";
    sub.add_option("--writable-root", flags.writable_roots,
                   "Another directory workspace-write commands may write (repeatable)")
        ->type_name("DIR")
        ->group(group);
    sub.add_option("--read-only-path", flags.read_only,
                   "A path beneath a writable root that stays read-only (repeatable)")
        ->type_name("PATH")
        ->group(group);
    sub.add_option("--deny-read", flags.deny_read,
                   "A path no confined command may read, beside the credential stores "
                   "(repeatable)")
        ->type_name("PATH")
        ->group(group);
    sub.add_option("--allow-read", flags.allow_read,
                   "A denied path (e.g. ~/.ssh) confined commands may read after all; / lets "
                   "every one through (repeatable)")
        ->type_name("PATH")
        ->group(group);
    sub.add_option("--protect", flags.protect,
                   "A name kept read-only in every writable root, beside the defaults "
                   "(repeatable)")
        ->group(group);
    sub.add_option("--unprotect", flags.unprotect,
                   "A protected name to leave writable; all: every one (repeatable)")
        ->group(group);
    offer_choices(sub.add_option("--tmp", flags.tmp,
                                 "/tmp for workspace-write: private (default), host or none"),
                  names_of({sandbox::tmp_policy::private_tmp, sandbox::tmp_policy::host,
                            sandbox::tmp_policy::none}))
        ->group(group);
    sub.add_flag("--accept-partial", flags.accept_partial,
                 "Run where the backend cannot enforce part of the policy (a read-only path "
                 "under the Landlock rung, the network on older kernels); the record says which "
                 "part")
        ->group(group);
    const std::string network = "Network (docs/network.md)";
    offer_choices(sub.add_option("--network", flags.network,
                                 "deny (default: loopback only), proxy (only the allowed domains, "
                                 "through cordon's proxy) or allow (the host's network); "
                                 "danger-full-access always has the host's"),
                  names_of({sandbox::network_policy::deny, sandbox::network_policy::proxy,
                            sandbox::network_policy::allow}))
        ->group(network);
    sub.add_option("--allow-domain", flags.allowed_domains,
                   "A domain the proxy lets through: example.com, *.example.com, an address, "
                   "each with an optional :port (repeatable; implies --network proxy)")
        ->group(network);
    sub.add_option("--deny-domain", flags.denied_domains,
                   "A domain the proxy refuses whatever --allow-domain says (repeatable)")
        ->group(network);
    sub.add_option("--proxy-resolve", flags.proxy_resolve,
                   "NAME=ADDRESS: the proxy resolves NAME to ADDRESS instead of asking DNS "
                   "(repeatable)")
        ->group(network);
    sub.add_option("--allow-unix-socket", flags.allow_unix_sockets,
                   "A host unix socket confined commands may connect to under deny (repeatable)")
        ->type_name("PATH")
        ->group(network);
    sub.add_flag("--allow-local-binding", flags.allow_local_binding,
                 "Let confined commands listen on loopback under deny")
        ->group(network);
}

namespace {

// `raw` made absolute against the current directory and resolved; the error when it is empty.
std::variant<fs::path, std::string> absolute_of(std::string_view option, const std::string& raw) {
    if (raw.empty()) return std::string(option) + " needs a path";
    return sandbox::canonical_path(raw);
}

}  // namespace

std::variant<sandbox::path_rules, std::string> path_rules_of(const path_flags& flags,
                                                             sandbox::path_rules base) {
    sandbox::path_rules out = std::move(base);
    for (const std::string& raw : flags.writable_roots) {
        auto path = absolute_of("--writable-root", raw);
        if (auto* error = std::get_if<std::string>(&path)) return *error;
        const fs::path& root = std::get<fs::path>(path);
        std::error_code ec;
        if (!fs::is_directory(root, ec)) {
            return "--writable-root " + raw + " is not a directory";
        }
        const fs::path spelled = fs::absolute(raw, ec).lexically_normal();
        if (spelled != root && spelled != root / "") {
            return "--writable-root " + raw + " is not the directory's own path (it resolves to " +
                   root.string() + "); give the real path";
        }
        if (root == "/") return "--writable-root / would make the whole host writable";
        if (std::find(out.writable_roots.begin(), out.writable_roots.end(), root) ==
            out.writable_roots.end()) {
            out.writable_roots.push_back(root);
        }
    }
    for (const std::string& raw : flags.read_only) {
        auto path = absolute_of("--read-only-path", raw);
        if (auto* error = std::get_if<std::string>(&path)) return *error;
        std::error_code ec;
        if (!fs::exists(std::get<fs::path>(path), ec)) {
            return "--read-only-path " + raw + " does not exist";
        }
        out.read_only.push_back(std::get<fs::path>(path));
    }
    for (const std::string& raw : flags.deny_read) {
        auto path = absolute_of("--deny-read", raw);
        if (auto* error = std::get_if<std::string>(&path)) return *error;
        out.deny_read.push_back(std::get<fs::path>(path));
    }
    for (const std::string& raw : flags.allow_read) {
        auto path = absolute_of("--allow-read", raw);
        if (auto* error = std::get_if<std::string>(&path)) return *error;
        out.allow_read.push_back(std::get<fs::path>(path));
    }
    for (const std::string& name : flags.protect) {
        if (auto bad = sandbox::bad_protected_name(name)) return "--protect: " + *bad;
        if (std::find(out.protect.begin(), out.protect.end(), name) == out.protect.end()) {
            out.protect.push_back(name);
        }
    }
    for (const std::string& name : flags.unprotect) {
        if (name == "all") {
            out.protect.clear();
            continue;
        }
        if (auto bad = sandbox::bad_protected_name(name)) return "--unprotect: " + *bad;
        const auto found = std::find(out.protect.begin(), out.protect.end(), name);
        if (found == out.protect.end()) {
            return "--unprotect " + name +
                   " is not a protected name (cordon config show lists "
                   "them; all leaves every one writable)";
        }
        out.protect.erase(found);
    }
    if (!flags.tmp.empty()) {
        auto tmp = sandbox::parse_tmp_policy(flags.tmp);
        if (!tmp) return "invalid --tmp \"" + flags.tmp + "\" (private, host or none)";
        out.tmp = *tmp;
    }
    if (flags.accept_partial) out.accept_partial = true;
    return out;
}

std::variant<std::string, domain_error> canonical_domain(std::string_view text) {
    auto parsed = sandbox::parse_domain_pattern(text);
    if (auto* reason = std::get_if<std::string>(&parsed)) return domain_error{std::move(*reason)};
    return sandbox::to_string(std::get<sandbox::domain_pattern>(parsed));
}

std::variant<sandbox::host_mapping, std::string> host_mapping_of(std::string_view name,
                                                                 std::string_view address) {
    const auto host = sandbox::parse_destination_host(name);
    if (!host || host->address) return "\"" + std::string(name) + "\" is not a host name";
    // An IPv6 address may be written as in a URL, [::1].
    std::string_view bare = address;
    if (bare.size() > 2 && bare.front() == '[' && bare.back() == ']') {
        bare = bare.substr(1, bare.size() - 2);
    }
    const auto to = sandbox::parse_destination_host(bare);
    if (!to || !to->address) {
        return "\"" + std::string(address) + "\" is not an IPv4 or IPv6 address";
    }
    return sandbox::host_mapping{host->host, to->host};
}

std::variant<sandbox::network_rules, std::string> network_rules_of(const path_flags& flags,
                                                                   sandbox::network_rules base) {
    sandbox::network_rules out = std::move(base);
    if (!flags.network.empty()) {
        auto policy = sandbox::parse_network_policy(flags.network);
        if (!policy) return "invalid --network \"" + flags.network + "\" (deny, proxy or allow)";
        // Domains to allow under a network that would not use them: one of the two is a mistake.
        if (*policy != sandbox::network_policy::proxy && !flags.allowed_domains.empty()) {
            return std::string("--allow-domain needs --network proxy");
        }
        out.policy = *policy;
    } else if (!flags.allowed_domains.empty()) {
        out.policy = sandbox::network_policy::proxy;
    }
    for (const auto& [option, given, into] :
         {std::tuple{"--allow-domain", &flags.allowed_domains, &out.allowed_domains},
          std::tuple{"--deny-domain", &flags.denied_domains, &out.denied_domains}}) {
        for (const std::string& raw : *given) {
            auto domain = canonical_domain(raw);
            if (auto* error = std::get_if<domain_error>(&domain)) {
                return "invalid " + std::string(option) + " \"" + raw + "\": " + error->reason;
            }
            std::string& canonical = std::get<std::string>(domain);
            if (std::find(into->begin(), into->end(), canonical) == into->end()) {
                into->push_back(std::move(canonical));
            }
        }
    }
    for (const std::string& raw : flags.proxy_resolve) {
        const std::size_t equals = raw.find('=');
        if (equals == std::string::npos) {
            return "invalid --proxy-resolve \"" + raw + "\": expected NAME=ADDRESS";
        }
        auto mapping = host_mapping_of(std::string_view(raw).substr(0, equals),
                                       std::string_view(raw).substr(equals + 1));
        if (auto* error = std::get_if<std::string>(&mapping)) {
            return "invalid --proxy-resolve \"" + raw + "\": " + *error;
        }
        auto& mapped = std::get<sandbox::host_mapping>(mapping);
        // A later one names the same host again: it wins.
        const auto same = std::find_if(
            out.proxy_resolve.begin(), out.proxy_resolve.end(),
            [&mapped](const sandbox::host_mapping& each) { return each.name == mapped.name; });
        if (same != out.proxy_resolve.end()) {
            same->address = mapped.address;
        } else {
            out.proxy_resolve.push_back(std::move(mapped));
        }
    }
    for (const std::string& raw : flags.allow_unix_sockets) {
        auto path = absolute_of("--allow-unix-socket", raw);
        if (auto* error = std::get_if<std::string>(&path)) return *error;
        const fs::path& socket = std::get<fs::path>(path);
        std::error_code ec;
        const fs::file_status status = fs::status(socket, ec);
        if (!fs::exists(status)) return "--allow-unix-socket " + raw + " does not exist";
        if (!fs::is_socket(status)) return "--allow-unix-socket " + raw + " is not a socket";
        if (std::find(out.allow_unix_sockets.begin(), out.allow_unix_sockets.end(), socket) ==
            out.allow_unix_sockets.end()) {
            out.allow_unix_sockets.push_back(socket);
        }
    }
    if (flags.allow_local_binding) out.allow_local_binding = true;
    return out;
}

}  // namespace cordon::cli
