// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "base/secret_shapes.hpp"

#include <array>
#include <cctype>

namespace cordon::base {

namespace {

bool is_token_char(char c) noexcept {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
}

}  // namespace

std::optional<token_span> find_issuer_token(std::string_view text, std::size_t from) noexcept {
    // The prefix, and how long the token's body is at least: letters and digits only, or base64url
    // (`-` and `_` too) where the issuer's tokens hold them.
    struct issuer {
        std::string_view prefix;
        std::size_t body;
        bool punctuation;
    };
    static constexpr std::array<issuer, 14> issuers{{{"ghp_", 36, false},
                                                     {"gho_", 36, false},
                                                     {"ghu_", 36, false},
                                                     {"ghs_", 36, false},
                                                     {"ghr_", 36, false},
                                                     {"github_pat_", 40, true},
                                                     {"glpat-", 20, true},
                                                     {"xoxb-", 20, true},
                                                     {"xoxp-", 20, true},
                                                     {"xoxa-", 20, true},
                                                     {"sk-ant-", 32, true},
                                                     {"sk-proj-", 32, true},
                                                     {"npm_", 36, false},
                                                     {"hf_", 30, false}}};
    std::optional<token_span> first;
    const auto found = [&first](std::size_t at, std::size_t size) {
        if (!first || at < first->at) first = token_span{at, size};
    };
    for (const issuer& i : issuers) {
        for (std::size_t at = text.find(i.prefix, from); at != std::string_view::npos;
             at = text.find(i.prefix, at + 1)) {
            if (first && at >= first->at) break;
            if (at > 0 && is_token_char(text[at - 1])) continue;
            std::size_t end = at + i.prefix.size();
            while (end < text.size() &&
                   (i.punctuation ? is_token_char(text[end])
                                  : std::isalnum(static_cast<unsigned char>(text[end])) != 0))
                ++end;
            if (end - at - i.prefix.size() >= i.body &&
                (end == text.size() || !is_token_char(text[end]))) {
                found(at, end - at);
                break;
            }
        }
    }
    for (std::string_view id : {std::string_view("AKIA"), std::string_view("ASIA")}) {
        for (std::size_t at = text.find(id, from); at != std::string_view::npos;
             at = text.find(id, at + 1)) {
            if (first && at >= first->at) break;
            std::size_t end = at + 4;
            while (end < text.size() && end - at < 20 &&
                   (std::isupper(static_cast<unsigned char>(text[end])) != 0 ||
                    std::isdigit(static_cast<unsigned char>(text[end])) != 0)) {
                ++end;
            }
            if (end - at == 20 && (at == 0 || !is_token_char(text[at - 1])) &&
                (end == text.size() || !is_token_char(text[end]))) {
                found(at, 20);
                break;
            }
        }
    }
    return first;
}

}  // namespace cordon::base
