// The fixed record cordon-landlock writes to its --status-fd when it fails before exec'ing the
// command (STYLE.md rule 2). A successful exec closes the CLOEXEC fd, so the reader sees EOF and
// zero bytes. The record is smaller than PIPE_BUF, so one write(2) delivers it whole.
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
    open_rule_path = 4,  // a --ro/--rw path could not be opened
    status_fd = 5,       // the --status-fd itself was unusable
    exec = 6,            // execvp of the command failed
    out_of_memory = 7,
    capabilities = 8,  // dropping the capability sets
    seccomp = 9,       // installing the read-only metadata filter
};

inline constexpr std::uint32_t launcher_status_magic = 0x434c5331;  // "CLS1"
inline constexpr int launcher_failure_exit = 125;

struct launcher_status_record {
    std::uint32_t magic;  // launcher_status_magic
    std::uint32_t stage;  // launcher_stage
    std::int32_t error;   // errno, 0 when not applicable
    char message[500];    // the exact stderr line, NUL-terminated, without the newline
};

static_assert(sizeof(launcher_status_record) == 512);

}  // namespace cordon::sandbox
