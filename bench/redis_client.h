// What bench/redis_load.cc needs around hiredis: contexts and replies owned
// by unique_ptrs, replies and errors as messages show them, and a
// non-blocking context's connect and lock-step call with a deadline (hiredis
// has both only for blocking contexts).
//
// Example:
//   std::string error;
//   Context c = ConnectNonBlock({"127.0.0.1", 6379}, 10, &error);
//   Reply pong;
//   redisAppendCommand(c.get(), "PING");
//   if (c == nullptr || !AwaitReply(c.get(), 10, &pong, &error)) {
//     ... error says why ...
//   }
//   ... IsString(*pong, REDIS_REPLY_STATUS, "PONG") ...
#ifndef ROOST_BENCH_REDIS_CLIENT_H_
#define ROOST_BENCH_REDIS_CLIENT_H_

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <memory>
#include <string>
#include <string_view>

#include "bench/closed_loop.h"

namespace roost::bench {

struct ContextFree {
  void operator()(redisContext* c) const { redisFree(c); }
};
struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
// A hiredis connection, and a reply; both freed with hiredis's own calls.
using Context = std::unique_ptr<redisContext, ContextFree>;
using Reply = std::unique_ptr<redisReply, ReplyFree>;

// `seconds` as hiredis takes a timeout.
timeval Timeval(double seconds);

// Up to 48 bytes of `s`, quoted, with what is not printable escaped.
std::string Excerpt(std::string_view s);

// A reply as an error message shows it: "simple string \"OK\"", "array 3",
// "nil"...
std::string Describe(const redisReply& r);

// Whether `r` is of `type` (a string type) and holds `text`.
bool IsString(const redisReply& r, int type, std::string_view text);

// What a context's error says, as redis_load words it.
std::string ContextError(const redisContext& c);

// Bytes read on `c` and not parsed into a reply yet; valid until the next
// call on `c`.
std::string_view Unparsed(const redisContext& c);

// A non-blocking context connected to `e` within `timeout_s` seconds
// (hiredis sets TCP_NODELAY); null (and *error) when it is not.
Context ConnectNonBlock(const Loopback& e, double timeout_s,
                        std::string* error);

// Writes what was appended to the non-blocking `c` and waits up to
// `timeout_s` seconds for the next reply; false (and *error) without one.
bool AwaitReply(redisContext* c, double timeout_s, Reply* reply,
                std::string* error);

}  // namespace roost::bench

#endif  // ROOST_BENCH_REDIS_CLIENT_H_
