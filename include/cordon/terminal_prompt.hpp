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
// What the person sees (policy/question.hpp lays it out, the same for MCP elicitation): after
// terminal_reset, who asks and what for, then the agent's reason (labelled as the agent's words,
// at most 300 bytes of it), the standing and the requested mode, the network, the policy line,
// the working directory, the environment and the input; last the command, directly above the
// choices and `Allow? [y/N/s] `, so that no field, however long, pushes it off the screen (a
// command longer than policy::display_bound has its start repeated after it). Every byte of
// every field is shown through policy::shown_compactly(), so that neither a command nor a path,
// a reason or an environment entry can make the question read differently from what would run.
// Keystrokes typed before the question are discarded (tcflush).
// The answer is one line: y or yes allows once; s or session allows exactly that command, in that
// working directory, with that environment, for the session (docs/approval.md, "What a session
// grant covers"; only offered with a session log, and only for a command shown whole: nothing
// escaped, nothing counted, within policy::display_bound); anything else, an empty line included,
// is a rejection; the end of input is a cancellation.
#pragma once

#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "cordon/approval.hpp"
#include "cordon/export.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::policy {

// Written before every question: what earlier output may have left switched on or redefined must
// not hide or disguise it. A command run under the standing mode can print OSC 10/11 to make the
// default foreground the default background, and then a fake question: SGR 0 alone would restore
// those redefined colours. Each sequence below resets one thing and none clears the screen (RIS,
// terminfo's rs1, would: what the command printed stays readable above the question):
inline constexpr std::string_view terminal_reset =
    "\x1b]104\x07"      // OSC 104: every palette colour (OSC 4) back to its default (terminfo oc)
    "\x1b]110\x07"      // OSC 110: the default foreground (OSC 10) back to the configured one
    "\x1b]111\x07"      // OSC 111: the default background (OSC 11)
    "\x1b]112\x07"      // OSC 112: the cursor colour (OSC 12; terminfo Cr)
    "\x1b]117\x07"      // OSC 117: the highlight (selection) background (OSC 17)
    "\x1b]119\x07"      // OSC 119: the highlight foreground (OSC 19)
    "\x1b[0m"           // SGR 0: no colour, no concealed (SGR 8) or reversed text (terminfo sgr0)
    "\x1b[39;49m"       // the default colour pair (terminfo op)
    "\x1b(B\x1b)B\x0f"  // ASCII in G0 and G1, G0 shifted in (terminfo rmacs)
    "\x1b[?25h"         // cursor shown (terminfo cnorm)
    "\0337\x1b[r\0338"  // no scroll region (DECSTBM moves the cursor home: saved around it)
    "\x1b[?69l"         // no left and right margins (DECLRMM off: DECSLRM ones squeeze rows)
    "\x1b[4l\x1b[?7h";  // replace mode, wrapping on (terminfo rmir, smam)

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
