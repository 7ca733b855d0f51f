// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// How each backend puts up a run's network policy (docs/sandbox.md, "Network"), as pure data:
// which walls, and what the record says about them. Nothing here spawns or probes, except
// can_make_network_namespace(), which asks the kernel for cordon's own capabilities.
//
//   bwrap, deny: --unshare-net (a network namespace with bwrap's loopback only), and the launcher
//     inside refuses socket(AF_UNIX), since a namespace does not separate pathname sockets, and
//     every family but AF_INET, AF_INET6 and AF_NETLINK, which it does not separate either
//     (AF_VSOCK reaches the hypervisor from any namespace).
//   Landlock rung, deny, where cordon holds CAP_SYS_ADMIN: the launcher (or the forked child)
//     makes the namespace itself and brings its loopback up; the same socket refusals.
//   Landlock rung, deny, without it: no namespace; the seccomp filter refuses socket() of every
//     family (AF_UNIX too unless allow_unix_sockets lists any), and from Landlock ABI 4 a network
//     ruleset refuses every TCP connect and bind, a second wall for sockets the filter missed.
//   proxy: deny's walls, in a network namespace on every backend, and the launcher's forwarder on
//     the namespace's loopback (proxy_port), which hands each connection to cordon's proxy
//     (proxy/service.hpp) over an inherited socketpair. Without a namespace there is no proxy: the
//     Landlock rung's port rules cannot tell one host from another, so the run is refused
//     (`unavailable`), whatever accept_partial says; Seatbelt likewise.
//   allow: the host's network, enforcement none.
// A listed allow_unix_socket lifts the AF_UNIX refusal as a whole (a filter cannot read a path),
// which is partial enforcement naming it: refused unless path_rules::accept_partial.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "cordon/confined_argv.hpp"
#include "cordon/policy.hpp"

namespace cordon::sandbox {

struct network_walls {
    network_confinement how;
    network_facts facts;
    // Set when the backend cannot put the policy up at all: why, in one line. Never a gap to
    // accept: the run is refused (SANDBOX_UNAVAILABLE).
    std::optional<std::string> unavailable;
};

// Where the forwarder listens in the run's network namespace, and what the command's proxy
// variables name.
inline constexpr int proxy_port = 3128;

// The command's environment under proxy: HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (socks5h, so
// that names are resolved by the proxy) in both cases, and NO_PROXY for loopback. Any variable
// of the same names the command had is replaced (is_proxy_variable).
[[nodiscard]] std::vector<std::string> proxy_environment();
[[nodiscard]] bool is_proxy_variable(std::string_view entry) noexcept;

// The walls `kind` puts up for `rules`. `landlock_abi` is the kernel's (<= 0: none);
// `can_unshare_net`: the Landlock rung can make a network namespace (cordon holds CAP_SYS_ADMIN).
[[nodiscard]] network_walls plan_network(backend_kind kind, const network_rules& rules,
                                         int landlock_abi, bool can_unshare_net);

// How many times this process has called plan_network(): a run's plan makes its walls once
// (local_provider::plan), which the tests hold it to.
[[nodiscard]] std::uint64_t network_plans() noexcept;

// The launcher's flags for `how` (bwrap makes the namespace itself: never --unshare-net there).
[[nodiscard]] std::vector<std::string> launcher_network_arguments(const network_confinement& how);

// Whether this process holds CAP_SYS_ADMIN in its effective set, which unshare(CLONE_NEWNET)
// needs without a user namespace.
[[nodiscard]] bool can_make_network_namespace() noexcept;

}  // namespace cordon::sandbox
