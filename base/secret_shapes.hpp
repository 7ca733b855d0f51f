// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The one recogniser of tokens that carry their issuer's prefix (ghp_, github_pat_, glpat-,
// xoxb-, sk-ant-, npm_, hf_, ...) and of AWS access key ids (AKIA, ASIA), so that a token is
// found wherever it leaks: in a variable's value (the environment scrub, runtime/environment.cpp)
// and in a file's head (the content scan of the homes, sandbox/secret_scan.hpp). Both must agree on
// what a token is, so neither keeps a list of its own.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace cordon::base {

// Where a token was found in a text: its first character and its length, prefix included.
struct token_span {
    std::size_t at = 0;
    std::size_t size = 0;
};

// The first token at or after `from` that has an issuer's prefix and at least as long a body as
// that issuer's tokens have (letters and digits, or base64url where the issuer's tokens hold `-`
// and `_`), not glued to a longer word; or an AWS access key id (AKIA or ASIA and sixteen
// upper-case letters or digits). A path such as /opt/hf_models_cache is none.
[[nodiscard]] std::optional<token_span> find_issuer_token(std::string_view text,
                                                          std::size_t from = 0) noexcept;

// Whether `text` holds such a token that does not end with `except` (any token, when it is empty):
// each prefix's places are looked at once, however many tokens the text holds.
[[nodiscard]] bool has_issuer_token(std::string_view text, std::string_view except = {}) noexcept;

}  // namespace cordon::base
