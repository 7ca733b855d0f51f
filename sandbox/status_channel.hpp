// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Decoding what the launcher wrote to its status channel (launcher_status.hpp). Both Linux
// backends end in cordon-landlock (under bwrap it runs inside the sandbox after bwrap's setup),
// so this one decoder decides, for every confined run, whether the command started.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sandbox/launcher_status.hpp"

namespace cordon::sandbox {

struct status_report {
    enum class verdict {
        silent,     // no record: the runner never reached the point of exec (proof of nothing);
                    // or only an `ended` record of a launcher child killed before `started`
        started,    // the launcher was about to exec the command
        failed,     // a failure record: the launcher (or, at stage exec, the command's exec) failed
        malformed,  // bytes that are not a sequence of whole records
        probed,     // a probe answer
    };
    verdict outcome = verdict::silent;
    launcher_stage stage = launcher_stage::usage;  // for `failed`
    int error = 0;                                 // errno, for `failed`
    std::string message;                           // the launcher's line, for `failed`
    int abi = 0;                                   // for `probed`
    // For `started`, with --report-ending: how the command, the launcher's child, ended; for
    // `silent`, how the launcher's child ended before it could write `started`.
    struct ending {
        std::optional<int> exit_code;
        std::optional<int> signal;
    };
    std::optional<ending> ended;
};

// Reads a whole channel. The sequences a launcher writes: a failure record (setup failed); a
// probe record; `started`; `started` then a failure at stage exec (the command's exec failed);
// `started` then `ended` (--report-ending); `ended` alone, by a signal (--report-ending: the
// child was SIGKILLed before `started`; decoded as silent, with the ending). Anything else is
// malformed.
[[nodiscard]] status_report decode_status(std::string_view bytes);

}  // namespace cordon::sandbox
