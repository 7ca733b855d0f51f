// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "base/json_text.hpp"

#include <cstdint>
#include <utility>
#include <vector>

#include "base/utf8.hpp"

namespace cordon::base {

using nlohmann::json;

namespace {

constexpr char32_t first_escape = escaped_byte_base + 0x80;
constexpr char32_t last_escape = escaped_byte_base + 0xFF;

unsigned char byte_at(std::string_view text, std::size_t i) noexcept {
    return static_cast<unsigned char>(text[i]);
}

bool is_escape(char32_t code_point) noexcept {
    return code_point >= first_escape && code_point <= last_escape;
}

// The escape code point of `byte` (0x80-0xFF), as UTF-8: F4 8F BA|BB 80-BF.
void append_escape(std::string& out, unsigned char byte) {
    const char32_t code_point = escaped_byte_base + byte;
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
}

// Whether any string or key of `value` needs an escape. Recursive, as dump() itself is.
bool holds_bytes_to_escape(const json& value) {
    switch (value.type()) {
        case json::value_t::string:
            return needs_escape(value.get_ref<const std::string&>());
        case json::value_t::array:
            for (const auto& element : value) {
                if (holds_bytes_to_escape(element)) return true;
            }
            return false;
        case json::value_t::object:
            for (const auto& [key, element] : value.items()) {
                if (needs_escape(key) || holds_bytes_to_escape(element)) return true;
            }
            return false;
        default:
            return false;
    }
}

json escaped_copy(const json& value) {
    switch (value.type()) {
        case json::value_t::string:
            return escape_invalid_utf8(value.get_ref<const std::string&>());
        case json::value_t::array: {
            json out = json::array();
            for (const auto& element : value)
                out.push_back(escaped_copy(element));
            return out;
        }
        case json::value_t::object: {
            json out = json::object();
            for (const auto& [key, element] : value.items())
                out[escape_invalid_utf8(key)] = escaped_copy(element);
            return out;
        }
        default:
            return value;
    }
}

}  // namespace

bool needs_escape(std::string_view bytes) noexcept {
    for (std::size_t i = 0; i < bytes.size();) {
        if (byte_at(bytes, i) < 0x80) {
            ++i;
            continue;
        }
        char32_t code_point = 0;
        const std::size_t length = utf8_sequence_at(bytes, i, code_point);
        if (length == 0 || is_escape(code_point)) return true;
        i += length;
    }
    return false;
}

std::string escape_invalid_utf8(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    for (std::size_t i = 0; i < bytes.size();) {
        char32_t code_point = 0;
        const std::size_t length = utf8_sequence_at(bytes, i, code_point);
        if (length == 0) {
            append_escape(out, byte_at(bytes, i));
            ++i;
        } else if (is_escape(code_point)) {
            for (std::size_t k = 0; k < length; ++k)
                append_escape(out, byte_at(bytes, i + k));
            i += length;
        } else {
            out.append(bytes.substr(i, length));
            i += length;
        }
    }
    return out;
}

std::string unescape_invalid_utf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        char32_t code_point = 0;
        const std::size_t length = utf8_sequence_at(text, i, code_point);
        if (length == 0) {
            out += text[i];
            ++i;
        } else if (is_escape(code_point)) {
            out += static_cast<char>(static_cast<std::uint8_t>(code_point - escaped_byte_base));
            i += length;
        } else {
            out.append(text.substr(i, length));
            i += length;
        }
    }
    return out;
}

std::string dump_json(const json& value, int indent) {
    // replace never applies to what escaped_copy() wrote (it is valid UTF-8); it is there so that
    // this function cannot throw type_error whatever it is given.
    if (!holds_bytes_to_escape(value)) {
        return value.dump(indent, ' ', false, json::error_handler_t::replace);
    }
    return escaped_copy(value).dump(indent, ' ', false, json::error_handler_t::replace);
}

void unescape_json_strings(json& value) {
    std::vector<json*> pending{&value};
    while (!pending.empty()) {
        json& each = *pending.back();
        pending.pop_back();
        switch (each.type()) {
            case json::value_t::string: {
                auto& text = each.get_ref<std::string&>();
                if (needs_escape(text)) text = unescape_invalid_utf8(text);
                break;
            }
            case json::value_t::array:
                for (auto& element : each)
                    pending.push_back(&element);
                break;
            case json::value_t::object: {
                std::vector<std::string> renamed;
                for (const auto& [key, element] : each.items()) {
                    if (needs_escape(key)) renamed.push_back(key);
                }
                for (const auto& key : renamed) {
                    json moved = std::move(each[key]);
                    each.erase(key);
                    // Two keys that stand for the same bytes: the later one in key order wins,
                    // as a repeated key does when nlohmann parses an object.
                    each[unescape_invalid_utf8(key)] = std::move(moved);
                }
                for (auto& [key, element] : each.items())
                    pending.push_back(&element);
                break;
            }
            default:
                break;
        }
    }
}

}  // namespace cordon::base
