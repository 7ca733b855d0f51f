// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The fixed records cordon-landlock writes to its --status-fd (docs/sandbox.md, "cordon-landlock";
// docs/contract.md, "Classification order"): one `started` record just before it execs the command,
// one `failure` record when it fails, one `probe` record answering --probe, and, with
// --report-ending, one `ended` record saying how the command ended. Silence proves nothing:
// a launcher that died before exec (the OOM killer, a runner that never reached the launcher)
// leaves the channel empty, and an empty channel is never read as "the command ran". Each record is
// smaller than PIPE_BUF, so one write(2) delivers it whole.
//
// Included by the launcher, which depends on libc only: keep this header free of C++ library
// types.
#pragma once

#include <cstdint>

namespace cordon::sandbox {

enum class launcher_stage : std::uint32_t {
    usage = 1,           // bad arguments
    abi = 2,             // Landlock absent (ENOSYS) or disabled (EOPNOTSUPP)
    ruleset = 3,         // landlock_create_ruleset / add_rule / prctl / restrict_self
    open_rule_path = 4,  // a grant path could not be opened
    status_fd = 5,       // the --status-fd itself was unusable
    exec = 6,            // exec of the command failed
    out_of_memory = 7,
    capabilities = 8,  // dropping the capability sets
    seccomp = 9,       // installing the seccomp filter
    environment = 10,  // reading the command's environment from --env-fd
    spawn = 11,        // --report-ending: starting the command as the launcher's child
    quotas = 12,       // lowering the rlimits, writing the user namespace's limits (quotas.hpp)
    network = 13,      // making the private network namespace, bringing its loopback up
    identity = 14,     // switching to the run's uid and gid (sandbox/identity.hpp)
    idmap = 15,        // the run's mount namespace with its trees idmapped (spawner only)
};

enum class launcher_record_kind : std::uint32_t {
    failure = 1,  // the launcher failed at `stage`; the command did not start
    started = 2,  // confinement is in place and the launcher is about to exec the command
    probe = 3,    // the answer to --probe: `abi` holds the kernel's Landlock ABI
    // --report-ending: the command, run as the launcher's child, ended with `exit_code` or was
    // ended by `signal`. Under bwrap the runner's own status cannot tell the two apart (bwrap
    // exits 128+N for a command killed by signal N).
    ended = 4,
};

inline constexpr std::uint32_t launcher_status_magic = 0x33534c43;  // "CLS3"
inline constexpr int launcher_failure_exit = 125;

struct launcher_status_record {
    std::uint32_t magic;     // launcher_status_magic
    std::uint32_t kind;      // launcher_record_kind
    std::uint32_t stage;     // launcher_stage, for failure records
    std::int32_t error;      // errno, 0 when not applicable
    std::int32_t abi;        // probe records: the Landlock ABI (> 0) or -errno
    std::int32_t exit_code;  // ended records: the command's exit status, -1 when a signal
    std::int32_t signal;     // ended records: the signal that ended the command, 0 when it exited
    char message[484];       // failure: the exact stderr line, NUL-terminated, without the newline
};

static_assert(sizeof(launcher_status_record) == 512);

}  // namespace cordon::sandbox
