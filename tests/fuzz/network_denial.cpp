// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A command's stderr, as the network denial dialect reads it (classify/network_denial.hpp): bytes
// the command chose. Properties: the verdict is exactly "a signature somewhere, or a line that
// reports a refused connection to a peer that is not loopback" (nothing else makes it true);
// case does not change it; more stderr after a denial never takes the denial back; a line names
// a loopback peer only when it never counts.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "classify/network_denial.hpp"
#include "classify/signature_scanner.hpp"
#include "tests/fuzz/property.hpp"

using namespace cordon::classify;

namespace {

std::string ascii_upper(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    }
    return out;
}

// The verdict from its definition, line by line and signature by signature.
bool by_definition(std::string_view text) {
    const std::string lower = ascii_lower(text);
    for (const std::string& signature : network_denial_signatures()) {
        if (lower.find(signature) != std::string::npos) return true;
    }
    for (std::string_view rest = text;;) {
        const std::size_t end = rest.find('\n');
        if (is_refused_remote_connection(rest.substr(0, end))) return true;
        if (end == std::string_view::npos) return false;
        rest.remove_prefix(end + 1);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const bool denied = matches_network_denial(text);
    CORDON_FUZZ_CHECK(denied == by_definition(text));
    CORDON_FUZZ_CHECK(matches_network_denial(ascii_upper(text)) == denied);
    // The first half as one stream, then more after a line's end: a denial stays one.
    const std::string_view first = text.substr(0, size / 2);
    if (matches_network_denial(first)) {
        CORDON_FUZZ_CHECK(
            matches_network_denial(std::string(first) + "\n" + std::string(text.substr(size / 2))));
    }
    // curl's words naming a loopback peer are never a denial, whatever the line goes on to say.
    const std::string rest(text.substr(0, std::min(text.find('\n'), text.size())));
    for (const std::string_view loopback : {"127.0.0.1", "localhost", "[::1]", "127.1.2.3"}) {
        CORDON_FUZZ_CHECK(!is_refused_remote_connection("Failed to connect to " +
                                                        std::string(loopback) + " port 80" + rest));
    }
    return 0;
}
