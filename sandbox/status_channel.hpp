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
        silent,     // no record: the runner never reached the point of exec (proof of nothing)
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
};

// Reads a whole channel. A failure record wins over a `started` record only when it is the exec
// failure that follows it (the only sequence a launcher writes); a failure record without a
// `started` record before it is a setup failure.
[[nodiscard]] status_report decode_status(std::string_view bytes);

}  // namespace cordon::sandbox
