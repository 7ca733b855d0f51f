// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The network denial dialect: what commands print when a confined run's network policy is `deny`
// (docs/network.md) and they try to leave anyway. Under deny a command has a network of its own
// with loopback only (or, on the Landlock rung without a namespace, its sockets refused), so a
// name does not resolve, a route does not exist, a socket family is refused. The messages below
// were taken from curl, wget, git, getent, python3 and bash's /dev/tcp run in a network namespace
// with loopback only (tests/classify/network_denial_test.cpp holds them).
//
// Two parts, both heuristics like every stderr dialect (classify.hpp): substrings that mean a
// refusal wherever they appear, scanned over the whole stderr stream with the backend's own
// signatures; and a refused connection, which is a denial only when the line names a peer that
// is not loopback (a refused connection to 127.0.0.1 is an ordinary failure: nobody listens).
// They apply in the confined modes under `deny` only: never under danger-full-access nor `allow`.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace cordon::classify {

// Lower-case substrings, each a refusal of the network wherever it appears.
[[nodiscard]] std::span<const std::string> network_denial_signatures();

// Whether one line of stderr reports a connection to a peer that is not loopback that failed:
// curl's and git's "Failed to connect to HOST port N", wget's "Connecting to HOST... failed",
// or "connection refused" naming such a HOST.
[[nodiscard]] bool is_refused_remote_connection(std::string_view line);

// Whether `stderr_text` carries the network denial dialect: a signature, or a refused connection
// to a peer that is not loopback.
[[nodiscard]] bool matches_network_denial(std::string_view stderr_text);

}  // namespace cordon::classify
