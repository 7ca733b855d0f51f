// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/walls.hpp"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

#include "sandbox/identity_child.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/quotas.hpp"

namespace cordon::sandbox::walls {

launcher_stage stage_of(step failed) noexcept {
    switch (failed) {
        case step::network:
            return launcher_stage::network;
        case step::quotas:
            return launcher_stage::quotas;
        case step::identity:
            return launcher_stage::identity;
        case step::capabilities:
            return launcher_stage::capabilities;
        case step::landlock:
            return launcher_stage::ruleset;
        case step::no_new_privs:
        case step::seccomp:
            return launcher_stage::seccomp;
    }
    return launcher_stage::ruleset;
}

const char* reason_of(step failed) noexcept {
    switch (failed) {
        case step::network:
            return "cannot make a private network namespace";
        case step::quotas:
            return "cannot bound the kernel quotas";
        case step::identity:
            return "cannot take the run's identity";
        case step::capabilities:
            return "cannot drop capabilities";
        case step::landlock:
            return "landlock ruleset error";
        case step::no_new_privs:
            return "cannot set no_new_privs";
        case step::seccomp:
            return "seccomp filter error";
    }
    return "landlock ruleset error";
}

int apply(const plan& walls, step* failed) noexcept {
    // SysV IPC objects and POSIX message queues live in the IPC namespace. A private one is made
    // while the capability to do so is still held; where that is impossible, the filter refuses
    // them rather than share the host's.
    const bool own_ipc = walls.own_ipc_given || extras::private_ipc_namespace() == 0;
    if (walls.unshare_net) {
        if (const int error = extras::private_network_namespace(); error != 0) {
            *failed = step::network;
            return error;
        }
    }

    // The quotas counted per uid: written while CAP_SYS_RESOURCE in the user namespace is held.
    int quota_error = quotas::lower_rlimits();
    if (quota_error == 0 && walls.user_sysctls >= 0) {
        const char* file = nullptr;
        quota_error = quotas::limit_user_namespace(walls.user_sysctls, &file);
    }
    if (quota_error != 0) {
        *failed = step::quotas;
        return quota_error;
    }

    // The run's own uid (identity.hpp): the bounding set goes first, while CAP_SETPCAP is held,
    // so that nothing the command execs can regain a capability; the switch then clears the
    // rest, and drop_capabilities() below makes sure of it.
    if (walls.become_uid >= 0) {
        if (const int error = extras::drop_bounding_set(); error != 0) {
            *failed = step::capabilities;
            return error;
        }
        if (const int error =
                become(static_cast<uid_t>(walls.become_uid), static_cast<gid_t>(walls.become_gid));
            error != 0) {
            *failed = step::identity;
            return error;
        }
    }

    // Rule paths are open; nothing below needs a capability. Root must not keep any.
    if (const int error = extras::drop_capabilities(); error != 0) {
        *failed = step::capabilities;
        return error;
    }
    if (walls.landlock) {
        if (const int error = landlock::restrict_self(walls.ruleset); error != 0) {
            *failed = step::landlock;
            return error;
        }
    } else if (::prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) != 0) {
        *failed = step::no_new_privs;
        return errno;
    }
    if (walls.network_ruleset >= 0) {
        if (const int error = landlock::restrict_self(walls.network_ruleset); error != 0) {
            *failed = step::landlock;
            return error;
        }
    }
    int channel_type = 0;
    socklen_t type_size = sizeof channel_type;
    if (walls.witness != nullptr && walls.witness_channel >= 0 &&
        ::getsockopt(walls.witness_channel, SOL_SOCKET, SO_TYPE, &channel_type, &type_size) == 0 &&
        channel_type == SOCK_SEQPACKET) {
        // Before the main filter, which need not allow seccomp(2). Where the kernel cannot give
        // a listener the channel just closes, and the run has no witness: the walls stand alone.
        // Without a channel (a probe of the profile) there is no supervisor to serve the
        // filter: none is installed, since every connect(2) would then wait for nobody.
        const int listener = extras::install_witness(*walls.witness);
        if (listener >= 0) {
            const int error = extras::send_fd(walls.witness_channel, listener);
            ::close(listener);
            if (error != 0) {
                *failed = step::seccomp;
                return error;
            }
        } else if (errno != ENOSYS && errno != EINVAL && errno != EBUSY) {
            *failed = step::seccomp;
            return errno;
        }
    }
    // Never left to the command, whether a witness went over it or not.
    if (walls.witness_channel >= 0) ::close(walls.witness_channel);
    if (const int error = extras::install_program(own_ipc ? *walls.own_ipc : *walls.shared_ipc);
        error != 0) {
        *failed = step::seccomp;
        return error;
    }
    if (walls.partial_notice) {
        // Best effort: the notice is for people, and a stderr that refuses it changes no wall.
        const char* data = partial_notice;
        std::size_t size = sizeof partial_notice - 1;
        while (size > 0) {
            const ssize_t n = ::write(STDERR_FILENO, data, size);
            if (n < 0) {
                if (errno == EINTR) continue;
                break;
            }
            data += n;
            size -= static_cast<std::size_t>(n);
        }
    }
    return 0;
}

}  // namespace cordon::sandbox::walls
