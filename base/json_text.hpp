// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The one way cordon turns a JSON value into text, and the way back for strings that held bytes.
//
// A JSON string is Unicode, but what cordon puts in one often is not: a command, a path, a
// command's output are bytes, and nlohmann's dump() throws type_error 316 on the first byte that
// is not UTF-8. dump_json() never throws on bytes. It writes every string (object keys included)
// through escape_invalid_utf8(), which keeps valid UTF-8 as it is and maps each byte that is not
// part of a well-formed UTF-8 sequence (Unicode 15, table 3-7: no overlong forms, no surrogates,
// nothing past U+10FFFF) to one code point of the private-use plane 16:
//
//     byte 0xNN (0x80-0xFF)  <->  U+10FE00 + 0xNN, that is U+10FE80-U+10FEFF
//
// A valid U+10FE80-U+10FEFF in the input is escaped too, byte by byte (its four bytes become four
// escape code points), so the escape is unambiguous: unescape_invalid_utf8() turns every code
// point of that range back into its byte and leaves everything else alone, and
// unescape_invalid_utf8(escape_invalid_utf8(bytes)) == bytes for any bytes. Why this scheme
// (docs/contract.md, "Bytes that are not UTF-8"): the output stays valid UTF-8 with no lone
// surrogate and no noncharacter, so strict parsers (nlohmann, I-JSON) read it; a string that is
// valid UTF-8 and holds no code point of that range is written byte for byte as before; and the
// type of every field stays a string.
//
// Readers of JSON that cordon wrote (the session log) or that names what cordon reported (a tool
// call's arguments) call unescape_json_strings() / unescape_invalid_utf8() to get the bytes back.
//
// The fuzz targets call these functions by name: keep them.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace cordon::base {

// Byte 0xNN (0x80-0xFF) is written as the code point escaped_byte_base + 0xNN.
inline constexpr char32_t escaped_byte_base = 0x10FE00;

// True when escape_invalid_utf8(bytes) differs from bytes: a byte that is not part of
// well-formed UTF-8, or a code point of the escape range.
[[nodiscard]] bool needs_escape(std::string_view bytes) noexcept;
// `bytes` as valid UTF-8, escaped as above.
[[nodiscard]] std::string escape_invalid_utf8(std::string_view bytes);
// The bytes an escaped string stands for. Anything that is not an escape code point is copied as
// it is (also bytes that are not UTF-8: the function is total).
[[nodiscard]] std::string unescape_invalid_utf8(std::string_view text);

// `value` as JSON text (nlohmann's dump with `indent`), every string and key escaped: it never
// throws on bytes (only std::bad_alloc). Strings that need no escape come out exactly as
// nlohmann::json::dump() writes them.
[[nodiscard]] std::string dump_json(const nlohmann::json& value, int indent = -1);
// Every string and key of `value` unescaped in place. Iterative: a deeply nested value read from
// a file does not exhaust the stack here.
void unescape_json_strings(nlohmann::json& value);

}  // namespace cordon::base
