// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// recognise(): what a file's head holds, by its shape (secret_scan.hpp). Apart from the scan, so
// that what is recognised reads in one place, with its near misses.
#include "sandbox/secret_scan.hpp"

#include <cctype>

#include "base/enum_text.hpp"
#include "base/secret_shapes.hpp"

namespace cordon::sandbox {

constexpr auto secret_kind_texts = base::enum_texts<secret_kind>({
    {secret_kind::none, "none"},
    {secret_kind::pem_private_key, "PEM private key"},
    {secret_kind::putty_key, "PuTTY key"},
    {secret_kind::gcp_service_account, "Google service account key"},
    {secret_kind::gcp_user_credentials, "Google user credentials"},
    {secret_kind::aws_secret_key, "AWS secret access key"},
    {secret_kind::issuer_token, "token"},
});

std::string_view to_string(secret_kind kind) noexcept {
    return secret_kind_texts.text(kind);
}

// ---- recognise() -------------------------------------------------------------------------------

namespace {

bool is_base64(char c) noexcept {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '/' || c == '=';
}

char lower_char(char c) noexcept {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

// Past line ends at `at`: a newline, a carriage return, or a JSON string's `\n` (a key quoted in
// a JSON or YAML file).
std::size_t past_line_ends(std::string_view text, std::size_t at) noexcept {
    while (at < text.size()) {
        if (text[at] == '\n' || text[at] == '\r') {
            ++at;
        } else if (text.substr(at, 2) == "\\n") {
            at += 2;
        } else {
            break;
        }
    }
    return at;
}

// A PEM block whose label names a private key, and a key body after it: at least 40 base64
// characters on the first line past its headers (Proc-Type:, DEK-Info:, PGP's Version:). A text
// that quotes the line alone, or with "..." under it, holds no key.
bool has_pem_private_key(std::string_view text) noexcept {
    constexpr std::string_view begin = "-----BEGIN ";
    for (std::size_t at = text.find(begin); at != std::string_view::npos;
         at = text.find(begin, at + 1)) {
        const std::size_t label_start = at + begin.size();
        const std::size_t label_end = text.find("-----", label_start);
        if (label_end == std::string_view::npos) return false;
        const std::string_view label = text.substr(label_start, label_end - label_start);
        if (label.size() > 40 || label.find('\n') != std::string_view::npos) continue;
        if (!label.ends_with("PRIVATE KEY") && !label.ends_with("PRIVATE KEY BLOCK")) continue;
        std::size_t line = past_line_ends(text, label_end + 5);
        // Headers: `Name: value` lines, then (PGP) an empty line.
        for (int headers = 0; headers < 8 && line < text.size(); ++headers) {
            const std::size_t end = std::min(text.find_first_of("\r\n", line), text.size());
            const std::string_view content = text.substr(line, end - line);
            if (content.find(": ") == std::string_view::npos) break;
            line = past_line_ends(text, end);
        }
        std::size_t body = line;
        while (body < text.size() && is_base64(text[body]))
            ++body;
        if (body - line >= 40) return true;
    }
    return false;
}

// `"name"` then `:` then a string value, optionally `"value"` exactly; true when found with a
// value that is not empty.
bool has_json_member(std::string_view text, std::string_view name,
                     std::string_view value = {}) noexcept {
    for (std::size_t at = text.find(name); at != std::string_view::npos;
         at = text.find(name, at + 1)) {
        std::size_t i = at + name.size();
        if (at == 0 || text[at - 1] != '"' || i >= text.size() || text[i] != '"') continue;
        ++i;
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t'))
            ++i;
        if (i >= text.size() || text[i] != ':') continue;
        ++i;
        while (i < text.size() &&
               (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
            ++i;
        if (i >= text.size() || text[i] != '"') continue;
        const std::string_view rest = text.substr(i + 1);
        if (value.empty()) {
            if (!rest.empty() && rest.front() != '"') return true;
        } else if (rest.starts_with(value) && rest.substr(value.size()).starts_with("\"")) {
            return true;
        }
    }
    return false;
}

// `aws_secret_access_key = <40 characters>` in any case and spelling (AWS_SECRET_ACCESS_KEY=,
// "SecretAccessKey": "..."), the value of the shape AWS gives: 40 base64 characters.
bool has_aws_secret_key(std::string_view text) noexcept {
    for (std::size_t at = 0; at + 15 < text.size(); ++at) {
        if (lower_char(text[at]) != 's') continue;
        std::size_t i = at;
        bool named = true;
        for (std::string_view word : {"secret", "access", "key"}) {
            if (i < text.size() && (text[i] == '_' || text[i] == '-') && word != "secret") ++i;
            for (char c : word) {
                if (i >= text.size() || lower_char(text[i]) != c) {
                    named = false;
                    break;
                }
                ++i;
            }
            if (!named) break;
        }
        if (!named) continue;
        bool assigned = false;
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '"' ||
                                   text[i] == '\'' || text[i] == ':' || text[i] == '=')) {
            assigned = assigned || text[i] == ':' || text[i] == '=';
            ++i;
        }
        std::size_t end = i;
        while (end < text.size() && is_base64(text[end]) && text[end] != '=')
            ++end;
        if (assigned && end - i == 40 && !text.substr(i, 40).ends_with("EXAMPLEKEY")) return true;
    }
    return false;
}

}  // namespace

secret_kind recognise(std::string_view head) noexcept {
    if (head.starts_with("PuTTY-User-Key-File-") &&
        head.find("\nPrivate-Lines:") != std::string_view::npos) {
        return secret_kind::putty_key;
    }
    if (has_pem_private_key(head)) return secret_kind::pem_private_key;
    if (has_json_member(head, "type", "service_account") && has_json_member(head, "private_key"))
        return secret_kind::gcp_service_account;
    if (has_json_member(head, "type", "authorized_user") && has_json_member(head, "refresh_token"))
        return secret_kind::gcp_user_credentials;
    if (has_aws_secret_key(head)) return secret_kind::aws_secret_key;
    // AWS's documentation key id (AKIAIOSFODNN7EXAMPLE) is in many a README. Each prefix's
    // places are looked at once: a head full of such ids costs one pass, not one a token.
    if (base::has_issuer_token(head, "EXAMPLE")) return secret_kind::issuer_token;
    return secret_kind::none;
}

}  // namespace cordon::sandbox
