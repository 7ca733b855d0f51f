// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "proxy/request.hpp"

#include <arpa/inet.h>

#include <array>
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/status.hpp>
#include <charconv>

namespace cordon::proxy {

namespace http = boost::beast::http;

namespace {

struct authority {
    std::string host;
    std::uint16_t port = 0;
};

[[nodiscard]] bool parse_port(std::string_view text, std::uint16_t& port) {
    if (text.empty() || text.size() > 5) return false;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), port);
    return error == std::errc{} && end == text.data() + text.size() && port != 0;
}

// `host:port`, `[v6]:port`, or without `:port` when a default is given (0: the port is needed).
[[nodiscard]] std::optional<authority> parse_authority(std::string_view text,
                                                       std::uint16_t default_port) {
    authority out;
    std::string_view port_text;
    bool has_port = false;
    if (!text.empty() && text.front() == '[') {
        const std::size_t close = text.find(']');
        if (close == std::string_view::npos) return std::nullopt;
        out.host = std::string(text.substr(1, close - 1));
        const std::string_view after = text.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') return std::nullopt;
            port_text = after.substr(1);
            has_port = true;
        }
        if (out.host.find(':') == std::string::npos) return std::nullopt;
    } else {
        const std::size_t colon = text.rfind(':');
        if (colon != std::string_view::npos) {
            if (text.find(':') != colon) return std::nullopt;  // a v6 address needs brackets
            port_text = text.substr(colon + 1);
            has_port = true;
            text = text.substr(0, colon);
        }
        out.host = std::string(text);
    }
    if (out.host.empty()) return std::nullopt;
    if (has_port) {
        if (!parse_port(port_text, out.port)) return std::nullopt;
    } else {
        if (default_port == 0) return std::nullopt;
        out.port = default_port;
    }
    return out;
}

[[nodiscard]] bool starts_with_nocase(std::string_view text, std::string_view prefix) {
    if (text.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
        char c = text[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != prefix[i]) return false;
    }
    return true;
}

constexpr std::string_view proxy_only =
    "cordon's proxy serves CONNECT host:port and absolute-URI (http://host/path) requests only";

}  // namespace

client_protocol sniff(unsigned char first_byte) noexcept {
    if (first_byte == 0x05) return client_protocol::socks5;
    if (first_byte == 0x04) return client_protocol::socks4;
    return client_protocol::http;
}

http_head_reader::http_head_reader(std::size_t header_limit) : header_limit_(header_limit) {
    parser_.header_limit(static_cast<std::uint32_t>(header_limit));
    parser_.eager(false);
}

http_parse http_head_reader::feed(std::string_view bytes) {
    if (!std::holds_alternative<need_more>(result_)) return result_;
    // The parser may take the request line before the rest of the head is there (it returns
    // how much it took with need_more), and wants the bytes it did not take again with the next
    // ones. Its limit applies to the fields after the request line: the whole head's is kept
    // here, so that pending_ never holds much more than the limit and the answer does not
    // depend on how the bytes were cut.
    pending_.append(bytes);
    // Nothing to give: an empty buffer is a null pointer, on which the parser would compute
    // offsets (undefined behaviour, found by tests/fuzz/proxy_request.cpp).
    if (pending_.empty()) return result_;
    boost::beast::error_code error;
    const std::size_t used = parser_.put(boost::asio::buffer(pending_), error);
    pending_.erase(0, used);
    consumed_ += used;
    const http_refusal too_large{
        431, "the request head is larger than " + std::to_string(header_limit_) + " bytes"};
    if (error == http::error::need_more) {
        // Without its end the head is longer than what is here: at the limit it is over it.
        if (consumed_ + pending_.size() >= header_limit_) result_ = too_large;
        return result_;
    }
    if (error == http::error::header_limit || (!error && consumed_ > header_limit_)) {
        result_ = too_large;
        return result_;
    }
    if (error || !parser_.is_header_done()) {
        result_ = http_refusal{400, "malformed request: " + error.message()};
        return result_;
    }
    return finish();
}

http_parse http_head_reader::finish() {
    const auto& request = parser_.get();
    const std::string_view target = request.target();
    http_request out;
    out.rest = std::move(pending_);
    pending_.clear();
    if (request.method() == http::verb::connect) {
        auto where = parse_authority(target, 0);
        if (!where) {
            result_ = http_refusal{400, "CONNECT needs host:port"};
            return result_;
        }
        out.tunnel = true;
        out.host = std::move(where->host);
        out.port = where->port;
        result_ = std::move(out);
        return result_;
    }
    if (starts_with_nocase(target, "https://")) {
        result_ = http_refusal{400, "an https:// URL is fetched through CONNECT host:443"};
        return result_;
    }
    if (!starts_with_nocase(target, "http://")) {
        result_ = http_refusal{400, std::string(proxy_only)};
        return result_;
    }
    std::string_view rest = target.substr(7);
    const std::size_t authority_end = rest.find_first_of("/?#");
    const std::string_view authority_text = rest.substr(0, authority_end);
    rest =
        authority_end == std::string_view::npos ? std::string_view{} : rest.substr(authority_end);
    if (authority_text.find('@') != std::string_view::npos) {
        result_ = http_refusal{400, "a URL with user information is not forwarded"};
        return result_;
    }
    auto where = parse_authority(authority_text, 80);
    if (!where) {
        result_ = http_refusal{400, "the URL has no valid host[:port]"};
        return result_;
    }
    rest = rest.substr(0, rest.find('#'));
    std::string path =
        rest.empty() || rest.front() != '/' ? "/" + std::string(rest) : std::string(rest);
    out.host = std::move(where->host);
    out.port = where->port;
    std::string& head = out.head;
    head.append(request.method_string()).append(" ").append(path);
    head.append(request.version() == 10 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n");
    head.append("Host: ").append(authority_text).append("\r\n");
    for (const auto& field : request) {
        switch (field.name()) {
            case http::field::host:
            case http::field::connection:
            case http::field::proxy_connection:
            case http::field::proxy_authorization:
            case http::field::keep_alive:
                continue;
            default:
                break;
        }
        head.append(field.name_string()).append(": ").append(field.value()).append("\r\n");
    }
    head.append("Connection: close\r\n\r\n");
    result_ = std::move(out);
    return result_;
}

std::string http_response(unsigned status, std::string_view body,
                          std::string_view blocked_destination) {
    std::string out = "HTTP/1.1 " + std::to_string(status) + " ";
    out.append(http::obsolete_reason(static_cast<http::status>(status)));
    out.append("\r\nContent-Type: text/plain\r\nContent-Length: ");
    out.append(std::to_string(body.size())).append("\r\nConnection: close\r\n");
    if (!blocked_destination.empty()) {
        out.append("X-Cordon-Blocked: ").append(blocked_destination).append("\r\n");
    }
    out.append("\r\n").append(body);
    return out;
}

namespace {

// What a refusal no person can be asked about says would let the destination through, if anything.
// An address allowed_domains does not list, and that no one may be asked about, is one of the
// host's own or not public (rules.cpp, askable_address(); a denied one is refused as denied).
std::string_view refusal_advice(refusal_kind kind) {
    switch (kind) {
        case refusal_kind::denied:
        case refusal_kind::denied_address:
            return "; denied_domains refuses it, whatever is asked";
        case refusal_kind::address_not_listed:
        case refusal_kind::private_address:
        case refusal_kind::own_address:
            return "; the host's own, loopback, private and link-local addresses are reached only "
                   "where the operator maps a name to them (proxy_resolve) or lists them in "
                   "allowed_domains";
        case refusal_kind::not_a_host_name:
        case refusal_kind::port_zero:
        case refusal_kind::name_not_listed:
        case refusal_kind::unresolvable:
        case refusal_kind::this_host:
            return "";
    }
    return "";
}

}  // namespace

std::string refusal_body(std::string_view destination, refusal_kind kind, std::string_view reason,
                         bool askable) {
    std::string out = "cordon: network access to ";
    out.append(destination).append(" is blocked by this run's network policy (");
    out.append(reason).append(")");
    // What would let it through, where asking can: a denied one never is, a private or the
    // host's own address only by the operator's say.
    if (askable) {
        out.append("; ask for it with --allow-domain ")
            .append(destination)
            .append(" or an escalation");
    } else {
        out.append(refusal_advice(kind));
    }
    out.append("\n");
    return out;
}

std::variant<need_more, socks5_greeting, socks5_error> parse_socks5_greeting(
    std::string_view bytes) {
    if (bytes.size() < 2) return need_more{};
    if (static_cast<unsigned char>(bytes[0]) != 5) {
        return socks5_error{socks5::general_failure, false, "not SOCKS5"};
    }
    const std::size_t count = static_cast<unsigned char>(bytes[1]);
    if (bytes.size() < 2 + count) return need_more{};
    const std::string_view methods = bytes.substr(2, count);
    return socks5_greeting{methods.find('\0') != std::string_view::npos, 2 + count};
}

std::variant<need_more, socks5_request, socks5_error> parse_socks5_request(std::string_view bytes) {
    if (bytes.size() < 4) return need_more{};
    if (static_cast<unsigned char>(bytes[0]) != 5) {
        return socks5_error{socks5::general_failure, false, "not SOCKS5"};
    }
    socks5_request out;
    out.command = static_cast<std::uint8_t>(bytes[1]);
    const auto type = static_cast<unsigned char>(bytes[3]);
    std::size_t address_size = 0;
    std::size_t offset = 4;
    if (type == 1) {
        address_size = 4;
    } else if (type == 4) {
        address_size = 16;
    } else if (type == 3) {
        if (bytes.size() < 5) return need_more{};
        address_size = static_cast<unsigned char>(bytes[4]);
        offset = 5;
        if (address_size == 0) {
            return socks5_error{socks5::general_failure, true, "an empty host name"};
        }
    } else {
        return socks5_error{socks5::address_type_not_supported, true, "unknown address type"};
    }
    if (bytes.size() < offset + address_size + 2) return need_more{};
    const std::string_view address = bytes.substr(offset, address_size);
    if (type == 3) {
        out.host = std::string(address);
    } else {
        std::array<char, INET6_ADDRSTRLEN> text{};
        if (::inet_ntop(type == 1 ? AF_INET : AF_INET6, address.data(), text.data(), text.size()) ==
            nullptr) {
            return socks5_error{socks5::general_failure, true, "an unreadable address"};
        }
        out.host = text.data();
    }
    const auto high = static_cast<unsigned char>(bytes[offset + address_size]);
    const auto low = static_cast<unsigned char>(bytes[offset + address_size + 1]);
    out.port = static_cast<std::uint16_t>(high << 8 | low);
    out.size = offset + address_size + 2;
    return out;
}

std::string socks5_method_reply(std::uint8_t method) {
    return std::string{'\x05', static_cast<char>(method)};
}

std::string socks5_reply(std::uint8_t code, std::string_view bound, std::uint16_t bound_port) {
    std::string out{'\x05', static_cast<char>(code), '\x00'};
    if (bound.size() == 16) {
        out.push_back('\x04');
        out.append(bound);
    } else if (bound.size() == 4) {
        out.push_back('\x01');
        out.append(bound);
    } else {
        out.append(std::string_view("\x01\x00\x00\x00\x00", 5));
    }
    out.push_back(static_cast<char>(bound_port >> 8));
    out.push_back(static_cast<char>(bound_port & 0xFF));
    return out;
}

std::string socks4_rejection() {
    return std::string("\x00\x5B\x00\x00\x00\x00\x00\x00", 8);
}

std::string printable(std::string_view text) {
    constexpr std::size_t most = 300;
    std::string out;
    out.reserve(std::min(text.size(), most));
    for (const char c : text.substr(0, most))
        out.push_back(c >= 0x20 && c < 0x7F ? c : '?');
    return out;
}

}  // namespace cordon::proxy
