// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "runtime/render.hpp"

#include <algorithm>

namespace cordon::runtime {

namespace {

std::string stream_text(const collected_output& output) {
    std::string text = output.text;
    if (output.truncated) {
        text += "\n[output truncated; full output: ";
        text += output.spill_path ? output.spill_path->string() : "(unavailable)";
        text += "]";
    }
    return text;
}

// The destinations the proxy refused, as the denial marker names them: the first three, with
// why, e.g. "a.com:443 (not in allowed_domains), b.org:80 (in denied_domains) and others (the
// record lists them)".
std::string blocked_list(const sandbox::network_facts& network) {
    constexpr std::size_t named = 3;
    std::string out;
    for (std::size_t i = 0; i < network.blocked.size() && i < named; ++i) {
        if (!out.empty()) out += ", ";
        out += network.blocked[i].destination + " (" + network.blocked[i].reason + ")";
    }
    if (network.blocked.size() > named || network.blocked_more != 0) {
        out += " and others (the record lists them)";
    }
    return out;
}

}  // namespace

network_retry network_retry_after(const sandbox_facts& facts) {
    network_retry out;
    if (!facts.network) return out;
    const auto& network = *facts.network;
    const auto& blocked = network.blocked;
    const auto askable = std::find_if(blocked.begin(), blocked.end(), [](const auto& entry) {
        return !entry.by_walls && entry.askable;
    });
    if (askable != blocked.end()) {
        out.destination = askable->destination;
        return out;
    }
    // A refusal asking cannot lift, by the proxy or by the walls (a connection to the host's
    // loopback, its LAN, link-local or its own address), is never answered by offering everything.
    if (network.blocked_more != 0 ||
        std::any_of(blocked.begin(), blocked.end(),
                    [](const auto& entry) { return !entry.by_walls || !entry.askable; })) {
        return out;
    }
    out.whole_network = network.denied_domains.empty();
    return out;
}

std::string memory_size(std::uint64_t bytes) {
    constexpr std::uint64_t mib = std::uint64_t{1} << 20;
    constexpr std::uint64_t gib = std::uint64_t{1} << 30;
    if (bytes >= gib && bytes % gib == 0) return std::to_string(bytes / gib) + " GiB";
    if (bytes >= mib && bytes % mib == 0) return std::to_string(bytes / mib) + " MiB";
    return std::to_string(bytes) + " bytes";
}

namespace {

// `text` (a path a command chose, or what is said of it) on one line: control bytes and DEL as
// \xNN, a backslash doubled, so that no name can end a marker or forge the next one.
std::string one_line(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7f) {
            constexpr char digits[] = "0123456789abcdef";
            out += "\\x";
            out += digits[byte >> 4];
            out += digits[byte & 0xf];
        } else if (c == '\\') {
            out += "\\\\";
        } else {
            out += c;
        }
    }
    return out;
}

// "[sandbox: quarantined <path>"
std::string taken_marker(const sandbox::neutralized_path& path) {
    std::string out = "[sandbox: ";
    switch (path.action) {
        case sandbox::neutral_action::quarantined:
            out += "quarantined ";
            break;
        case sandbox::neutral_action::rewritten:
            out += "rewrote ";
            break;
        case sandbox::neutral_action::restored:
            out += "restored ";
            break;
        case sandbox::neutral_action::removed:
            out += "removed ";
            break;
        case sandbox::neutral_action::failed:
            out += "could not take away ";
            break;
    }
    return out + one_line(path.path);
}

}  // namespace

std::string judgement_markers(const sandbox::judgement_report& judged) {
    constexpr std::size_t named = 10;
    std::string out;
    std::size_t shown = 0;
    for (const sandbox::neutralized_path& path : judged.neutralized) {
        if (++shown > named) {
            out += "[sandbox: and " + std::to_string(judged.neutralized.size() - named) +
                   " more taken from what the run left (the record lists them)]\n";
            break;
        }
        out += taken_marker(path) + " after the run: " + one_line(path.what);
        if (!path.kept_at.empty()) out += "; kept at " + one_line(path.kept_at);
        out += "]\n";
    }
    if (judged.failure) {
        out += "[sandbox: what the run left may be judged in part: " + one_line(*judged.failure) +
               "]\n";
    }
    shown = 0;
    for (const sandbox::neutralized_path& path : judged.abandoned) {
        if (++shown > named) {
            out += "[sandbox: and " + std::to_string(judged.abandoned.size() - named) +
                   " more left by runs whose cordon died (the record lists them)]\n";
            break;
        }
        out += taken_marker(path) + ", left by a run whose cordon died: " + one_line(path.what);
        if (!path.kept_at.empty()) out += "; kept at " + one_line(path.kept_at);
        out += "]\n";
    }
    return out;
}

std::string runner_failed_marker(sandbox::sandbox_mode mode) {
    return "[sandbox: the sandbox runner itself failed under " +
           std::string(sandbox::to_string(mode)) +
           " mode \u2014 the command did not run; this is a sandbox problem, not a command "
           "failure]\n";
}

std::string render_markers(const run_record& record, std::string_view denial_hint, bool with_end) {
    const run_outcome& outcome = record.outcome;
    switch (outcome.kind) {
        case outcome_kind::not_started:
            return "[not started: " + outcome.message + "]\n";
        case outcome_kind::runner_failed:
            // No runner ran when no backend could enforce the mode: the error says why.
            if (!outcome.runner || !outcome.runner->detail) {
                return "[sandbox unavailable: " + outcome.message + "]\n";
            }
            return runner_failed_marker(record.sandbox.mode);
        case outcome_kind::exited:
        case outcome_kind::signaled:
        case outcome_kind::timed_out:
        case outcome_kind::out_of_memory:
        case outcome_kind::aborted:
            break;
    }
    std::string out;
    const sandbox::network_facts* network =
        record.sandbox.network ? &*record.sandbox.network : nullptr;
    if (record.sandbox.denied) {
        out +=
            record.sandbox.network_denied ? "[sandbox: network access " : "[sandbox: file access ";
        if (record.sandbox.network_denied && network != nullptr && !network->blocked.empty()) {
            out += "to " + blocked_list(*network) + " blocked under ";
        } else {
            out += "denied under ";
        }
        out += sandbox::to_string(record.sandbox.mode);
        if (record.sandbox.network_denied) {
            out += " mode, network ";
            out += network != nullptr ? sandbox::to_string(network->policy) : "deny";
            out += "]\n";
        } else {
            out += " mode]\n";
        }
        out += denial_hint;
    }
    if (record.sandbox.judged) out += judgement_markers(*record.sandbox.judged);
    if (network != nullptr && network->proxy_failure) {
        out += "[sandbox: the network proxy stopped during the run (" + *network->proxy_failure +
               "): no connection went out through it afterwards]\n";
    }
    if (network != nullptr && network->proxy_refused != 0) {
        out += "[sandbox: the network proxy closed " + std::to_string(network->proxy_refused) +
               " new connection" + (network->proxy_refused == 1 ? "" : "s") + " as they arrived (" +
               network->proxy_refused_reason.value_or("") +
               "): a limit of cordon's, not the policy]\n";
    }
    if (!with_end) return out;
    if (outcome.kind == outcome_kind::timed_out) {
        out += "[timed out after " + std::to_string(record.timeout.count()) + "ms]\n";
    }
    if (outcome.kind == outcome_kind::out_of_memory) {
        // The run's own limit, usually; the host's memory (the run's processes are the OOM
        // killer's first choice) when the run had none or a cgroup above it ran out.
        if (record.limits_hit.sockets && !record.limits_hit.memory) {
            out +=
                "[out of memory: cordon ended the run: its sockets held more than twice their "
                "share of the host's socket memory]\n";
        } else {
            out += "[out of memory: the kernel's OOM killer ended the run (";
            out += record.limits.max_memory
                       ? "memory limit " + memory_size(*record.limits.max_memory)
                       : std::string("no memory limit");
            out += ")]\n";
        }
    }
    if (outcome.kind == outcome_kind::aborted && !outcome.signal && !outcome.exit_code) {
        // Cancelled before the command started (cordon was told to stop while it set the run
        // up): there is no status to tell.
        out += outcome.message.empty() ? "[aborted]\n" : "[aborted: " + outcome.message + "]\n";
        return out;
    }
    if (outcome.kind == outcome_kind::aborted) {
        // Why, when cordon ended it for the caller (a callback of the caller's threw).
        out += outcome.message.empty() ? "[aborted]\n" : "[aborted: " + outcome.message + "]\n";
    }
    if (outcome.signal) {
        out += "[killed by signal: " + signal_name(*outcome.signal) + "]\n";
    } else if (!outcome.exit_code) {
        out += "[exit status unknown: " + outcome.message + "]\n";
    } else if (*outcome.exit_code != 0) {
        out += "[exit code: " + std::to_string(*outcome.exit_code) + "]\n";
    }
    return out;
}

std::string render_output(const run_record& record) {
    std::string body = stream_text(record.stdout_output);
    std::string err = stream_text(record.stderr_output);
    if (!err.empty()) {
        if (!body.empty() && body.back() != '\n') body += '\n';
        body += "[stderr]\n" + err;
    }
    if (body.empty()) body = "(no output)";
    if (body.back() != '\n') body += '\n';
    return body;
}

std::string render(const run_record& record) {
    return render_output(record) + render_markers(record);
}

}  // namespace cordon::runtime
