// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/network_plan.hpp"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "base/enum_text.hpp"
#include "sandbox/backends.hpp"
#include "sandbox/landlock_ruleset.hpp"

namespace cordon::sandbox {

namespace {

constexpr const char* listed_sockets_gap =
    "allow_unix_sockets lets the command reach every host pathname unix socket, not only the "
    "listed ones: the seccomp filter refuses socket(AF_UNIX) as a whole or not at all";

}  // namespace

constexpr auto network_enforcement_texts = base::enum_texts<network_enforcement>({
    {network_enforcement::full, "full"},
    {network_enforcement::partial, "partial"},
    {network_enforcement::none, "none"},
});

std::string_view to_string(network_enforcement value) noexcept {
    return network_enforcement_texts.text(value);
}

namespace {

// Whether the kernel can let a call the witness was handed go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE,
// Linux 5.5): before it every connect(2) would wait for an answer that cannot be given. Asked of
// the release once; a kernel whose number cannot be read has no witness.
bool witness_supported() {
    static const bool supported = [] {
        utsname name{};
        if (::uname(&name) != 0) return false;
        unsigned major = 0;
        unsigned minor = 0;
        if (std::sscanf(name.release, "%u.%u", &major, &minor) != 2) return false;
        return major > 5 || (major == 5 && minor >= 5);
    }();
    return supported;
}

std::atomic<std::uint64_t> plans{0};

}  // namespace

std::uint64_t network_plans() noexcept {
    return plans.load(std::memory_order_relaxed);
}

network_walls plan_network(backend_kind kind, const network_rules& rules, int landlock_abi,
                           bool can_unshare_net) {
    plans.fetch_add(1, std::memory_order_relaxed);
    network_walls out;
    out.facts.policy = rules.policy;
    if (rules.policy == network_policy::allow) return out;  // the host's network: none
    const bool proxy = rules.policy == network_policy::proxy;
    // Under deny too: no retry hint offers the host's network over the operator's denials.
    out.facts.denied_domains = rules.denied_domains;
    if (proxy) {
        out.facts.allowed_domains = rules.allowed_domains;
        if (kind == backend_kind::seatbelt) {
            out.unavailable =
                "network proxy needs a network namespace: cordon's Seatbelt "
                "profile has no network rule";
        } else if (kind == backend_kind::landlock && !can_unshare_net) {
            out.unavailable =
                "network proxy needs a network namespace, and cordon cannot make one without "
                "CAP_SYS_ADMIN (Landlock's port rules cannot tell one host from another)";
        }
        out.how.proxy = out.unavailable == std::nullopt;
    }
    out.facts.level = network_enforcement::full;
    auto& missing = out.facts.missing;
    const bool listed = !rules.allow_unix_sockets.empty();
    out.how.deny_unix_sockets = !listed;
    switch (kind) {
        case backend_kind::bwrap:
            out.how.unshare_net = true;  // bwrap's own --unshare-net, not the launcher's
            out.how.namespaced_sockets_only = true;
            if (listed) missing.emplace_back(listed_sockets_gap);
            break;
        case backend_kind::landlock:
            if (can_unshare_net) {
                out.how.unshare_net = true;
                out.how.namespaced_sockets_only = true;
                if (listed) missing.emplace_back(listed_sockets_gap);
                break;
            }
            out.how.deny_sockets = true;
            out.how.local_binding = rules.allow_local_binding;
            if (landlock_abi < landlock::network_abi) {
                missing.push_back("Landlock ABI " + std::to_string(landlock_abi) +
                                  " has no network rights (ABI 4, Linux 6.7): only the seccomp "
                                  "filter refuses sockets, with no second wall");
            }
            if (listed) {
                missing.emplace_back(listed_sockets_gap);
                if (landlock_abi < landlock::scopes_abi) {
                    missing.push_back("Landlock ABI " + std::to_string(landlock_abi) +
                                      " has no scopes (ABI 6, Linux 6.12): the host's abstract "
                                      "unix sockets are reachable");
                }
            }
            if (rules.allow_local_binding) {
                missing.emplace_back(
                    "no network namespace (cordon lacks CAP_SYS_ADMIN): a listener binds the "
                    "host's interfaces, where local processes and other hosts reach it");
            }
            break;
        case backend_kind::seatbelt:
            out.how.deny_unix_sockets = false;
            missing.emplace_back("cordon's Seatbelt profile has no network rule");
            break;
    }
    if (!missing.empty()) out.facts.level = network_enforcement::partial;
    // Seatbelt has no launcher to raise the witness's filter. Where TCP connects go through
    // (no namespace, Landlock without network rights, binding allowed) nothing refuses them, and
    // the witness would record as refused what was not.
    const bool connects_pass =
        out.how.deny_sockets && out.how.local_binding && landlock_abi < landlock::network_abi;
    out.how.witness = kind != backend_kind::seatbelt && !connects_pass && witness_supported();
    return out;
}

std::vector<std::string> launcher_network_arguments(const network_confinement& how) {
    std::vector<std::string> out;
    if (how.unshare_net) out.emplace_back("--unshare-net");
    if (how.deny_unix_sockets) out.emplace_back("--deny-unix-sockets");
    if (how.deny_sockets) out.emplace_back("--deny-sockets");
    if (how.deny_sockets && how.local_binding) out.emplace_back("--local-binding");
    if (how.namespaced_sockets_only) out.emplace_back("--namespaced-sockets-only");
    if (how.witness) {
        out.insert(out.end(), {"--witness-fd", std::to_string(network_witness_fd)});
    }
    if (how.proxy) {
        out.insert(out.end(), {"--proxy-fd", std::to_string(proxy_forwarder_fd), "--proxy-port",
                               std::to_string(proxy_port)});
    }
    return out;
}

std::vector<std::string> proxy_environment() {
    const std::string http = "http://127.0.0.1:" + std::to_string(proxy_port);
    const std::string socks = "socks5h://127.0.0.1:" + std::to_string(proxy_port);
    constexpr const char* no_proxy = "localhost,127.0.0.1,::1";
    return {"ALL_PROXY=" + socks,  "HTTPS_PROXY=" + http,
            "HTTP_PROXY=" + http,  std::string("NO_PROXY=") + no_proxy,
            "all_proxy=" + socks,  "http_proxy=" + http,
            "https_proxy=" + http, std::string("no_proxy=") + no_proxy};
}

bool is_proxy_variable(std::string_view entry) noexcept {
    const std::string_view name = entry.substr(0, entry.find('='));
    for (const std::string_view known : {"ALL_PROXY", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY",
                                         "all_proxy", "https_proxy", "http_proxy", "no_proxy"}) {
        if (name == known) return true;
    }
    return false;
}

bool can_make_network_namespace() noexcept {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (::syscall(SYS_capget, &header, data) != 0) return false;
    return (data[CAP_SYS_ADMIN / 32].effective & (1U << (CAP_SYS_ADMIN % 32))) != 0;
}

}  // namespace cordon::sandbox
