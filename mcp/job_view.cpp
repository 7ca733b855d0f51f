// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "mcp/job_view.hpp"

#include <algorithm>
#include <cstdio>

#include "base/json_text.hpp"
#include "cordon/record_json.hpp"
#include "runtime/output_collector.hpp"
#include "runtime/render.hpp"

namespace cordon::mcp {

using nlohmann::json;

namespace {

bool continuation(unsigned char byte) {
    return (byte & 0xC0) == 0x80;
}

// The length of `text` without a UTF-8 character cut short at its end.
std::size_t whole_characters(std::string_view text) {
    // A lead byte within the last three whose sequence runs past the end.
    for (std::size_t back = 1; back <= std::min<std::size_t>(4, text.size()); ++back) {
        const auto byte = static_cast<unsigned char>(text[text.size() - back]);
        if (continuation(byte)) continue;
        std::size_t length = 1;
        if ((byte & 0xE0) == 0xC0) {
            length = 2;
        } else if ((byte & 0xF0) == 0xE0) {
            length = 3;
        } else if ((byte & 0xF8) == 0xF0) {
            length = 4;
        }
        return length > back ? text.size() - back : text.size();
    }
    return text.size();
}

std::string status_line(const runtime::job_snapshot& snapshot, const window& shown) {
    std::string line =
        "[" + snapshot.id + ": " + std::string(runtime::to_string(snapshot.status()));
    if (snapshot.status() == runtime::job_status::running) {
        line += " for " + duration_text(running_for(snapshot));
        line += "; wait for it with job_output, end it with job_kill";
    }
    if (!shown.complete) line += "; next offset " + std::to_string(shown.next_offset);
    return line + "]\n";
}

}  // namespace

std::chrono::milliseconds running_for(const runtime::job_snapshot& snapshot) {
    const auto end = snapshot.finished_at.value_or(std::chrono::system_clock::now());
    return std::max(
        std::chrono::milliseconds(0),
        std::chrono::duration_cast<std::chrono::milliseconds>(end - snapshot.started_at));
}

std::string duration_text(std::chrono::milliseconds elapsed) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1fs", static_cast<double>(elapsed.count()) / 1000.0);
    return text;
}

window read_window(const runtime::job& job, runtime::job_output which, std::uint64_t offset,
                   std::size_t max_bytes) {
    const runtime::stream_read got = job.read(which, offset, max_bytes);
    window out;
    out.offset = got.offset;
    out.lossy = got.lossy;
    out.complete = got.complete;
    out.text = got.data;
    out.filled = got.data.size() >= max_bytes;
    if (!got.complete) {
        const std::size_t keep = whole_characters(out.text);
        // A window of nothing but a cut character would never move on: keep it as it is.
        if (keep > 0) out.text.resize(keep);
    }
    out.next_offset = out.offset + out.text.size();
    return out;
}

window read_head_and_tail(const runtime::job& job, runtime::job_output which, std::size_t budget) {
    // The stream's size is what a read past its end returns.
    const std::uint64_t size = job.read(which, UINT64_MAX, 0).next_offset;
    if (size <= budget) return read_window(job, which, 0, budget);
    const std::size_t head_budget = budget / 5;
    const std::size_t tail_budget = budget - head_budget;

    window head = read_window(job, which, 0, head_budget);
    const runtime::stream_read tail = job.read(which, size - tail_budget, tail_budget);
    // The tail starts on a character boundary: the bytes of a cut character before it count as
    // omitted.
    const std::string_view tail_text = runtime::utf8_tail_boundary_trim(tail.data);
    const std::uint64_t tail_start = tail.offset + (tail.data.size() - tail_text.size());

    window out;
    out.offset = head.offset;
    out.lossy = head.lossy;
    out.complete = tail.complete;
    out.next_offset = tail.next_offset;
    out.omitted = tail_start - head.next_offset;
    out.omitted_note = "[\u2026 " + std::to_string(out.omitted) + " bytes omitted (offsets " +
                       std::to_string(head.next_offset) + " to " + std::to_string(tail_start) +
                       "); read them with job_output offset=" + std::to_string(head.next_offset) +
                       "]\n";
    out.text = head.text;
    if (!out.text.empty() && out.text.back() != '\n') out.text += '\n';
    out.text += out.omitted_note;
    out.text += tail_text;
    return out;
}

window keep_lines(window read, const std::function<bool(std::string_view)>& keep) {
    std::string_view rest = read.text;
    read.filtered = true;
    const auto last = rest.rfind('\n');
    if (!read.complete && !(read.filled && last == std::string_view::npos)) {
        const std::size_t whole = last == std::string_view::npos ? 0 : last + 1;
        read.next_offset = read.offset + whole;
        rest = rest.substr(0, whole);
    }
    std::string kept;
    while (!rest.empty()) {
        const auto newline = rest.find('\n');
        const std::string_view line = rest.substr(0, newline);
        if (keep(line)) {
            kept.append(line);
            kept += '\n';
        }
        if (newline == std::string_view::npos) break;
        rest.remove_prefix(newline + 1);
    }
    const std::uint64_t span = read.next_offset - read.offset;
    read.omitted = span > kept.size() ? span - kept.size() : 0;
    read.text = std::move(kept);
    return read;
}

namespace {

// The rows down to the last that is not blank: a model reads what is there, not 20 empty rows.
std::size_t shown_rows(const runtime::terminal_screen& screen) {
    std::size_t count = screen.rows.size();
    while (count > 0 && screen.rows[count - 1].empty())
        --count;
    return count;
}

}  // namespace

bool fit_screen(runtime::terminal_screen& screen, std::size_t budget) {
    const auto total = [&screen] {
        std::size_t bytes = 0;
        for (const auto* lines : {&screen.rows, &screen.attributes, &screen.scrollback}) {
            for (const auto& line : *lines)
                bytes += line.size() + 1;
        }
        return bytes;
    };
    std::size_t bytes = total();
    if (bytes <= budget) return false;
    std::size_t dropped = 0;
    while (bytes > budget && dropped < screen.scrollback.size()) {
        bytes -= screen.scrollback[dropped++].size() + 1;
    }
    screen.scrollback.erase(screen.scrollback.begin(),
                            screen.scrollback.begin() + static_cast<std::ptrdiff_t>(dropped));
    if (bytes > budget) screen.attributes.clear();
    if (total() > budget && !screen.rows.empty()) {
        const std::size_t share = budget / screen.rows.size();
        for (auto& row : screen.rows) {
            if (row.size() > share)
                row.resize(whole_characters(std::string_view(row).substr(0, share)));
        }
    }
    return true;
}

window screen_window(const runtime::terminal_screen& screen, bool cut,
                     const runtime::job_snapshot& snapshot) {
    window out;
    for (std::size_t i = 0; i < shown_rows(screen); ++i) {
        out.text += screen.rows[i];
        out.text += '\n';
    }
    if (out.text.empty()) out.text = "(a blank screen)\n";
    out.text += "[screen " + std::to_string(screen.size.rows) + "x" +
                std::to_string(screen.size.cols) + "; cursor at row " +
                std::to_string(screen.cursor.row + 1) + ", column " +
                std::to_string(screen.cursor.col + 1);
    if (!screen.cursor.visible) out.text += " (hidden)";
    if (!screen.title.empty()) out.text += "; title " + base::dump_json(json(screen.title));
    if (screen.alternate_screen) out.text += "; alternate screen";
    if (cut) out.text += "; cut to what a result holds";
    out.text += "]\n";
    out.offset = screen.offset;
    out.next_offset = screen.offset;
    out.complete =
        snapshot.status() != runtime::job_status::running && screen.offset >= snapshot.output_bytes;
    return out;
}

json screen_json(const runtime::terminal_screen& screen) {
    const std::size_t count = shown_rows(screen);
    json out{{"rows", std::vector<std::string>(screen.rows.begin(),
                                               screen.rows.begin() + static_cast<long>(count))},
             {"cursor", {{"row", screen.cursor.row}, {"col", screen.cursor.col}}},
             {"size", {{"rows", screen.size.rows}, {"cols", screen.size.cols}}}};
    if (!screen.cursor.visible) out["cursor"]["visible"] = false;
    if (!screen.title.empty()) out["title"] = screen.title;
    if (screen.alternate_screen) out["alternateScreen"] = true;
    if (!screen.attributes.empty()) {
        out["attributes"] = std::vector<std::string>(
            screen.attributes.begin(),
            screen.attributes.begin() +
                static_cast<long>(std::min(count, screen.attributes.size())));
    }
    if (!screen.scrollback.empty()) out["scrollback"] = screen.scrollback;
    return out;
}

void show_screen(job_view& shown, const runtime::terminal_screen& screen) {
    shown.structured["screen"] = screen_json(screen);
    shown.structured["output"] = nullptr;  // the screen stands for the bytes
}

json ending_json(const runtime::job_snapshot& snapshot) {
    json out =
        runtime::ending_json(snapshot.outcome ? &*snapshot.outcome : nullptr, snapshot.sandbox);
    // Said of every job, not only of one whose runner failed.
    out["sandbox"]["runnerFailed"] = out["sandbox"].value("runnerFailed", false);
    out["job_id"] = snapshot.id;
    out["status"] = runtime::to_string(snapshot.status());
    out["runningForMs"] = running_for(snapshot).count();
    return out;
}

json compact(const json& full) {
    if (!full.is_object()) return full;
    json out = json::object();
    const auto copy = [&](const char* key) {
        if (const auto it = full.find(key); it != full.end() && !it->is_null()) out[key] = *it;
    };
    const auto when_true = [&](const char* key) {
        if (full.value(key, false)) out[key] = true;
    };
    const auto when_nonzero = [&](const char* key) {
        if (const auto it = full.find(key); it != full.end() && it->is_number() && *it != 0) {
            out[key] = *it;
        }
    };
    for (const char* key :
         {"job_id", "status", "exitCode", "signal", "error", "message", "approval", "killed",
          "written", "output", "screen", "waited", "nextOffset"}) {
        copy(key);
    }
    when_true("timedOut");
    when_true("aborted");
    when_true("lossy");
    when_nonzero("offset");
    when_nonzero("omittedBytes");
    if (full.value("outcome", json()).is_string() && full["outcome"] != "exited") {
        out["outcome"] = full["outcome"];
    }
    if (full.contains("complete") && !full.value("complete", true)) out["complete"] = false;
    if (full.value("status", "") == "running") copy("runningForMs");
    // Where the bytes not shown are.
    if ((out.contains("omittedBytes") || out.contains("lossy")) && full.contains("spill")) {
        json spill = json::object();
        for (const auto& [stream, path] : full["spill"].items()) {
            if (!path.is_null()) spill[stream] = path;
        }
        if (!spill.empty()) out["spill"] = std::move(spill);
    }
    if (const auto sandbox = full.find("sandbox"); sandbox != full.end() && sandbox->is_object()) {
        json kept = json::object();
        for (const char* key : {"mode", "enforcement", "denial"}) {
            if (const auto it = sandbox->find(key); it != sandbox->end() && !it->is_null()) {
                kept[key] = *it;
            }
        }
        if (sandbox->value("denied", false)) kept["denied"] = true;
        if (sandbox->value("runnerFailed", false)) kept["runnerFailed"] = true;
        if (const auto network = sandbox->find("network"); network != sandbox->end()) {
            if (const auto blocked = network->find("blocked");
                blocked != network->end() && !blocked->empty()) {
                kept["network"] = json{{"blocked", *blocked}};
            }
        }
        if (const auto policy = sandbox->find("policy"); policy != sandbox->end()) {
            if (const auto gaps = policy->find("gaps"); gaps != policy->end() && !gaps->empty()) {
                kept["gaps"] = *gaps;
            }
            if (const auto judged = policy->find("judged");
                judged != policy->end() && judged->is_object()) {
                json taken = json::object();
                for (const char* key : {"neutralized", "abandoned"}) {
                    if (const auto it = judged->find(key); it != judged->end() && !it->empty()) {
                        taken[key] = *it;
                    }
                }
                if (const auto failure = judged->find("failure");
                    failure != judged->end() && !failure->is_null()) {
                    taken["failure"] = *failure;
                }
                if (!taken.empty()) kept["judged"] = std::move(taken);
            }
        }
        out["sandbox"] = std::move(kept);
    }
    return out;
}

job_view view(const runtime::job& job, const runtime::job_snapshot& snapshot, const window& shown,
              std::string_view denial_hint) {
    const bool settled = snapshot.status() != runtime::job_status::running;
    const std::optional<runtime::run_record> record = settled ? job.record() : std::nullopt;

    job_view out;
    out.is_error = snapshot.status() == runtime::job_status::failed_to_start;

    std::string text = shown.text;
    if (text.empty()) {
        if (shown.filtered && shown.next_offset > shown.offset) {
            text = "(no line matched)";
        } else if (shown.next_offset > 0 || !settled) {
            text = shown.offset == 0 && !settled ? "(no output yet)" : "(no new output)";
        } else {
            text = "(no output)";
        }
    }
    if (text.back() != '\n') text += '\n';
    if (shown.lossy) {
        text += "[some output is gone: the stream kept only what follows offset " +
                std::to_string(shown.offset) + "]\n";
    }
    // The markers belong to the end of the output: shown once the window reaches it.
    if (settled && shown.complete) {
        if (record) text += runtime::render_markers(*record, denial_hint);
    }
    text += status_line(snapshot, shown);
    out.text = std::move(text);

    const auto spill = [&job](runtime::job_output which) {
        const auto path = job.spill_path(which);
        return path ? json(path->string()) : json();
    };
    out.structured = ending_json(snapshot);
    out.structured.update(json{{"output", shown.text},
                               {"offset", shown.offset},
                               {"nextOffset", shown.next_offset},
                               {"omittedBytes", shown.omitted},
                               {"lossy", shown.lossy},
                               {"complete", shown.complete},
                               {"bytes",
                                {{"output", snapshot.output_bytes},
                                 {"stdout", snapshot.stdout_bytes},
                                 {"stderr", snapshot.stderr_bytes}}},
                               {"spill",
                                {{"output", spill(runtime::job_output::merged)},
                                 {"stdout", spill(runtime::job_output::stdout_only)},
                                 {"stderr", spill(runtime::job_output::stderr_only)}}},
                               {"message", snapshot.outcome && !snapshot.outcome->message.empty()
                                               ? json(snapshot.outcome->message)
                                               : json()},
                               {"label", snapshot.label}});
    return out;
}

}  // namespace cordon::mcp
