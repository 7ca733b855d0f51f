// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Case-insensitive substring search over a stream that arrives in chunks. The denial dialect is
// matched against the whole stderr stream as it is read, not only the retained tail, so a denial
// early in a long stderr is still seen (the original matched the retained tail only and missed such
// a denial; docs/contract.md, "Classification order"). Matches that straddle a chunk boundary are
// found by keeping the last (longest signature - 1) bytes.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::classify {

class signature_scanner {
public:
    signature_scanner() = default;
    explicit signature_scanner(std::span<const std::string> signatures);

    void feed(std::string_view chunk);
    [[nodiscard]] bool matched() const noexcept { return matched_; }

private:
    std::vector<std::string> signatures_;  // lower-cased, blank ones dropped
    std::string carry_;                    // lower-cased tail of what was fed
    std::size_t keep_ = 0;
    bool matched_ = false;
};

// ASCII lower-casing, the comparison every dialect uses.
[[nodiscard]] std::string ascii_lower(std::string_view text);

}  // namespace cordon::classify
