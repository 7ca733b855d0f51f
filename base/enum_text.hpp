// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The one way an enumeration is spelled as text and read back: a constant table of
// {enumerator, text} pairs per enumeration, checked while compiling.
//
//   constexpr auto mode_texts = base::enum_texts<sandbox_mode>({
//       {sandbox_mode::read_only, "read-only"},
//       {sandbox_mode::workspace_write, "workspace-write"},
//       {sandbox_mode::danger_full_access, "danger-full-access"},
//   });
//   mode_texts.text(sandbox_mode::read_only);        // "read-only"
//   mode_texts.parse("workspace-write");             // sandbox_mode::workspace_write
//   mode_texts.parse("full");                        // std::nullopt
//
// The table is checked when it is built, so a wrong table does not compile:
// - it names every enumerator: its size equals the number of enumerators the compiler knows the
//   enumeration to have (`enumerator_count<E>`), so an enumerator added to the enumeration and
//   forgotten here stops the build, wherever in the enumeration it was added;
// - no enumerator and no text appears twice, and no text is empty.
//
// How the enumerators are counted: the compiler's own spelling of a function template whose
// argument is `static_cast<E>(i)` (`__PRETTY_FUNCTION__`, GCC and Clang) names the enumerator when
// one has that value and shows a cast, `(E)3`, when none has. Each value from 0 to
// `max_enumerator_value` is asked. This is the technique of magic_enum, reduced to the count. An
// enumeration with a value outside [0, max_enumerator_value] is not counted whole, and its table
// then does not compile: such an enumeration is spelled by hand, with a switch.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

namespace cordon::base {

// The largest value asked when counting an enumeration's enumerators.
inline constexpr int max_enumerator_value = 63;

namespace detail {

template <auto Value>
constexpr const char* spelling_of() noexcept {
    return __PRETTY_FUNCTION__;
}

// Whether the compiler spells `Value` as an enumerator rather than as a cast: the argument's
// spelling is the text after the last '=' up to the closing ']' (GCC: "[with auto Value = E::a]",
// Clang: "[Value = E::a]"), and a cast ends in ")" and digits — "(E)3" — where an enumerator ends
// in a name (an anonymous namespace, "(anonymous namespace)::e::a1", ends in a name too).
constexpr bool names_an_enumerator(std::string_view spelling) noexcept {
    const std::size_t close = spelling.rfind(']');
    const std::size_t equals = spelling.rfind('=', close);
    if (close == std::string_view::npos || equals == std::string_view::npos) return false;
    std::string_view argument = spelling.substr(equals + 1, close - equals - 1);
    while (!argument.empty() && argument.back() >= '0' && argument.back() <= '9') {
        argument.remove_suffix(1);
    }
    if (!argument.empty() && argument.back() == '-') argument.remove_suffix(1);
    return argument.empty() || argument.back() != ')';
}

template <typename E, int... Values>
constexpr std::size_t count_enumerators(std::integer_sequence<int, Values...> /*values*/) noexcept {
    return (std::size_t{0} + ... +
            (names_an_enumerator(spelling_of<static_cast<E>(Values)>()) ? std::size_t{1}
                                                                        : std::size_t{0}));
}

// Called only when a table is wrong: not constexpr, so that the table's constant evaluation stops
// here and the compiler names this function in its error.
inline void enum_table_names_an_enumerator_or_a_text_twice_or_has_an_empty_text() {}

}  // namespace detail

// How many enumerators the scoped enumeration E declares with a value in [0, max_enumerator_value].
// E is a scoped enumeration: each value of its underlying type may be cast to it, where for an
// unscoped one without a fixed type the cast of a value beyond its enumerators is unspecified.
template <typename E>
requires(std::is_enum_v<E> &&
         !std::is_convertible_v<E, std::underlying_type_t<E>>) inline constexpr std::size_t
    enumerator_count =
        detail::count_enumerators<E>(std::make_integer_sequence<int, max_enumerator_value + 1>{});

template <typename E>
struct enum_text_entry {
    E value;
    std::string_view text;
};

// A checked table, made by `enum_texts`; `text` and `parse` walk it (the tables are a handful of
// entries).
template <typename E, std::size_t N>
class enum_text_table {
public:
    static_assert(std::is_enum_v<E>);

    consteval explicit enum_text_table(const std::array<enum_text_entry<E>, N>& entries)
        : entries_(entries) {
        for (std::size_t i = 0; i < N; ++i) {
            if (entries_[i].text.empty()) {
                detail::enum_table_names_an_enumerator_or_a_text_twice_or_has_an_empty_text();
            }
            for (std::size_t j = i + 1; j < N; ++j) {
                if (entries_[i].value == entries_[j].value ||
                    entries_[i].text == entries_[j].text) {
                    detail::enum_table_names_an_enumerator_or_a_text_twice_or_has_an_empty_text();
                }
            }
        }
    }

    // The text of `value`; an empty view for a value no enumerator has (a cast from a number).
    [[nodiscard]] constexpr std::string_view text(E value) const noexcept {
        for (const enum_text_entry<E>& entry : entries_) {
            if (entry.value == value) return entry.text;
        }
        return {};
    }

    // The enumerator spelled exactly `text`, or nothing.
    [[nodiscard]] constexpr std::optional<E> parse(std::string_view text) const noexcept {
        for (const enum_text_entry<E>& entry : entries_) {
            if (entry.text == text) return entry.value;
        }
        return std::nullopt;
    }

    [[nodiscard]] constexpr const std::array<enum_text_entry<E>, N>& entries() const noexcept {
        return entries_;
    }

private:
    std::array<enum_text_entry<E>, N> entries_;
};

// The table for E: one entry per enumerator, checked as the header says.
template <typename E, std::size_t N>
consteval enum_text_table<E, N> enum_texts(const enum_text_entry<E> (&entries)[N]) {
    static_assert(N == enumerator_count<E>,
                  "an enumeration's text table names each of its enumerators exactly once");
    std::array<enum_text_entry<E>, N> copy{};
    for (std::size_t i = 0; i < N; ++i)
        copy[i] = entries[i];
    return enum_text_table<E, N>(copy);
}

}  // namespace cordon::base
