// Early-return helpers for absl::Status and absl::StatusOr.
#ifndef ROOST_UTIL_STATUS_MACROS_H_
#define ROOST_UTIL_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns from the enclosing function if `expr` is not OK.
#define ROOST_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::absl::Status _roost_status = (expr);         \
    if (!_roost_status.ok()) return _roost_status; \
  } while (0)

#define ROOST_CONCAT_INNER_(a, b) a##b
#define ROOST_CONCAT_(a, b) ROOST_CONCAT_INNER_(a, b)

// Evaluates `rexpr` (a StatusOr); returns its status if not OK, else moves its
// value into `lhs`, which may be a declaration.
#define ROOST_ASSIGN_OR_RETURN(lhs, rexpr)                                     \
  ROOST_ASSIGN_OR_RETURN_IMPL_(ROOST_CONCAT_(_roost_statusor_, __LINE__), lhs, \
                               rexpr)
#define ROOST_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                 \
  if (!tmp.ok()) return std::move(tmp).status();      \
  lhs = std::move(tmp).value()

#endif  // ROOST_UTIL_STATUS_MACROS_H_
