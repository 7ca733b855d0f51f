// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What a client of the proxy asks for, read from the first bytes of its connection, and the bytes
// the proxy answers with. Pure functions and one parser object, no I/O: the connection code
// (connection.cpp) feeds them what it read, and tests/fuzz/proxy_request.cpp drives them with
// any bytes.
//
// HTTP heads are parsed by Boost.Beast (request_parser<empty_body>), never by hand; SOCKS5 is a
// small binary protocol (RFC 1928) parsed here. A connection speaks one of them, told apart by
// its first byte (sniff()).
#pragma once

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "proxy/rules.hpp"

namespace cordon::proxy {

// The most bytes an HTTP request head may have (request line and fields, up to the blank line).
inline constexpr std::size_t default_header_limit = 16 * 1024;

enum class client_protocol { http, socks4, socks5 };
// 0x05 is SOCKS5, 0x04 SOCKS4 (refused), anything else HTTP.
[[nodiscard]] client_protocol sniff(unsigned char first_byte) noexcept;

// More bytes are needed before anything can be said.
struct need_more {
    friend bool operator==(const need_more&, const need_more&) = default;
};

// An HTTP request the proxy can serve: `CONNECT host:port` (a tunnel) or an absolute-URI request
// `METHOD http://host[:port]/path HTTP/1.x` (forwarded).
struct http_request {
    bool tunnel = false;  // CONNECT
    std::string host;     // as the request spells it, IPv6 brackets removed; not yet validated
    std::uint16_t port = 0;
    // For a forwarded request: its head rewritten to origin-form (target = path?query), Host set
    // to the URI's authority, Proxy-Connection, Proxy-Authorization and Keep-Alive removed, and
    // `Connection: close` set: one request per connection (connection.cpp says why). Empty for
    // CONNECT.
    std::string head;
    // The bytes the client sent after the head (a body's start, or a TLS hello sent eagerly):
    // forwarded to the destination before anything else.
    std::string rest;
    friend bool operator==(const http_request&, const http_request&) = default;
};

// A request the proxy answers with an error status and closes: 400 (malformed, not to a proxy,
// https:// absolute-URI), 431 (head over the limit).
struct http_refusal {
    unsigned status = 400;
    std::string reason;  // one line, the response's body
    friend bool operator==(const http_refusal&, const http_refusal&) = default;
};

using http_parse = std::variant<need_more, http_request, http_refusal>;

// Reads one request head from bytes fed in pieces. The result does not depend on how the bytes
// were cut (the fuzz target checks it). Once it returns anything but need_more it is done:
// further feeds return the same result.
class http_head_reader {
public:
    explicit http_head_reader(std::size_t header_limit = default_header_limit);
    [[nodiscard]] http_parse feed(std::string_view bytes);

private:
    http_parse finish();

    boost::beast::http::request_parser<boost::beast::http::empty_body> parser_;
    std::string pending_;       // bytes the parser has not taken yet
    std::size_t consumed_ = 0;  // bytes it took
    std::size_t header_limit_;
    http_parse result_;
};

// A complete HTTP/1.1 response with a text/plain body, `Connection: close` and, when
// `blocked_destination` is not empty, `X-Cordon-Blocked: <it>`.
[[nodiscard]] std::string http_response(unsigned status, std::string_view body,
                                        std::string_view blocked_destination = {});
// The body of a refusal by the policy (403): names cordon, the destination, why (`reason`), and
// what would let it through, by its kind: asking for exactly that host and port where a person
// could be asked (`askable`, rules.hpp), or what no asking opens (denied, the host's own or a
// private address).
[[nodiscard]] std::string refusal_body(std::string_view destination, refusal_kind kind,
                                       std::string_view reason, bool askable);
inline constexpr std::string_view connect_established =
    "HTTP/1.1 200 Connection Established\r\n\r\n";

// SOCKS5 (RFC 1928). The reply codes the proxy sends.
namespace socks5 {
inline constexpr std::uint8_t succeeded = 0x00;
inline constexpr std::uint8_t general_failure = 0x01;
inline constexpr std::uint8_t not_allowed = 0x02;  // "connection not allowed by ruleset"
inline constexpr std::uint8_t host_unreachable = 0x04;
inline constexpr std::uint8_t connection_refused = 0x05;
inline constexpr std::uint8_t command_not_supported = 0x07;
inline constexpr std::uint8_t address_type_not_supported = 0x08;
inline constexpr std::uint8_t no_acceptable_method = 0xFF;
inline constexpr std::uint8_t command_connect = 0x01;
}  // namespace socks5

// The client's greeting: VER NMETHODS METHODS...
struct socks5_greeting {
    bool no_auth = false;  // method 0x00 offered
    std::size_t size = 0;  // bytes it took
    friend bool operator==(const socks5_greeting&, const socks5_greeting&) = default;
};
// A SOCKS5 message that cannot be served: the reply code to send (or none when the version is
// wrong: the client does not speak SOCKS5, it gets no SOCKS5 reply) and why.
struct socks5_error {
    std::uint8_t reply = socks5::general_failure;
    bool send_reply = true;
    std::string reason;
    friend bool operator==(const socks5_error&, const socks5_error&) = default;
};
[[nodiscard]] std::variant<need_more, socks5_greeting, socks5_error> parse_socks5_greeting(
    std::string_view bytes);

// The client's request: VER CMD RSV ATYP DST.ADDR DST.PORT.
struct socks5_request {
    std::uint8_t command = 0;
    std::string host;  // ATYP 1 and 4: the address's canonical text; 3: the name's bytes as sent
    std::uint16_t port = 0;
    std::size_t size = 0;  // bytes it took
    friend bool operator==(const socks5_request&, const socks5_request&) = default;
};
[[nodiscard]] std::variant<need_more, socks5_request, socks5_error> parse_socks5_request(
    std::string_view bytes);

// The method-selection reply: {5, method}.
[[nodiscard]] std::string socks5_method_reply(std::uint8_t method);
// A reply to a request; `bound` is the 4 or 16 bytes of the bound address (empty: 0.0.0.0).
[[nodiscard]] std::string socks5_reply(std::uint8_t code, std::string_view bound = {},
                                       std::uint16_t bound_port = 0);
// SOCKS4's "request rejected or failed" (0x5B): the only answer a SOCKS4 client gets.
[[nodiscard]] std::string socks4_rejection();

// `text` made safe to show in a header, a log line or a record: printable ASCII only (anything
// else becomes '?'), at most 300 characters.
[[nodiscard]] std::string printable(std::string_view text);

}  // namespace cordon::proxy
