// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The network as an escalation asks for it, an approval shows it and a session grant records it:
// the policy and, under proxy, the domains it lets through (docs/network.md, "Asking for the
// network"). Ordered by what each lets through: deny < proxy(D) < allow, and proxy(D1) <=
// proxy(D2) when every domain of D1 is one of D2 (canonical pattern texts, compared as strings:
// `*.example.com` does not stand for `a.example.com` here, so a grant never covers a name nobody
// saw). denied_domains are no part of it: an escalation only adds to what is allowed, and the
// denied list still wins at the proxy.
//
//     question.requested_network = {cordon::network_policy::proxy, {"registry.npmjs.org"}};
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/export.hpp"
#include "cordon/mode.hpp"
#include "cordon/policy.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::policy {

struct network_request {
    sandbox::network_policy policy = sandbox::network_policy::deny;
    // Under proxy: canonical patterns (docs/network.md), each once, in the order
    // given; empty under deny and allow.
    std::vector<std::string> domains;
    friend bool operator==(const network_request&, const network_request&) = default;
};

// What a run with `rules` may reach: its policy and, under proxy, its allowed_domains.
[[nodiscard]] network_request network_of(const sandbox::network_rules& rules);

// The network a run under `mode` has: danger-full-access has the host's (allow) whatever
// `network` says.
[[nodiscard]] network_request network_under(sandbox::sandbox_mode mode, network_request network);

// Whether `wider` lets through everything `narrower` does (the order above).
[[nodiscard]] bool covers(const network_request& wider, const network_request& narrower);

// The narrowest network that covers both: allow if either is; else proxy with the domains of
// both (a's first) if either is proxy; else deny. What a run standing under `a` that asks for `b`
// runs with: an escalation adds to the standing network, never takes from it.
[[nodiscard]] network_request joined(const network_request& a, const network_request& b);

// "deny", "allow", "proxy: a.example, *.b.example" ("proxy" when it names no domain).
[[nodiscard]] std::string to_string(const network_request& network);

// What a run changes in the network, one line for the person asked; empty when `to` asks for
// nothing `from` does not let through. "deny \u2192 proxy: registry.npmjs.org",
// "proxy: a \u2192 allow (every destination, ...)", and from proxy to more proxy domains only
// the new ones: "proxy \u2192 proxy: +b.example, +c.example". An address that is not another
// host's public one says what it is and which ports: "+127.0.0.1:18080 (the host's own
// loopback, port 18080)".
// A name proxy_resolve maps (`mappings`) is shown with its address and what that is:
// "+db.test:5432 (mapped to 127.0.0.1, the host's own loopback, port 5432)".
[[nodiscard]] std::string network_change(const network_request& from, const network_request& to,
                                         const std::vector<sandbox::host_mapping>& mappings = {});

// `rules` as a run granted `granted` has them: its policy, and under proxy the granted domains
// added to allowed_domains (denied_domains, proxy_resolve and the rest unchanged). The network
// rules of a call after its escalation: with_network(standing, escalation_result::granted_network).
[[nodiscard]] sandbox::network_rules with_network(sandbox::network_rules rules,
                                                  const network_request& granted);

// The entry of `denied` (canonical patterns) that refuses every destination `domain` (a
// canonical pattern) stands for, or nullopt: equal, or a wildcard above it, on its port or any;
// an address that shares a form with a denied one (sandbox::carried_ipv4); a name `mappings`
// (proxy_resolve) maps to a denied address.
[[nodiscard]] std::optional<std::string> denied_by(
    const std::vector<std::string>& denied, std::string_view domain,
    const std::vector<sandbox::host_mapping>& mappings = {});

// Writes `network` into a session log event or an escalation's JSON object: `policy_key` its
// policy and, under proxy, `domains_key` its domains (an array, perhaps empty).
void put_network(nlohmann::json& into, const network_request& network, const char* policy_key,
                 const char* domains_key);

// What put_network() wrote, read back; fail closed: a policy absent is deny, domains absent
// under proxy are none (so a grant logged without them covers no proxy domain). Assumes the
// fields passed invalid_network_fields().
[[nodiscard]] network_request network_from_json(const nlohmann::json& from, const char* policy_key,
                                                const char* domains_key);

// Why the fields do not hold what put_network() writes (a policy other than deny, proxy or allow;
// domains that are not an array of canonical patterns), or nullopt. Both are optional.
[[nodiscard]] std::optional<std::string> invalid_network_fields(const nlohmann::json& from,
                                                                const char* policy_key,
                                                                const char* domains_key);

}  // namespace cordon::policy

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using policy::network_request;
}  // namespace cordon
CORDON_PUBLIC_END
