// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// One client connection through the proxy: sniff its protocol, read its request within the head
// timeout, decide (rules.hpp) before any DNS query, resolve (within the lookup deadline, abandoning
// the lookup when the connection ends first), check the addresses, connect to those only, answer
// the client, then relay both ways until both sides have closed.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "proxy/session_state.hpp"

namespace cordon::proxy::detail {

namespace net = boost::asio;
using boost::system::error_code;
using net::ip::tcp;

namespace {

// A client that is refused may still be sending (a request body, the rest of a huge head):
// closing with unread bytes would reset the connection and could destroy the answer before the
// client reads it, so the proxy reads and discards up to this much after answering.
constexpr std::size_t most_drained = 1 << 20;

constexpr std::size_t request_read_size = 4096;

}  // namespace

connection::connection(std::shared_ptr<session_state> session, tcp::socket client,
                       counted_slot counted)
    : session_(std::move(session)),
      counted_(std::move(counted)),
      client_(std::move(client)),
      upstream_(session_->context()),
      timer_(session_->context()),
      read_buffer_(request_read_size) {}

void connection::start() {
    // Nothing sent by the first-byte deadline: closed (limits::first_byte_timeout); the head
    // deadline counts from the arrival once bytes come.
    arm_timer(std::min(session_->bounds().first_byte_timeout, session_->bounds().head_timeout));
    read_request();
}

void connection::arm_timer(std::chrono::milliseconds after) {
    arm_timer_at(std::chrono::steady_clock::now() + after);
}

void connection::arm_timer_at(std::chrono::steady_clock::time_point deadline) {
    // A phase per arming: a wait that had already completed when the timer was re-armed must not
    // end the new stage.
    const std::uint64_t phase = ++timer_phase_;
    timer_.expires_at(deadline);
    timer_.async_wait([self = shared_from_this(), phase](const error_code& error) {
        if (error || self->closed_ || phase != self->timer_phase_) return;
        self->on_timeout();
    });
}

void connection::on_timeout() {
    if (stage_ == stage::resolving) {
        // The lookup's thread goes on until getaddrinfo returns; its answer is dropped.
        lookup_->abandon();
        lookup_.reset();
        if (session_->bounds().lookup_timeout < session_->bounds().connect_timeout) {
            // A slow DNS zone, not a refusal: not the record's.
            unreachable(route_->destination, "DNS lookup timed out");
            return;
        }
    } else if (stage_ != stage::deciding) {
        close();  // a slow request, or a refused client that keeps its end open
        return;
    }
    timed_out_ = true;
    error_code ignored;
    upstream_.close(ignored);  // ends a connect in flight
    fail_upstream(504, socks5::host_unreachable, "timed out");
}

void connection::read_request() {
    client_.async_read_some(net::buffer(read_buffer_), [self = shared_from_this()](
                                                           const error_code& error, std::size_t n) {
        if (self->closed_) return;
        if (error) {
            self->close();
            return;
        }
        self->on_request_bytes(std::string_view(self->read_buffer_.data(), n));
    });
}

void connection::on_request_bytes(std::string_view bytes) {
    if (stage_ == stage::sniff) {
        if (session_->bounds().first_byte_timeout < session_->bounds().head_timeout) {
            arm_timer_at(arrived_ + session_->bounds().head_timeout);
        }
        switch (sniff(static_cast<unsigned char>(bytes.front()))) {
            case client_protocol::socks4:
                reply_then_close(socks4_rejection());
                return;
            case client_protocol::socks5:
                stage_ = stage::socks5_greeting;
                break;
            case client_protocol::http:
                stage_ = stage::http;
                http_.emplace(session_->bounds().header_limit);
                break;
        }
    }
    if (stage_ == stage::http) {
        http_parse parsed = http_->feed(bytes);
        if (std::holds_alternative<need_more>(parsed)) {
            read_request();
            return;
        }
        if (auto* refused = std::get_if<http_refusal>(&parsed)) {
            reply_then_close(http_response(refused->status, "cordon: " + refused->reason + "\n"));
            return;
        }
        auto& request = std::get<http_request>(parsed);
        kind_ = request.tunnel ? kind::http_tunnel : kind::http_forward;
        head_ = std::move(request.head);
        inbox_ = std::move(request.rest);
        http_.reset();
        decide(request.host, request.port);
        return;
    }
    inbox_.append(bytes);  // SOCKS5: a greeting and a request take at most 519 bytes
    on_socks5();
}

void connection::on_socks5() {
    if (stage_ == stage::socks5_greeting) {
        auto parsed = parse_socks5_greeting(inbox_);
        if (std::holds_alternative<need_more>(parsed)) {
            read_request();
            return;
        }
        if (std::holds_alternative<socks5_error>(parsed)) {
            close();
            return;
        }
        const auto greeting = std::get<socks5_greeting>(parsed);
        if (!greeting.no_auth) {
            reply_then_close(socks5_method_reply(socks5::no_acceptable_method));
            return;
        }
        inbox_.erase(0, greeting.size);
        stage_ = stage::socks5_request;
        auto reply = std::make_shared<std::string>(socks5_method_reply(0x00));
        net::async_write(client_, net::buffer(*reply),
                         [self = shared_from_this(), reply](const error_code& error, std::size_t) {
                             if (self->closed_) return;
                             if (error) {
                                 self->close();
                                 return;
                             }
                             self->on_socks5();
                         });
        return;
    }
    auto parsed = parse_socks5_request(inbox_);
    if (std::holds_alternative<need_more>(parsed)) {
        read_request();
        return;
    }
    if (auto* failed = std::get_if<socks5_error>(&parsed)) {
        if (failed->send_reply) {
            reply_then_close(socks5_reply(failed->reply));
        } else {
            close();
        }
        return;
    }
    auto& request = std::get<socks5_request>(parsed);
    inbox_.erase(0, request.size);
    kind_ = kind::socks5;
    if (request.command != socks5::command_connect) {
        reply_then_close(socks5_reply(socks5::command_not_supported));
        return;
    }
    decide(request.host, request.port);
}

void connection::decide(const std::string& host, std::uint16_t port) {
    stage_ = stage::deciding;
    auto verdict = proxy::decide(session_->policy(), host, port);
    if (auto* refused = std::get_if<refusal>(&verdict)) {
        refuse(*refused);
        return;
    }
    route_ = std::get<route>(std::move(verdict));
    connect_deadline_ = std::chrono::steady_clock::now() + session_->bounds().connect_timeout;
    arm_timer_at(connect_deadline_);
    if (route_->addresses) {
        // Listed or vouched for: no DNS query. Posted, as a resolver's answer would be.
        net::post(session_->context(), [self = shared_from_this()] {
            if (self->closed_ || self->timed_out_) return;
            self->on_resolved(*self->route_->addresses);
        });
        return;
    }
    resolve();
}

void connection::resolve() {
    // Over the session's bound the answer is at once: a lookup never waits for another's slot,
    // which a slow zone could hold for as long as the system's resolver timeout.
    auto slot = session_->lookups().try_take();
    if (!slot) {
        unreachable(route_->destination, too_many_lookups);
        return;
    }
    stage_ = stage::resolving;
    arm_timer_at(std::min(connect_deadline_,
                          std::chrono::steady_clock::now() + session_->bounds().lookup_timeout));
    // The completion holds the connection, and the connection the lookup, until it is answered
    // or abandoned (close() and on_timeout() abandon it): the cycle always ends.
    lookup_ = std::make_shared<resolver::lookup>(
        session_->context().get_executor(),
        [self = shared_from_this()](resolver::result result) {
            if (self->closed_ || self->stage_ != stage::resolving) return;
            self->lookup_.reset();
            self->stage_ = stage::deciding;
            self->arm_timer_at(self->connect_deadline_);
            self->on_resolved(std::move(result));
        },
        std::move(slot));
    session_->names().async_resolve(route_->host.host, lookup_);
}

void connection::on_resolved(resolver::result result) {
    if (!result) {
        unreachable(route_->destination, result.message());
        return;
    }
    const address_list& addresses = result.value();
    if (auto failed = check_addresses(session_->policy(), *route_, addresses)) {
        if (failed->kind == refusal_kind::unresolvable) {
            unreachable(route_->destination, failed->message);
        } else {
            refuse(refusal{failed->kind, route_->destination, failed->message, false});
        }
        return;
    }
    connect(addresses);
}

void connection::connect(const address_list& addresses) {
    // Only the addresses just checked: the name is never resolved again (DNS rebinding).
    endpoints_.clear();
    endpoints_.reserve(addresses.size());
    for (const auto& address : addresses)
        endpoints_.emplace_back(address, route_->port);
    connect_next(0, {});
}

// Tries endpoints_[next] and those after it in turn, as Asio's range connect does, but on a
// socket of its own opening: Asio opens sockets without SOCK_CLOEXEC, and cordon keeps every
// descriptor close-on-exec.
void connection::connect_next(std::size_t next, error_code last) {
    if (next == endpoints_.size()) {
        if (!last) last = net::error::host_unreachable;
        fail_upstream(502,
                      last == net::error::connection_refused ? socks5::connection_refused
                                                             : socks5::host_unreachable,
                      last.message());
        return;
    }
    const tcp::endpoint& endpoint = endpoints_[next];
    error_code ignored;
    upstream_.close(ignored);
    const int fd = ::socket(endpoint.address().is_v4() ? AF_INET : AF_INET6,
                            SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    error_code opened;
    if (fd < 0) {
        opened.assign(errno, boost::system::system_category());
    } else {
        upstream_.assign(endpoint.protocol(), fd, opened);
        if (opened) ::close(fd);
    }
    if (opened) {
        connect_next(next + 1, opened);
        return;
    }
    upstream_.async_connect(endpoint, [self = shared_from_this(), next](const error_code& error) {
        if (self->closed_ || self->timed_out_) return;
        if (error) {
            self->connect_next(next + 1, error);
            return;
        }
        self->on_connected();
    });
}

void connection::on_connected() {
    ++timer_phase_;
    timer_.cancel();
    stage_ = stage::relaying;
    session_->record_connection();
    auto to_client = std::make_shared<std::string>();
    if (kind_ == kind::http_tunnel) {
        *to_client = connect_established;
    } else if (kind_ == kind::socks5) {
        // The bound address would be the host's own source address and port: the command learns
        // nothing of the host's side (0.0.0.0:0, which clients ignore for CONNECT).
        *to_client = socks5_reply(socks5::succeeded);
    }
    // The forwarded request's head, then what the client sent after its request.
    auto to_upstream = std::make_shared<std::string>(head_ + inbox_);
    head_.clear();
    inbox_.clear();
    net::async_write(
        client_, net::buffer(*to_client),
        [self = shared_from_this(), to_client, to_upstream](const error_code& error, std::size_t) {
            if (self->closed_) return;
            if (error) {
                self->close();
                return;
            }
            net::async_write(self->upstream_, net::buffer(*to_upstream),
                             [self, to_upstream](const error_code& failed, std::size_t) {
                                 if (self->closed_) return;
                                 if (failed) {
                                     self->close();
                                     return;
                                 }
                                 self->to_upstream_.resize(self->session_->bounds().relay_buffer);
                                 self->to_client_.resize(self->session_->bounds().relay_buffer);
                                 self->relay(true);
                                 self->relay(false);
                             });
        });
}

void connection::relay(bool from_client) {
    tcp::socket& from = from_client ? client_ : upstream_;
    std::vector<char>& buffer = from_client ? to_upstream_ : to_client_;
    from.async_read_some(net::buffer(buffer), [self = shared_from_this(), from_client](
                                                  const error_code& error, std::size_t n) {
        if (self->closed_) return;
        tcp::socket& to = from_client ? self->upstream_ : self->client_;
        if (error == net::error::eof) {
            // Half-close: the other side learns that no more is coming, and may still answer.
            error_code ignored;
            to.shutdown(tcp::socket::shutdown_send, ignored);
            (from_client ? self->client_done_ : self->upstream_done_) = true;
            if (self->client_done_ && self->upstream_done_) self->close();
            return;
        }
        if (error) {
            self->close();
            return;
        }
        std::vector<char>& data = from_client ? self->to_upstream_ : self->to_client_;
        net::async_write(to, net::buffer(data.data(), n),
                         [self, from_client](const error_code& failed, std::size_t) {
                             if (self->closed_) return;
                             if (failed) {
                                 self->close();
                                 return;
                             }
                             self->relay(from_client);
                         });
    });
}

void connection::refuse(const refusal& refused) {
    session_->record_refusal(refused.destination, refused.reason, refused.askable);
    if (kind_ == kind::socks5) {
        reply_then_close(socks5_reply(socks5::not_allowed));
        return;
    }
    reply_then_close(http_response(
        403, refusal_body(refused.destination, refused.kind, refused.reason, refused.askable),
        refused.destination));
}

// Not the record's: only the policy's refusals are, and a name that does not exist is no denial.
void connection::unreachable(const std::string& destination, const std::string& reason) {
    if (kind_ == kind::socks5) {
        reply_then_close(socks5_reply(socks5::host_unreachable));
        return;
    }
    reply_then_close(http_response(
        502, "cordon: network access to " + destination + " failed (" + reason + ")\n",
        destination));
}

void connection::fail_upstream(unsigned http_status, std::uint8_t socks_reply,
                               const std::string& why) {
    if (kind_ == kind::socks5) {
        reply_then_close(socks5_reply(socks_reply));
        return;
    }
    reply_then_close(http_response(
        http_status, "cordon: could not connect to " + route_->destination + " (" + why + ")\n"));
}

void connection::reply_then_close(std::string bytes) {
    stage_ = stage::closing;
    arm_timer(session_->bounds().head_timeout);  // bounds the drain
    error_code ignored;
    upstream_.close(ignored);
    auto reply = std::make_shared<std::string>(std::move(bytes));
    net::async_write(client_, net::buffer(*reply),
                     [self = shared_from_this(), reply](const error_code& error, std::size_t) {
                         if (self->closed_) return;
                         if (error) {
                             self->close();
                             return;
                         }
                         error_code ignored_too;
                         self->client_.shutdown(tcp::socket::shutdown_send, ignored_too);
                         self->drain();
                     });
}

void connection::drain() {
    client_.async_read_some(net::buffer(read_buffer_),
                            [self = shared_from_this()](const error_code& error, std::size_t n) {
                                if (self->closed_) return;
                                self->drained_ += n;
                                if (error || self->drained_ > most_drained) {
                                    self->close();
                                    return;
                                }
                                self->drain();
                            });
}

void connection::close() {
    if (closed_) return;
    closed_ = true;
    // abandon() and forget() may drop the last references but this one.
    const auto keep = shared_from_this();
    if (lookup_) {
        lookup_->abandon();
        lookup_.reset();
    }
    ++timer_phase_;
    timer_.cancel();
    error_code ignored;
    client_.close(ignored);
    upstream_.close(ignored);
    counted_.reset();
    session_->forget(this);
}

}  // namespace cordon::proxy::detail
