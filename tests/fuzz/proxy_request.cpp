// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The proxy's input: the first bytes a confined command sends on a connection (proxy/request.hpp),
// read as an HTTP request head (Beast's parser underneath) and as SOCKS5 messages, then the
// destination decided (proxy/rules.hpp). Properties: the head read does not depend on how the
// bytes were cut into reads (the fuzzer chooses the cuts; a differential against one read; only a
// malformed head may be refused sooner, or with another status, with one cut than another), and
// the bytes after it are a prefix of what followed the head; a forwarded request's rewritten head
// is well-formed HTTP that Beast reads back, in origin-form, without proxy fields, with
// `Connection: close`; a refusal is 400 or 431; the SOCKS5 parsers take no more than they were
// given and read the same from exactly the bytes they took; a destination's text is printable.
#include <fuzzer/FuzzedDataProvider.h>

#include <boost/asio/buffer.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "proxy/request.hpp"
#include "proxy/rules.hpp"
#include "tests/fuzz/property.hpp"

using namespace cordon::proxy;

namespace {

const rules& fuzz_rules() {
    static const rules compiled = [] {
        cordon::sandbox::network_rules network;
        network.allowed_domains = {"*.example.com", "example.org:443", "10.1.2.3", "[::1]:80"};
        network.denied_domains = {"bad.example.com"};
        network.proxy_resolve = {{"local.example.com", "127.0.0.1"}};
        return std::get<rules>(compile_rules(network));
    }();
    return compiled;
}

bool printable_ascii(std::string_view text) {
    for (const char c : text) {
        if (c < 0x20 || c >= 0x7F) return false;
    }
    return true;
}

void check_destination(std::string_view host, std::uint16_t port) {
    const auto verdict = decide(fuzz_rules(), host, port);
    if (const auto* refused = std::get_if<refusal>(&verdict)) {
        CORDON_FUZZ_CHECK(!refused->reason.empty());
        CORDON_FUZZ_CHECK(printable_ascii(refused->destination));
        // Text the request chose is bounded and cannot close or open a marker of cordon's (the
        // spaces are cordon's own, in "... (N bytes)").
        CORDON_FUZZ_CHECK(refused->destination.size() <= 280);
        if (refused->kind == refusal_kind::not_a_host_name) {
            CORDON_FUZZ_CHECK(refused->destination.find_first_of("[]\"'") == std::string::npos);
        }
        const std::string response = http_response(
            403,
            refusal_body(refused->destination, refused->kind, refused->reason, refused->askable),
            refused->destination);
        // Five header lines whatever the destination says (no header injection), then the body.
        const std::size_t end = response.find("\r\n\r\n");
        std::size_t lines = 0;
        for (std::size_t at = response.find("\r\n"); at < end; at = response.find("\r\n", at + 2))
            ++lines;
        CORDON_FUZZ_CHECK(lines == 4);
        CORDON_FUZZ_CHECK(response.substr(end + 4).starts_with("cordon: network access to "));
        return;
    }
    const auto& allowed = std::get<route>(verdict);
    CORDON_FUZZ_CHECK(allowed.port == port && port != 0);
    CORDON_FUZZ_CHECK(printable_ascii(allowed.destination));
    if (allowed.addresses) CORDON_FUZZ_CHECK(allowed.trusted && !allowed.addresses->empty());
}

http_parse read_cut(std::size_t limit, std::string_view bytes,
                    const std::vector<std::size_t>& cuts) {
    http_head_reader reader(limit);
    http_parse last;
    for (const std::size_t cut : cuts) {
        const std::size_t length = std::min(cut, bytes.size());
        last = reader.feed(bytes.substr(0, length));
        bytes.remove_prefix(length);
    }
    return reader.feed(bytes);
}

void check_http(std::size_t limit, std::string_view bytes, const std::vector<std::size_t>& cuts) {
    http_head_reader whole_reader(limit);
    const http_parse whole = whole_reader.feed(bytes);
    http_parse cut = read_cut(limit, bytes, cuts);
    if (auto* request = std::get_if<http_request>(&whole)) {
        auto* other = std::get_if<http_request>(&cut);
        CORDON_FUZZ_CHECK(other != nullptr);
        CORDON_FUZZ_CHECK(request->rest.starts_with(other->rest));
        other->rest = request->rest;
        CORDON_FUZZ_CHECK(*other == *request);
        CORDON_FUZZ_CHECK(!request->host.empty() && request->port != 0);
        CORDON_FUZZ_CHECK(bytes.ends_with(request->rest));
        check_destination(request->host, request->port);
        if (request->tunnel) {
            CORDON_FUZZ_CHECK(request->head.empty());
            return;
        }
        namespace http = boost::beast::http;
        http::request_parser<http::empty_body> again;
        boost::beast::error_code error;
        const std::size_t used = again.put(boost::asio::buffer(request->head), error);
        CORDON_FUZZ_CHECK(!error && again.is_header_done() && used == request->head.size());
        const auto& head = again.get();
        CORDON_FUZZ_CHECK(head.target().starts_with("/"));
        CORDON_FUZZ_CHECK(head[http::field::connection] == "close");
        CORDON_FUZZ_CHECK(head.count(http::field::connection) == 1);
        CORDON_FUZZ_CHECK(head.count(http::field::proxy_connection) == 0);
        CORDON_FUZZ_CHECK(head.count(http::field::proxy_authorization) == 0);
        CORDON_FUZZ_CHECK(head.count(http::field::host) == 1);
        return;
    }
    // Beast finds an error in the request line as soon as it has the line, unless an earlier
    // read ended inside it: then it waits for the end of the head. A malformed head may thus be
    // refused sooner or later (the head timeout ends one never finished), and one both malformed
    // and over the limit as either; but what one cut refuses no other lets through.
    const auto is_refusal = [](const http_parse& one) {
        return std::holds_alternative<http_refusal>(one);
    };
    const auto early_refusal = [&](const http_parse& one, const http_parse& other) {
        return std::holds_alternative<need_more>(one) && is_refusal(other) &&
               std::get<http_refusal>(other).status == 400;
    };
    CORDON_FUZZ_CHECK(cut == whole || (is_refusal(cut) && is_refusal(whole)) ||
                      early_refusal(cut, whole) || early_refusal(whole, cut));
    if (const auto* refused = std::get_if<http_refusal>(&whole)) {
        CORDON_FUZZ_CHECK(refused->status == 400 || refused->status == 431);
        CORDON_FUZZ_CHECK(refused->reason.find('\n') == std::string::npos);
    } else {
        CORDON_FUZZ_CHECK(bytes.size() <= limit);
    }
}

void check_socks5(std::string_view bytes) {
    const auto greeting = parse_socks5_greeting(bytes);
    if (const auto* read = std::get_if<socks5_greeting>(&greeting)) {
        CORDON_FUZZ_CHECK(read->size >= 2 && read->size <= bytes.size());
        CORDON_FUZZ_CHECK(parse_socks5_greeting(bytes.substr(0, read->size)) == greeting);
        bytes.remove_prefix(read->size);
    }
    const auto request = parse_socks5_request(bytes);
    if (const auto* read = std::get_if<socks5_request>(&request)) {
        CORDON_FUZZ_CHECK(read->size >= 7 && read->size <= bytes.size());
        CORDON_FUZZ_CHECK(parse_socks5_request(bytes.substr(0, read->size)) == request);
        if (read->size > 7) {
            CORDON_FUZZ_CHECK(std::holds_alternative<need_more>(
                parse_socks5_request(bytes.substr(0, read->size - 1))));
        }
        check_destination(read->host, read->port);
        const std::string reply =
            socks5_reply(socks5::succeeded, read->host.substr(0, 16), read->port);
        CORDON_FUZZ_CHECK(reply.size() == 10 || reply.size() == 22);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    // The numbers come from the end of the input (ConsumeIntegral reads from there), so that a
    // seed is the request as sent followed by a few bytes.
    const auto limit = in.ConsumeIntegralInRange<std::size_t>(16, 2048);
    std::vector<std::size_t> cuts;
    const auto count = in.ConsumeIntegralInRange<int>(0, 8);
    for (int i = 0; i < count; ++i)
        cuts.push_back(in.ConsumeIntegralInRange<std::size_t>(0, 64));
    const std::string bytes = in.ConsumeRemainingBytesAsString();

    check_http(limit, bytes, cuts);
    check_socks5(bytes);
    CORDON_FUZZ_CHECK(printable_ascii(printable(bytes)));
    return 0;
}
