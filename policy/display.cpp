// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "policy/display.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/utf8.hpp"
#include "policy/unicode_classes.hpp"

namespace cordon::policy {

namespace {

// More ASCII spaces in a row than this are counted.
constexpr std::size_t spaces_kept = 8;
// A run of blanks with more groups than this is summarised.
constexpr std::size_t groups_kept = 4;
// More combining marks in a row than this are escaped.
constexpr std::size_t marks_kept = 2;

enum class kind {
    printable,  // prints as itself
    space,      // the ASCII space: prints as itself, counted in long runs
    control,    // C0, DEL, C1
    hidden,     // blank or invisible (unicode_classes.hpp)
    mark,       // combining mark: shown as itself or escaped, by its neighbours
    byte,       // not part of valid UTF-8
};

struct item {
    std::string_view raw;
    std::uint32_t value = 0;  // the code point, or the byte
    kind what = kind::printable;
    bool escaped = false;
};

std::vector<item> items_of(std::string_view text) {
    std::vector<item> items;
    items.reserve(text.size());
    while (!text.empty()) {
        item next;
        const auto byte = static_cast<unsigned char>(text.front());
        std::size_t length = 1;
        next.value = byte;
        if (byte < 0x80) {
            next.what = byte == ' '                   ? kind::space
                        : byte < 0x20 || byte == 0x7F ? kind::control
                                                      : kind::printable;
        } else if (char32_t value = 0; (length = base::utf8_sequence_at(text, 0, value)) != 0) {
            next.value = value;
            next.what = value <= 0x9F               ? kind::control
                        : blank_or_invisible(value) ? kind::hidden
                        : combining_mark(value)     ? kind::mark
                                                    : kind::printable;
        } else {
            length = 1;
            next.what = kind::byte;
        }
        next.raw = text.substr(0, length);
        next.escaped =
            next.what == kind::control || next.what == kind::hidden || next.what == kind::byte;
        items.push_back(next);
        text.remove_prefix(length);
    }
    // Marks show as themselves only a few at a time, on a character that shows as itself.
    for (std::size_t i = 0; i < items.size();) {
        if (items[i].what != kind::mark) {
            ++i;
            continue;
        }
        std::size_t end = i;
        while (end < items.size() && items[end].what == kind::mark)
            ++end;
        const bool on_visible = i > 0 && items[i - 1].what == kind::printable;
        for (std::size_t k = i; k < end; ++k)
            items[k].escaped = !on_visible || end - i > marks_kept;
        i = end;
    }
    return items;
}

// `value` in hexadecimal, at least `width` digits.
std::string hex(std::uint32_t value, std::size_t width, bool upper) {
    const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    std::string out;
    do {
        out.insert(out.begin(), digits[value & 0xFu]);
        value >>= 4;
    } while (value != 0);
    if (out.size() < width) out.insert(0, width - out.size(), '0');
    return out;
}

// How one item is written.
std::string written(const item& one) {
    if (!one.escaped) return one.raw == "\\" ? std::string("\\\\") : std::string(one.raw);
    if (one.what == kind::byte) return "\\x" + hex(one.value, 2, false);
    if (one.value == '\t') return "\\t";
    if (one.value == '\n') return "\\n";
    if (one.value == '\r') return "\\r";
    if (one.value < 0x80) return "\\x" + hex(one.value, 2, false);
    return "\\u{" + hex(one.value, 4, true) + "}";
}

// How one item is named in a summarised run.
std::string named(const item& one) {
    return one.what == kind::byte ? "x" + hex(one.value, 2, true) : hex(one.value, 4, true);
}

bool blank(const item& one) {
    return one.escaped || one.what == kind::space;
}

// The run of blanks items[first, last), compactly; `next` is the item after it, or null.
std::string run_written(const std::vector<item>& items, std::size_t first, std::size_t last,
                        const item* next) {
    struct group {
        const item* one;
        std::size_t count;
    };
    std::vector<group> groups;
    for (std::size_t i = first; i < last; ++i) {
        if (!groups.empty() && groups.back().one->raw == items[i].raw) {
            ++groups.back().count;
        } else {
            if (groups.size() == groups_kept) {
                groups.push_back({&items[i], 1});  // one too many: summarised below
                break;
            }
            groups.push_back({&items[i], 1});
        }
    }
    std::string out;
    if (groups.size() > groups_kept) {
        std::vector<std::string> names;
        bool more = false;
        for (std::size_t i = first; i < last; ++i) {
            std::string name = named(items[i]);
            if (std::find(names.begin(), names.end(), name) != names.end()) continue;
            if (names.size() == groups_kept) {
                more = true;
                break;
            }
            names.push_back(std::move(name));
        }
        out = "\\u{";
        for (std::size_t i = 0; i < names.size(); ++i)
            out += (i == 0 ? "" : "|") + names[i];
        return out + (more ? "|\u2026" : "") + "}{" + std::to_string(last - first) + "}";
    }
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const group& each = groups[g];
        if (each.one->what == kind::space) {
            out += each.count > spaces_kept ? "\\x20{" + std::to_string(each.count) + "}"
                                            : std::string(each.count, ' ');
            continue;
        }
        out += written(*each.one);
        const bool brace_follows = g + 1 == groups.size() && next != nullptr && next->raw == "{";
        if (each.count > 1 || brace_follows) out += "{" + std::to_string(each.count) + "}";
    }
    return out;
}

}  // namespace

std::string shown_safely(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const item& one : items_of(text))
        out += written(one);
    return out;
}

std::string shown_compactly(std::string_view text) {
    const std::vector<item> items = items_of(text);
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < items.size();) {
        if (!blank(items[i])) {
            out += written(items[i]);
            ++i;
            continue;
        }
        std::size_t end = i;
        while (end < items.size() && blank(items[end]))
            ++end;
        out += run_written(items, i, end, end < items.size() ? &items[end] : nullptr);
        i = end;
    }
    return out;
}

bool shown_whole(std::string_view text) {
    const std::vector<item> items = items_of(text);
    std::size_t spaces = 0;
    std::size_t width = 0;
    for (const item& one : items) {
        if (one.escaped) return false;
        spaces = one.what == kind::space ? spaces + 1 : 0;
        if (spaces > spaces_kept) return false;
        width += one.raw == "\\" ? 2 : one.raw.size();
    }
    return width <= display_bound;
}

}  // namespace cordon::policy
