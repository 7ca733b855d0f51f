// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "policy/question.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

#include "cordon/mode.hpp"
#include "cordon/terminal_prompt.hpp"
#include "policy/command_prefix.hpp"
#include "policy/display.hpp"

namespace cordon::policy {

namespace {

// At most `bound` bytes of `text`, ending before a UTF-8 continuation byte.
std::size_t cut_at(std::string_view text, std::size_t bound) {
    std::size_t cut = std::min(text.size(), bound);
    while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0u) == 0x80u)
        --cut;
    return cut;
}

// The start of `text` that fits in `bound` bytes once escaped, escaped, and where it was cut. The
// cut is made in the raw text, so that no escape is shown cut in half.
std::pair<std::string, std::size_t> start_shown(std::string_view text, std::size_t bound) {
    std::size_t cut = cut_at(text, bound);
    std::string shown = shown_compactly(text.substr(0, cut));
    while (shown.size() > bound && cut > 0) {
        // Escapes write more than the bytes they stand for: take fewer bytes, in proportion.
        cut = cut_at(text, cut * bound / shown.size());
        shown = shown_compactly(text.substr(0, cut));
    }
    return {std::move(shown), cut};
}

// The agent's words, as many as fit in justification_bound bytes once escaped, and how many
// there were in all.
std::string reason_shown(std::string_view justification) {
    if (justification.empty()) return "(none given)";
    auto [shown, cut] = start_shown(justification, justification_bound);
    std::string out = "(the agent's words) " + shown;
    if (cut < justification.size()) {
        out += " \u2026 (" + std::to_string(justification.size()) + " bytes in all)";
    }
    return out;
}

// A field cordon has escaped already (describe_input()): shown as it is when escaping it again
// would only double its backslashes, escaped again when anything else in it needs escaping (a
// library user's raw text).
std::string shown_described(std::string_view text) {
    const std::string again = shown_compactly(text);
    std::string undoubled;
    undoubled.reserve(again.size());
    for (std::size_t i = 0; i < again.size(); ++i) {
        undoubled += again[i];
        if (again[i] == '\\' && i + 1 < again.size() && again[i + 1] == '\\') ++i;
    }
    return undoubled == text ? std::string(text) : again;
}

// `text`'s lines cut into rows of at most `columns` cells, every row after a line's first begun
// with "  \u2026 ". No row is wider than the screen, so the terminal never wraps one itself, and
// every row begins with what cordon wrote: agent text wrapped by the terminal could start a row
// with "  command:  echo harmless" of its own. Widths are counted high: an ASCII character is one
// cell, any other character two (none is drawn wider), so a row is never too long, at worst short;
// the last column is left empty (no pending wrap). Each row is made single-width first (DECSWL:
// earlier output may have made it double-width, DECDWL or DECDHL, which halves what fits) and
// erased to its end after (EL: earlier output drawn to the right of it, `   --dry-run`, would read
// as part of it). A row ends in a carriage return of its own: an earlier `stty -onlcr` (or
// -opost) would otherwise start the next row where this one ended.
std::string wrapped(std::string_view text, std::size_t columns) {
    constexpr std::string_view row_start = "\x1b#5";
    constexpr std::string_view row_end = "\x1b[K";
    constexpr std::string_view continued = "  \u2026 ";
    constexpr std::size_t continued_cells = 4;
    columns = std::max<std::size_t>(columns, continued_cells + 8);
    std::string out(row_start);
    out.reserve(text.size() + text.size() / 8);
    std::size_t used = 0;
    for (std::size_t i = 0; i < text.size();) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if (byte == '\n') {
            out.append(row_end).append("\r\n").append(row_start);
            used = 0;
            ++i;
            continue;
        }
        std::size_t length = 1;
        while (i + length < text.size() &&
               (static_cast<unsigned char>(text[i + length]) & 0xC0u) == 0x80u) {
            ++length;
        }
        const std::size_t cells = byte < 0x80 ? 1 : 2;
        if (used + cells >= columns) {
            out.append(row_end).append("\r\n").append(row_start).append(continued);
            used = continued_cells;
        }
        out.append(text.substr(i, length));
        used += cells;
        i += length;
    }
    return out.append(row_end);
}

}  // namespace

std::string question_fields(const approval_request& request) {
    const bool same_mode = request.effective_mode == request.requested_mode;
    const std::string from = shown_compactly(sandbox::to_string(request.effective_mode));
    const std::string to = shown_compactly(sandbox::to_string(request.requested_mode));
    const std::string command = shown_compactly(request.command);
    // Who asks: "cordon run", "bash" (MCP), or the program that embeds the library.
    std::string text = shown_compactly(request.tool);
    text += same_mode ? ": the command asks to run with a wider network\n"
                      : ": the command asks to run under a wider sandbox mode\n";
    text += "  reason:   " + reason_shown(request.justification) + "\n";
    text += "  mode:     " + (same_mode ? from : from + " \u2192 " + to) + "\n";
    if (!request.network.empty()) text += "  network:  " + shown_compactly(request.network) + "\n";
    if (!request.policy.empty()) text += "  policy:   " + shown_compactly(request.policy) + "\n";
    text += "  workdir:  " + shown_compactly(request.workdir.string()) + "\n";
    for (const auto& each : request.env)
        text += "  env:      " + shown_compactly(each) + "\n";
    // What it would inherit that changes what the shell runs: an exported function `touch` runs
    // instead of touch.
    for (const auto& each : request.inherited)
        text += "  env:      " + shown_compactly(each) + "  (inherited)\n";
    // Where the command's programs may be found that a run could have put them.
    for (const auto& each : request.writable_path)
        text += "  path:     " + shown_compactly(each) + "  (on PATH, and a run can write it)\n";
    if (!request.input.empty()) {
        // Labelled whatever a library's caller put there: no input passes for the command.
        const std::string input = shown_described(request.input);
        text += "  " + std::string(input.starts_with("stdin: ") ? "" : "stdin: ") + input + "\n";
    }
    // Last: what runs, next to the choices whatever the length of the fields above.
    text += "  command:  " + command + "\n";
    if (command.size() > display_bound) {
        text +=
            "  (the command is " + std::to_string(request.command.size()) +
            " bytes long; it begins: " + start_shown(request.command, command_start_bound).first +
            " \u2026)\n";
    }
    return text;
}

std::string terminal_question(const approval_request& request, bool with_session,
                              bool offer_session, std::size_t columns) {
    // A standing grant covers later runs nobody looks at: whatever the caller says, `s` is never
    // offered for a command not shown whole, exactly as it is (display.hpp).
    const std::string refused = session_grant_refusal(request);
    offer_session = offer_session && refused.empty();
    std::string text = "\n" + question_fields(request);
    text += "  y = allow this run once, N = refuse (the default)";
    if (offer_session) {
        // What `s` allows: exactly the command above, where it was asked (command_prefix.hpp).
        // Said, not shown again: the command's text stays on the one row above the choices.
        text += ",\n  s = allow exactly this command" +
                std::string(request.workdir.empty() ? "" : ", in this working directory,") +
                " under " + shown_compactly(sandbox::to_string(request.requested_mode)) +
                (request.network.empty()
                     ? std::string()
                     : " with network " + shown_compactly(to_string(request.requested_network))) +
                " without asking again in this session";
    } else if (with_session) {
        text += "\n  (no s: " + refused + ")";
    }
    text += "\n";
    text += offer_session ? "Allow? [y/N/s] " : "Allow? [y/N] ";
    return std::string(terminal_reset) + wrapped(text, columns);
}

}  // namespace cordon::policy
