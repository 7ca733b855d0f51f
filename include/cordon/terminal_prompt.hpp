// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The terminal responder: asks the person at the controlling terminal whether a command may run
// under a wider mode, as `cordon run --escalate` does.
//
//     cordon::approval_service approvals;
//     approvals.add_responder(std::make_shared<cordon::terminal_prompt>(false));
//     const cordon::approval_decision decision = approvals.request(question);
//     if (cordon::is_allowed(decision.outcome)) { /* run it under question.requested_mode */ }
//
// The question goes to /dev/tty and the answer comes from /dev/tty, never from cordon's stdin:
// stdin belongs to the command (and to whoever feeds it), and an answer read from there would
// let the input of a pipeline approve its own escalation. Without a controlling terminal, or
// when cordon is not in the terminal's foreground process group (a background job would be
// stopped by SIGTTIN/SIGTTOU), the responder does not answer and the next one in the chain is
// asked; at the end of the chain that is `unavailable`.
//
// What the person sees: the command, the working directory, the standing mode and the requested
// one, the agent's justification, and `Allow? [y/N/s] `, with what `s` would allow. Each is
// shown through policy::shown_compactly(), so that a command cannot make the question read
// differently from what would run. Keystrokes typed before the question are discarded (tcflush).
// The answer is one line: y or yes allows once; s or session allows the command's prefix for the
// session (only offered with a session log, and only for a command shown whole: nothing escaped,
// nothing counted, within policy::display_bound); anything else, an empty line included, is a
// rejection; the end of input is a cancellation.
#pragma once

#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "cordon/approval.hpp"
#include "cordon/export.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::policy {

// Written before every question: what earlier output may have left switched on must not hide or
// disguise it. Colours and concealed text (SGR), a line-drawing character set (G0/G1, shift-out),
// a hidden cursor, a scroll region that keeps the question's first lines out of sight (reset with
// the cursor saved around it: DECSTBM moves the cursor home), insert mode and wrapping off.
inline constexpr std::string_view terminal_reset =
    "\x1b[0m"           // SGR: no colour, no concealed text
    "\x1b(B\x1b)B\x0f"  // ASCII in G0 and G1, G0 shifted in
    "\x1b[?25h"         // cursor shown
    "\0337\x1b[r\0338"  // no scroll region, the cursor kept where it was
    "\x1b[4l\x1b[?7h";  // replace mode, wrapping on

class terminal_prompt final : public approval_responder {
public:
    // `offer_session`: whether `s` (allowed-for-session) is offered; without a session log a
    // session grant would end with this process, so it is not.
    explicit terminal_prompt(bool offer_session) : offer_session_(offer_session) {}

    [[nodiscard]] std::string name() const override { return "terminal"; }
    std::optional<approval_outcome> answer(const approval_request& request,
                                           std::stop_token stop) override;

private:
    bool offer_session_;
};

// Whether a controlling terminal can be opened and this process is in its foreground process group:
// whether the terminal responder could ask.
[[nodiscard]] bool terminal_can_ask();

}  // namespace cordon::policy

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using policy::terminal_can_ask;
using policy::terminal_prompt;
}  // namespace cordon
CORDON_PUBLIC_END
