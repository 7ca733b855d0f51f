// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The MCP server's input: a byte stream from the client, cut into lines (line_splitter) and each
// line read as a JSON-RPC message (parse_message). Properties: the lines do not depend on how the
// stream was cut into reads (the fuzzer chooses the cuts; a differential against one read of the
// whole), and they are those the framing's rules give, written plainly; every line
// gets an answer that serialises (the reply to a malformed line, or a result echoing a request's
// id and params), and a request's id is a string or an integer.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "cordon/record_json.hpp"
#include "mcp/json_rpc.hpp"
#include "tests/fuzz/property.hpp"

using namespace cordon::mcp;

namespace {

// What a splitter emitted: a line, or "overlong" and the bytes dropped.
struct event {
    bool overlong = false;
    std::string line;
    std::size_t dropped = 0;
    bool operator==(const event&) const = default;
};

std::vector<event> split(std::size_t max_line, std::string_view bytes,
                         const std::vector<std::size_t>& cuts) {
    std::vector<event> events;
    line_splitter splitter(
        max_line,
        [&events](std::string_view line) {
            events.push_back({false, std::string(line)});
        },
        [&events](std::size_t dropped) {
            events.push_back({true, {}, dropped});
        });
    for (const std::size_t cut : cuts) {
        const std::size_t length = std::min(cut, bytes.size());
        splitter.feed(bytes.substr(0, length));
        bytes.remove_prefix(length);
    }
    splitter.feed(bytes);
    splitter.finish();
    return events;
}

// The same, written plainly from the framing's rules: lines cut at each newline, a last one
// without a newline counts; a line longer than `max_line` (before its "\r" is removed) is
// dropped and reported with its length; one trailing "\r" removed; blank lines skipped.
std::vector<event> reference(std::size_t max_line, std::string_view bytes) {
    std::vector<event> events;
    for (;;) {
        const std::size_t newline = bytes.find('\n');
        std::string_view line = bytes.substr(0, newline);
        if (line.size() > max_line) {
            events.push_back({true, {}, line.size()});
        } else {
            if (line.ends_with('\r')) line.remove_suffix(1);
            if (line.find_first_not_of(" \t") != std::string_view::npos)
                events.push_back({false, std::string(line)});
        }
        if (newline == std::string_view::npos) return events;
        bytes.remove_prefix(newline + 1);
    }
}

void answer(std::string_view line) {
    incoming parsed = parse_message(line);
    json reply;
    if (auto* bad = std::get_if<malformed>(&parsed)) {
        CORDON_FUZZ_CHECK(bad->id.is_null() || bad->id.is_string() || bad->id.is_number_integer());
        reply = error_reply(bad->id, bad->code, bad->message);
    } else if (auto* asked = std::get_if<request>(&parsed)) {
        CORDON_FUZZ_CHECK(asked->id.is_string() || asked->id.is_number_integer());
        CORDON_FUZZ_CHECK(asked->params.is_null() || asked->params.is_object());
        reply = result_reply(asked->id, json{{"method", asked->method}, {"params", asked->params}});
    } else if (auto* note = std::get_if<notification>(&parsed)) {
        CORDON_FUZZ_CHECK(note->params.is_null() || note->params.is_object());
        reply = json{{"method", note->method}, {"params", note->params}};
    } else {
        auto& replied = std::get<response>(parsed);
        reply = json{{"id", replied.id}};
        if (auto* failed = std::get_if<rpc_error>(&replied.outcome)) {
            reply["error"] = json{{"code", failed->code}, {"message", failed->message}};
        } else {
            reply["result"] = std::get<json>(replied.outcome);
        }
    }
    // The server writes every reply through this one serialisation: it must not throw.
    const std::string text = cordon::runtime::dump(reply);
    CORDON_FUZZ_CHECK(!text.empty() && text.find('\n') == std::string::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    const auto max_line = in.ConsumeIntegralInRange<std::size_t>(1, 512);
    std::vector<std::size_t> cuts;
    const auto count = in.ConsumeIntegralInRange<int>(0, 16);
    for (int i = 0; i < count; ++i)
        cuts.push_back(in.ConsumeIntegralInRange<std::size_t>(0, 96));
    const std::string bytes = in.ConsumeRemainingBytesAsString();

    const std::vector<event> whole = split(max_line, bytes, {});
    CORDON_FUZZ_CHECK(split(max_line, bytes, cuts) == whole);
    CORDON_FUZZ_CHECK(reference(max_line, bytes) == whole);
    for (const event& each : whole) {
        if (each.overlong) {
            CORDON_FUZZ_CHECK(each.dropped > max_line);
            continue;
        }
        CORDON_FUZZ_CHECK(!each.line.empty() && each.line.size() <= max_line);
        CORDON_FUZZ_CHECK(each.line.find('\n') == std::string::npos);
        answer(each.line);
    }
    return 0;
}
