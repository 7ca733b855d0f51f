// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "classify/signature_scanner.hpp"

#include <algorithm>

namespace cordon::classify {

std::string ascii_lower(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

signature_scanner::signature_scanner(std::span<const std::string> signatures) {
    for (const auto& signature : signatures) {
        if (signature.find_first_not_of(" \t\r\n") == std::string::npos) continue;
        signatures_.push_back(ascii_lower(signature));
        keep_ = std::max(keep_, signatures_.back().size() - 1);
    }
}

void signature_scanner::feed(std::string_view chunk) {
    if (matched_ || signatures_.empty() || chunk.empty()) return;
    carry_ += ascii_lower(chunk);
    for (const auto& signature : signatures_) {
        if (carry_.find(signature) != std::string::npos) {
            matched_ = true;
            carry_.clear();
            return;
        }
    }
    if (carry_.size() > keep_) carry_.erase(0, carry_.size() - keep_);
}

}  // namespace cordon::classify
