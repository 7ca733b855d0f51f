// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/child_confinement.hpp"

#include <fcntl.h>

#include <cstring>
#include <vector>

#include "sandbox/backends.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/walls.hpp"

namespace cordon::sandbox {

std::string child_confinement_failure(launcher_stage stage, int error) {
    // The in-child path always has a ruleset, so a seccomp-stage failure is the filter's.
    walls::step step = walls::step::landlock;
    if (stage == launcher_stage::capabilities) step = walls::step::capabilities;
    if (stage == launcher_stage::seccomp) step = walls::step::seccomp;
    if (stage == launcher_stage::quotas) step = walls::step::quotas;
    if (stage == launcher_stage::network) step = walls::step::network;
    if (stage == launcher_stage::identity) step = walls::step::identity;
    if (stage == launcher_stage::idmap) {
        return std::string("cordon: cannot give the run its idmapped trees: ") +
               std::strerror(error);
    }
    return std::string("cordon-landlock: ") + walls::reason_of(step) + ": " + std::strerror(error);
}

std::variant<std::shared_ptr<const child_confinement>, std::string> build_child_confinement(
    const landlock_in_child& plan) {
    auto out = std::make_shared<child_confinement>();
    landlock::failure failure{};
    const auto failed = [&failure]() -> std::string {
        if (failure.stage == launcher_stage::open_rule_path) {
            return std::string("cordon-landlock: cannot open rule path: ") +
                   (failure.path != nullptr ? failure.path : "(descriptor)") + ": " +
                   std::strerror(failure.error);
        }
        return child_confinement_failure(launcher_stage::ruleset, failure.error);
    };
    // The kernel's own ABI, asked here as the launcher asks on every run: an ABI handed in by
    // the caller (a library host's own probe runner, say) can neither drop a wall nor claim one.
    const int kernel_abi = landlock::query_abi();
    if (plan.abi <= 0 || kernel_abi <= 0) {
        return std::string("cordon-landlock: Landlock is unavailable");
    }
    const int abi = kernel_abi;
    out->ruleset.reset(landlock::create_ruleset(abi, &failure));
    if (!out->ruleset) return failed();
    std::vector<const char*> denied;
    for (const std::string& path : plan.deny_read)
        denied.push_back(path.c_str());
    if (landlock::add_root_read_rules(out->ruleset.get(), abi, denied.data(), denied.size(),
                                      &failure) != 0) {
        return failed();
    }
    for (const std::string& path : plan.allow_read) {
        if (landlock::add_path_rule(out->ruleset.get(), abi, path.c_str(), landlock::access::read,
                                    true, &failure) != 0) {
            return failed();
        }
    }
    // The launcher adds the read grants, then the write grants; the kernel unions them.
    const tmp_policy tmp = plan.host_tmp ? tmp_policy::host : tmp_policy::private_tmp;
    for (const bool write : {false, true}) {
        for (const landlock_grant& grant : landlock_grants(plan.mode, false, tmp, plan.terminal)) {
            if (grant.write != write) continue;
            const landlock::access rights =
                write ? landlock::access::write : landlock::access::read;
            int result = 0;
            if (grant.path != nullptr) {
                result = landlock::add_path_rule(out->ruleset.get(), abi, grant.path, rights,
                                                 grant.optional, &failure);
            } else if (plan.workspace && *plan.workspace) {
                result = landlock::add_fd_rule(out->ruleset.get(), abi, plan.workspace->get(),
                                               rights, &failure);
            } else {
                return std::string("cordon-landlock: no workspace descriptor to grant");
            }
            if (result != 0) return failed();
        }
    }
    for (const auto& writable : plan.writable) {
        if (!writable || !*writable) return std::string("cordon-landlock: no descriptor to grant");
        if (landlock::add_fd_rule(out->ruleset.get(), abi, writable->get(), landlock::access::write,
                                  &failure) != 0) {
            return failed();
        }
    }
    if (plan.network.deny_sockets && abi >= landlock::network_abi) {
        out->network_ruleset.reset(
            landlock::create_network_ruleset(abi, plan.network.local_binding, &failure));
        if (!out->network_ruleset) return failed();
    }
    out->unshare_net = plan.network.unshare_net;
    extras::filter_options filter;
    filter.deny_metadata = plan.mode == sandbox_mode::read_only;
    filter.deny_unix_sockets = plan.network.deny_unix_sockets;
    filter.deny_other_sockets = plan.network.deny_sockets;
    filter.allow_tcp_streams = plan.network.deny_sockets && plan.network.local_binding;
    filter.namespaced_sockets_only = plan.network.namespaced_sockets_only;
    if (const int error = extras::build_filter(filter, out->own_ipc); error != 0) {
        return child_confinement_failure(launcher_stage::seccomp, error);
    }
    filter.deny_sysv_ipc = true;
    if (const int error = extras::build_filter(filter, out->shared_ipc); error != 0) {
        return child_confinement_failure(launcher_stage::seccomp, error);
    }
    out->partial_notice = abi < landlock::full_filesystem_abi;
    if (plan.network.witness) {
        if (const int error = extras::build_witness_filter(out->witness_filter); error != 0) {
            return child_confinement_failure(launcher_stage::seccomp, error);
        }
        out->witness = true;
    }
    return std::shared_ptr<const child_confinement>(std::move(out));
}

int lift_child_confinement(const child_confinement& confinement, int floor,
                           child_confinement_fds* out) noexcept {
    // A confinement without a ruleset keeps none, and fails where the walls use it.
    if (confinement.ruleset) {
        out->ruleset = ::fcntl(confinement.ruleset.get(), F_DUPFD_CLOEXEC, floor);
        if (out->ruleset < 0) return errno;
    }
    if (confinement.network_ruleset) {
        out->network_ruleset = ::fcntl(confinement.network_ruleset.get(), F_DUPFD_CLOEXEC, floor);
        if (out->network_ruleset < 0) return errno;
    }
    return 0;
}

int apply_child_confinement(const child_confinement& confinement, const child_confinement_fds& fds,
                            launcher_stage* failed, long become_uid, long become_gid) noexcept {
    walls::plan plan;
    plan.become_uid = become_uid;
    plan.become_gid = become_gid;
    plan.ruleset = fds.ruleset;
    plan.own_ipc = &confinement.own_ipc;
    plan.shared_ipc = &confinement.shared_ipc;
    plan.partial_notice = confinement.partial_notice;
    plan.unshare_net = confinement.unshare_net;
    plan.network_ruleset = fds.network_ruleset;
    if (confinement.witness) {
        plan.witness = &confinement.witness_filter;
        plan.witness_channel = network_witness_fd;
    }
    walls::step step = walls::step::landlock;
    const int error = walls::apply(plan, &step);
    if (error != 0) *failed = walls::stage_of(step);
    return error;
}

}  // namespace cordon::sandbox
