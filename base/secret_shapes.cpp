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

// The prefix, and how long the token's body is at least: letters and digits only, or base64url
// (`-` and `_` too) where the issuer's tokens hold them.
struct issuer {
    std::string_view prefix;
    std::size_t body;
    bool punctuation;
};
constexpr std::array<issuer, 14> issuers{{{"ghp_", 36, false},
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
constexpr std::array<std::string_view, 2> access_key_ids{"AKIA", "ASIA"};

// The length of the token of `i` whose prefix stands at `at`, or 0 when there is none.
std::size_t issuer_token_size(std::string_view text, std::size_t at, const issuer& i) noexcept {
    if (at > 0 && is_token_char(text[at - 1])) return 0;
    std::size_t end = at + i.prefix.size();
    while (end < text.size() &&
           (i.punctuation ? is_token_char(text[end])
                          : std::isalnum(static_cast<unsigned char>(text[end])) != 0))
        ++end;
    if (end - at - i.prefix.size() < i.body || (end != text.size() && is_token_char(text[end])))
        return 0;
    return end - at;
}

// Whether an AWS access key id (its prefix and sixteen upper-case letters or digits) stands at
// `at`.
bool access_key_id_at(std::string_view text, std::size_t at) noexcept {
    std::size_t end = at + 4;
    while (end < text.size() && end - at < 20 &&
           (std::isupper(static_cast<unsigned char>(text[end])) != 0 ||
            std::isdigit(static_cast<unsigned char>(text[end])) != 0)) {
        ++end;
    }
    return end - at == 20 && (at == 0 || !is_token_char(text[at - 1])) &&
           (end == text.size() || !is_token_char(text[end]));
}

}  // namespace

std::optional<token_span> find_issuer_token(std::string_view text, std::size_t from) noexcept {
    std::optional<token_span> first;
    for (const issuer& i : issuers) {
        for (std::size_t at = text.find(i.prefix, from); at != std::string_view::npos;
             at = text.find(i.prefix, at + 1)) {
            if (first && at >= first->at) break;
            if (const std::size_t size = issuer_token_size(text, at, i); size != 0) {
                first = token_span{at, size};
                break;
            }
        }
    }
    for (std::string_view id : access_key_ids) {
        for (std::size_t at = text.find(id, from); at != std::string_view::npos;
             at = text.find(id, at + 1)) {
            if (first && at >= first->at) break;
            if (access_key_id_at(text, at)) {
                first = token_span{at, 20};
                break;
            }
        }
    }
    return first;
}

bool has_issuer_token(std::string_view text, std::string_view except) noexcept {
    const auto counts = [&](std::size_t at, std::size_t size) {
        return except.empty() || !text.substr(at, size).ends_with(except);
    };
    for (const issuer& i : issuers) {
        for (std::size_t at = text.find(i.prefix); at != std::string_view::npos;
             at = text.find(i.prefix, at + 1)) {
            const std::size_t size = issuer_token_size(text, at, i);
            if (size != 0 && counts(at, size)) return true;
        }
    }
    for (std::string_view id : access_key_ids) {
        for (std::size_t at = text.find(id); at != std::string_view::npos;
             at = text.find(id, at + 1)) {
            if (access_key_id_at(text, at) && counts(at, 20)) return true;
        }
    }
    return false;
}

}  // namespace cordon::base
