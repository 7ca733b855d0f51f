// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The one exception users catch by design: a confined mode was asked for and no backend can
// enforce it, or the backend's runner failed before the command started. Either way the command
// did not run. Code and message are a compatibility contract (docs/contract.md); what follows the
// contract's text says why: the runner's own line, and why each backend was unusable.
//
//     const cordon::run_record record = cordon::run(request);
//     if (record.outcome.kind == cordon::outcome_kind::runner_failed)
//         throw cordon::sandbox_unavailable(record);   // code() == "SANDBOX_UNAVAILABLE"
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/export.hpp"
#include "cordon/mode.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::sandbox {

inline constexpr std::string_view sandbox_unavailable_code = "SANDBOX_UNAVAILABLE";
inline constexpr std::string_view sandbox_unavailable_name = "SandboxUnavailableError";

// Why one backend of the ladder could not be used.
struct unusable_backend {
    std::string backend;  // "bwrap", "landlock", "seatbelt"
    std::string reason;   // one line
};

// A backend was usable, but not for this policy: a part of it (a protected name, a network rule)
// that the backend cannot enforce, and the caller did not accept the gap (accept_partial).
struct unenforced_policy {
    std::string backend;  // the usable backend: "landlock", ...
    std::string parts;    // what of the policy it cannot enforce, "; "-separated
};

// The exact message, exposed for callers that report the error without throwing it: the
// contract's sentence (docs/contract.md), then " Runner failure: <detail>", then " Unusable
// backends: bwrap: <reason>; landlock: <reason>." for whichever are known. With `gap`, the first
// sentence says instead which backend was usable and what of the policy it cannot enforce.
[[nodiscard]] std::string sandbox_unavailable_message(
    sandbox_mode mode, const std::optional<std::string>& detail,
    const std::vector<unusable_backend>& backends = {},
    const std::optional<unenforced_policy>& gap = std::nullopt);

class sandbox_unavailable_error : public std::runtime_error {
public:
    // `mode` must be a confined mode; `detail` is the runner's own line when the runner failed;
    // `backends` says why each backend considered was unusable (empty when one was selected);
    // `gap`, what of the policy the usable backend cannot enforce.
    explicit sandbox_unavailable_error(sandbox_mode mode,
                                       std::optional<std::string> detail = std::nullopt,
                                       std::vector<unusable_backend> backends = {},
                                       std::optional<unenforced_policy> gap = std::nullopt);

    [[nodiscard]] std::string_view code() const noexcept { return sandbox_unavailable_code; }
    [[nodiscard]] std::string_view name() const noexcept { return sandbox_unavailable_name; }
    [[nodiscard]] sandbox_mode mode() const noexcept { return mode_; }
    [[nodiscard]] const std::optional<std::string>& detail() const noexcept { return detail_; }
    [[nodiscard]] const std::vector<unusable_backend>& backends() const noexcept {
        return backends_;
    }
    // What of the policy the usable backend cannot enforce, when that is why nothing ran.
    [[nodiscard]] const std::optional<unenforced_policy>& unenforced() const noexcept {
        return gap_;
    }
    // The backend whose runner failed, when one was selected and its runner failed at run time.
    [[nodiscard]] const std::optional<std::string>& failed_backend() const noexcept {
        return failed_backend_;
    }
    sandbox_unavailable_error& with_failed_backend(std::string backend) {
        failed_backend_ = std::move(backend);
        return *this;
    }

private:
    sandbox_mode mode_;
    std::optional<std::string> detail_;
    std::vector<unusable_backend> backends_;
    std::optional<unenforced_policy> gap_;
    std::optional<std::string> failed_backend_;
};

// confine() found the request itself at fault although refusal() had passed it a moment before:
// the workspace changed in between (a symlink now stands on its path, it was moved, it can no
// longer be opened), as a concurrent rename can make it. Nothing ran. It is a
// sandbox_unavailable_error so that a caller who knows only that one still fails closed; the
// executor reports it as the request's fault (REQUEST_REFUSED, exit 2), never as an unusable
// sandbox, and no cached verdict is dropped for it.
class request_refused_error : public sandbox_unavailable_error {
public:
    request_refused_error(sandbox_mode mode, std::string reason)
        : sandbox_unavailable_error(mode, reason), reason_(std::move(reason)) {}
    // Why, in one line (what refusal() would have said).
    [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

private:
    std::string reason_;
};

}  // namespace cordon::sandbox

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using sandbox::request_refused_error;
using sandbox::sandbox_unavailable_error;
using sandbox::unusable_backend;
}  // namespace cordon
CORDON_PUBLIC_END
