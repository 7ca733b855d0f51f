#include "sandbox/errors.hpp"

namespace cordon::sandbox {

std::string sandbox_unavailable_message(sandbox_mode mode,
                                        const std::optional<std::string>& detail) {
    std::string message = "sandbox mode \"";
    message += to_string(mode);
    message +=
        "\" is requested but no sandbox backend is usable on this host; refusing to run the "
        "command unconfined. Install bubblewrap or run a Landlock-enforcing kernel (Linux), "
        "ensure sandbox-exec is usable (macOS) \u2014 Windows has no confinement backend yet "
        "\u2014 or switch the consumer to danger-full-access.";
    if (detail) {
        message += " Runner failure: ";
        message += *detail;
    }
    return message;
}

sandbox_unavailable_error::sandbox_unavailable_error(sandbox_mode mode,
                                                     std::optional<std::string> detail)
    : std::runtime_error(sandbox_unavailable_message(mode, detail)),
      mode_(mode),
      detail_(std::move(detail)) {}

}  // namespace cordon::sandbox
