// guard.h - the guard lines of the exercises (issue 35): after a student's region, a line that stops
// the build when the region has replaced a name that the code after it calls.
//
// REGION_GUARD(witness_now) compiles only when `witness_now`, looked up where the line is, is the one
// entity ::witness_now: a region that declares a local of that name (in any form: `auto f{...}`,
// a structured binding, a parenthesised declarator) makes the address a run-time value, one that
// adds an overload makes `&witness_now` ambiguous, and either is an error of the compiler, not of a
// reading of the text. A same-signature definition is a redefinition (or, in the library build, a
// second definition at the link). For a function template write the specialization the code calls,
// REGION_GUARD(random_vector<float>): a second template of which that names one specialization makes
// it ambiguous (one with a further parameter that only the call's arguments deduce does not).
// REGION_GUARD_TYPE(Verdict): the class the code after the region uses is the library's.
// What it cannot see: a name that is not on a guard line, a template that the guard's form does not
// reach (above), and a local variable (a buffer, n), which has no :: twin to compare with; what
// refuses those is tools/exercises.py's reading of the text (see its docstring).
#pragma once
#include <type_traits>

template <auto A, auto B>
inline constexpr bool lab_same_entity = false;
template <auto A>
inline constexpr bool lab_same_entity<A, A> = true;

#define REGION_GUARD(fn_) \
    static_assert(::lab_same_entity<&fn_, &::fn_>, "the region redefines, overloads or hides " #fn_)
#define REGION_GUARD_TYPE(type_) \
    static_assert(::std::is_same<type_, ::type_>::value, "the region redefines or hides " #type_)
