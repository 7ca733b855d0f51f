// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The options of `cordon run` and `cordon mcp` that shape a policy beyond its mode
// (cordon/policy.hpp): --writable-root, --read-only-path, --deny-read, --allow-read, --protect,
// --unprotect, --tmp and --accept-partial; and the network's (docs/network.md): --network,
// --allow-unix-socket, --allow-local-binding, --allow-domain, --deny-domain and --proxy-resolve.
// Parsed as given, then turned into path_rules and network_rules before anything runs; a bad value
// is a usage error (one line, exit 2).
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cordon/policy.hpp"

namespace cordon::cli {

struct path_flags {
    std::vector<std::string> writable_roots;      // --writable-root DIR
    std::vector<std::string> read_only;           // --read-only-path PATH
    std::vector<std::string> deny_read;           // --deny-read PATH
    std::vector<std::string> allow_read;          // --allow-read PATH ("/": no denied reads)
    std::vector<std::string> protect;             // --protect NAME
    std::vector<std::string> unprotect;           // --unprotect NAME ("all": no protected names)
    std::string tmp;                              // --tmp private|host|none ("" not given)
    bool accept_partial = false;                  // --accept-partial
    std::string network;                          // --network deny|allow ("" not given)
    std::vector<std::string> allow_unix_sockets;  // --allow-unix-socket PATH
    bool allow_local_binding = false;             // --allow-local-binding
    std::vector<std::string> allowed_domains;     // --allow-domain D
    std::vector<std::string> denied_domains;      // --deny-domain D
    std::vector<std::string> proxy_resolve;       // --proxy-resolve NAME=ADDRESS
};

// Registers the options on `sub`; `flags` must outlive the parse.
void add_path_options(CLI::App& sub, path_flags& flags);

// The rules the flags ask for, on top of the defaults (or of `base`, a configuration's), with
// every path made absolute against the current directory; the usage error otherwise.
[[nodiscard]] std::variant<sandbox::path_rules, std::string> path_rules_of(
    const path_flags& flags, sandbox::path_rules base = {});

// Why a domain pattern is none: parse_domain_pattern()'s reason ("empty", "is not a host name").
struct domain_error {
    std::string reason;
};

// The canonical text of the domain pattern `text` (sandbox/domain_pattern.hpp), or why it is none.
[[nodiscard]] std::variant<std::string, domain_error> canonical_domain(std::string_view text);

// One entry of --proxy-resolve and the proxy_resolve key: `name` a host name (not an address),
// `address` an IPv4 or IPv6 address ([v6] too), both canonical; or why not:
//   "NAME" is not a host name  |  "ADDRESS" is not an IPv4 or IPv6 address
[[nodiscard]] std::variant<sandbox::host_mapping, std::string> host_mapping_of(
    std::string_view name, std::string_view address);

// The network rules the flags ask for on top of `base` (a configuration's, else deny): each
// --allow-unix-socket made absolute against the current directory and resolved, and refused
// unless it names an existing socket; each domain canonical, added to base's once; each
// --proxy-resolve replacing base's entry for its name. --allow-domain without --network means
// proxy, and with --network deny or allow is an error. The usage error otherwise.
[[nodiscard]] std::variant<sandbox::network_rules, std::string> network_rules_of(
    const path_flags& flags, sandbox::network_rules base = {});

}  // namespace cordon::cli
