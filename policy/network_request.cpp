// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cordon/network_request.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <variant>

#include "sandbox/domain_pattern.hpp"
#include "sandbox/host_address.hpp"

namespace cordon::policy {

using sandbox::network_policy;

namespace {

int rank(network_policy policy) {
    switch (policy) {
        case network_policy::deny:
            return 0;
        case network_policy::proxy:
            return 1;
        case network_policy::allow:
            return 2;
    }
    return 0;
}

bool holds(const std::vector<std::string>& list, std::string_view each) {
    return std::find(list.begin(), list.end(), each) != list.end();
}

// The proxy_resolve mappings a name pattern covers: (canonical name, address).
std::vector<std::pair<std::string, sandbox::ip_address>> mapped_under(
    const sandbox::domain_pattern& pattern, const std::vector<sandbox::host_mapping>& mappings) {
    std::vector<std::pair<std::string, sandbox::ip_address>> out;
    if (pattern.address) return out;
    for (const sandbox::host_mapping& each : mappings) {
        const auto name = sandbox::parse_destination_host(each.name);
        const auto address = sandbox::parse_ip_address(each.address);
        if (!name || name->address || !address) continue;
        const bool covered = pattern.wildcard ? name->host.ends_with("." + pattern.host)
                                              : name->host == pattern.host;
        if (covered) out.emplace_back(name->host, *address);
    }
    return out;
}

// A domain as the person asked reads it: an address that is not another host's public one says
// what it is and which ports it opens ("127.0.0.1:18080 (the host's own loopback, port 18080)"),
// since "+127.0.0.1" reads like the sandbox's own loopback; a name proxy_resolve maps says where
// to ("db.test:5432 (mapped to 127.0.0.1, the host's own loopback, port 5432)").
std::string shown_domain(const std::string& domain,
                         const std::vector<sandbox::host_mapping>& mappings) {
    const auto parsed = sandbox::parse_domain_pattern(domain);
    const auto* pattern = std::get_if<sandbox::domain_pattern>(&parsed);
    if (pattern == nullptr) return domain;
    const std::string ports =
        pattern->port ? "port " + std::to_string(*pattern->port) : "every port";
    if (!pattern->address) {
        std::string to;
        for (const auto& [name, address] : mapped_under(*pattern, mappings)) {
            const std::string what = sandbox::describe_address(address);
            to += to.empty() ? "" : "; ";
            if (pattern->wildcard) to += name + " ";
            to += "mapped to " + sandbox::to_string(address) + (what.empty() ? "" : ", " + what);
        }
        return to.empty() ? domain : domain + " (" + to + ", " + ports + ")";
    }
    const auto address = sandbox::parse_ip_address(pattern->host);
    if (!address) return domain;
    const std::string what = sandbox::describe_address(*address);
    if (what.empty()) return domain;
    return domain + " (" + what + ", " + ports + ")";
}

// `network` for the person asked: to_string() with each domain shown_domain(), and `allow` with
// what it opens.
std::string shown_network(const network_request& network,
                          const std::vector<sandbox::host_mapping>& mappings) {
    switch (network.policy) {
        case network_policy::deny:
            return "deny";
        case network_policy::allow:
            return "allow (every destination, the host's own loopback, its private network and "
                   "cloud metadata included)";
        case network_policy::proxy:
            break;
    }
    std::string out = "proxy";
    for (std::size_t i = 0; i < network.domains.size(); ++i) {
        out += (i == 0 ? ": " : ", ") + shown_domain(network.domains[i], mappings);
    }
    return out;
}

// An address and the IPv4 addresses it carries (sandbox::carried_ipv4).
std::vector<sandbox::ip_address> forms_of(const sandbox::ip_address& address) {
    std::vector<sandbox::ip_address> out{address};
    for (const auto& carried : sandbox::carried_ipv4(address))
        out.push_back(carried);
    return out;
}

// Whether the addresses `wanted` and `refusing` name share a form: the proxy refuses an address
// in every form a denied one takes, and the denied one in every form it carries.
bool carries(const sandbox::domain_pattern& wanted, const sandbox::domain_pattern& refusing) {
    if (!wanted.address || !refusing.address || refusing.wildcard) return false;
    const auto asked = sandbox::parse_ip_address(wanted.host);
    const auto denied = sandbox::parse_ip_address(refusing.host);
    if (!asked || !denied) return false;
    const auto asked_forms = forms_of(*asked);
    const auto denied_forms = forms_of(*denied);
    return std::any_of(asked_forms.begin(), asked_forms.end(), [&](const auto& each) {
        return std::find(denied_forms.begin(), denied_forms.end(), each) != denied_forms.end();
    });
}

}  // namespace

network_request network_of(const sandbox::network_rules& rules) {
    network_request out{rules.policy, {}};
    if (rules.policy == network_policy::proxy) {
        for (const std::string& each : rules.allowed_domains) {
            if (!holds(out.domains, each)) out.domains.push_back(each);
        }
    }
    return out;
}

network_request network_under(sandbox::sandbox_mode mode, network_request network) {
    if (mode == sandbox::sandbox_mode::danger_full_access) return {network_policy::allow, {}};
    return network;
}

bool covers(const network_request& wider, const network_request& narrower) {
    if (rank(wider.policy) != rank(narrower.policy)) {
        return rank(wider.policy) > rank(narrower.policy);
    }
    if (wider.policy != network_policy::proxy) return true;
    return std::all_of(narrower.domains.begin(), narrower.domains.end(),
                       [&wider](const std::string& each) { return holds(wider.domains, each); });
}

network_request joined(const network_request& a, const network_request& b) {
    if (a.policy == network_policy::allow || b.policy == network_policy::allow) {
        return {network_policy::allow, {}};
    }
    if (a.policy == network_policy::deny && b.policy == network_policy::deny) return {};
    network_request out{network_policy::proxy, {}};
    for (const network_request* each : {&a, &b}) {
        if (each->policy != network_policy::proxy) continue;
        for (const std::string& domain : each->domains) {
            if (!holds(out.domains, domain)) out.domains.push_back(domain);
        }
    }
    return out;
}

std::string to_string(const network_request& network) {
    std::string out(sandbox::to_string(network.policy));
    if (network.policy != network_policy::proxy) return out;
    for (std::size_t i = 0; i < network.domains.size(); ++i) {
        out += (i == 0 ? ": " : ", ") + network.domains[i];
    }
    return out;
}

std::string network_change(const network_request& from, const network_request& to,
                           const std::vector<sandbox::host_mapping>& mappings) {
    if (covers(from, to)) return "";
    if (from.policy == network_policy::proxy && to.policy == network_policy::proxy) {
        std::string added;
        for (const std::string& each : to.domains) {
            if (!holds(from.domains, each)) {
                added += (added.empty() ? "+" : ", +") + shown_domain(each, mappings);
            }
        }
        return "proxy \u2192 proxy: " + added;
    }
    return to_string(from) + " \u2192 " + shown_network(to, mappings);
}

sandbox::network_rules with_network(sandbox::network_rules rules, const network_request& granted) {
    rules.policy = granted.policy;
    if (granted.policy == network_policy::proxy) {
        for (const std::string& each : granted.domains) {
            if (!holds(rules.allowed_domains, each)) rules.allowed_domains.push_back(each);
        }
    }
    return rules;
}

std::optional<std::string> denied_by(const std::vector<std::string>& denied,
                                     std::string_view domain,
                                     const std::vector<sandbox::host_mapping>& mappings) {
    const auto asked = sandbox::parse_domain_pattern(domain);
    const auto* wanted = std::get_if<sandbox::domain_pattern>(&asked);
    if (wanted == nullptr) return std::nullopt;
    for (const std::string& each : denied) {
        const auto parsed = sandbox::parse_domain_pattern(each);
        const auto* refusing = std::get_if<sandbox::domain_pattern>(&parsed);
        if (refusing == nullptr) continue;
        // Every port the asked pattern stands for must be one the denied pattern refuses.
        if (refusing->port && refusing->port != wanted->port) continue;
        const bool same = refusing->host == wanted->host &&
                          refusing->wildcard == wanted->wildcard &&
                          refusing->address == wanted->address;
        const bool below =
            refusing->wildcard && !wanted->address && wanted->host.ends_with("." + refusing->host);
        if (same || below || carries(*wanted, *refusing)) return each;
    }
    // A name the operator maps to a denied address is that address: the proxy would refuse it.
    for (const auto& [name, address] : mapped_under(*wanted, mappings)) {
        std::string form = sandbox::to_string(address);
        if (!address.v4) form = "[" + form + "]";
        if (wanted->port) form += ":" + std::to_string(*wanted->port);
        if (auto refusing = denied_by(denied, form)) return refusing;
    }
    return std::nullopt;
}

void put_network(nlohmann::json& into, const network_request& network, const char* policy_key,
                 const char* domains_key) {
    into[policy_key] = sandbox::to_string(network.policy);
    if (network.policy == network_policy::proxy) into[domains_key] = network.domains;
}

network_request network_from_json(const nlohmann::json& from, const char* policy_key,
                                  const char* domains_key) {
    network_request out;
    if (const auto found = from.find(policy_key); found != from.end() && found->is_string()) {
        out.policy =
            sandbox::parse_network_policy(found->get<std::string>()).value_or(network_policy::deny);
    }
    if (out.policy != network_policy::proxy) return out;
    if (const auto found = from.find(domains_key); found != from.end() && found->is_array()) {
        for (const auto& each : *found) {
            if (each.is_string() && !holds(out.domains, each.get<std::string>())) {
                out.domains.push_back(each.get<std::string>());
            }
        }
    }
    return out;
}

std::optional<std::string> invalid_network_fields(const nlohmann::json& from,
                                                  const char* policy_key, const char* domains_key) {
    if (const auto found = from.find(policy_key); found != from.end()) {
        if (!found->is_string() || !sandbox::parse_network_policy(found->get<std::string>())) {
            return "\"" + std::string(policy_key) + "\" is not a network policy";
        }
    }
    const auto found = from.find(domains_key);
    if (found == from.end()) return std::nullopt;
    const std::string wrong = "\"" + std::string(domains_key) + "\" is not a list of domains";
    if (!found->is_array()) return wrong;
    for (const auto& each : *found) {
        if (!each.is_string()) return wrong;
        // Only the canonical text: a grant compares domains as strings.
        const auto parsed = sandbox::parse_domain_pattern(each.get<std::string>());
        const auto* pattern = std::get_if<sandbox::domain_pattern>(&parsed);
        if (pattern == nullptr || sandbox::to_string(*pattern) != each.get<std::string>()) {
            return wrong;
        }
    }
    return std::nullopt;
}

}  // namespace cordon::policy
