// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The question a person answers before a command runs under a wider mode, laid out once for
// every channel that asks: the terminal (terminal_prompt.cpp writes terminal_question()) and MCP
// elicitation (mcp/elicitation.cpp sends question_fields() as its message).
//
// What it defends against is a question that reads differently from what would run:
//   - every byte of every field a person reads goes through shown_compactly() (display.hpp): the
//     tool, the agent's reason, the modes, the network, the policy line, the working directory,
//     the environment, the input and the command. A workspace directory named with cursor-up,
//     erase-line and carriage-return bytes cannot redraw the lines above it; a byte that is not
//     UTF-8 is shown as \xNN;
//   - the command comes last, directly before the choices and `Allow?`, so that no other field,
//     however long, can push it off the screen (a 9,000-character reason pushed it 121 rows up
//     on 80x24); a command longer than display_bound has its start repeated after it;
//   - the agent's reason is labelled as the agent's words and bounded (justification_bound): it
//     can neither claim what the command is at length nor fill the screen.
#pragma once

#include <cstddef>
#include <string>

#include "cordon/approval.hpp"

namespace cordon::policy {

// How much of the agent's justification a question shows, in bytes as shown_compactly() writes
// it: about four rows of an 80-column terminal. The rest is counted, not shown.
inline constexpr std::size_t justification_bound = 300;

// How much of a command longer than display_bound is shown again after it, in bytes as
// shown_compactly() writes it.
inline constexpr std::size_t command_start_bound = 120;

// The question's fields, one line each, each line ending in "\n":
//
//     <tool>: the command asks to run under a wider sandbox mode   (or "... with a wider network")
//       reason:   (the agent's words) <at most justification_bound bytes> … (N bytes in all)
//       mode:     <standing> → <requested>                          (or the one mode)
//       network:  <what changes in the network>                     (when something does)
//       policy:   <what else the wider mode changes>                (when the request says)
//       workdir:  <the working directory>
//       env:      NAME=value                                        (one line for each)
//       stdin: <what the command is fed>                            (when it is fed anything)
//       command:  <the command>
//       (the command is N bytes long; it begins: <its start> …)    (when longer than display_bound)
//
// Every field escaped by shown_compactly(); the input, which describe_input() has escaped
// already, is shown as it is when it holds nothing left to escape but backslashes (escaping it
// again would show its \n as \\n), and escaped again otherwise.
[[nodiscard]] std::string question_fields(const approval_request& request);

// Exactly what the terminal prompt writes to the terminal: terminal_reset, an empty line,
// question_fields(), the choices and `Allow? [y/N/s] ` (or `Allow? [y/N] `). `with_session`: a
// session log could hold a grant; `offer_session`: `s` is offered, which it never is for a
// command not shown_whole(), whatever this says (terminal_prompt.hpp); `s` allows exactly that
// command, in that working directory (command_prefix.hpp). Every line is cut into rows of at most
// `columns` cells (the terminal's width), each row after a line's first begun with "  \u2026 ": the
// terminal never wraps a row itself, so no agent text can begin a row that reads as cordon's own
// (a reason wrapped into "  command:  echo harmless").
[[nodiscard]] std::string terminal_question(const approval_request& request, bool with_session,
                                            bool offer_session, std::size_t columns = 80);

}  // namespace cordon::policy
