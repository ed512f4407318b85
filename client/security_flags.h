// The command-line flags of a client's channel security, for roost-get and
// roost-admin: apart from client/rpc_util.h so that the files that only make
// channels and calls do not compile CLI11 (tens of seconds a file).
//
// Example:
//   CLI::App app{"roost-get: ..."};
//   ChannelSecurity security;
//   AddSecurityOptions(&app, &security);
//   ... parse ...
//   auto channel = MakeChannel(addr, security);  // client/rpc_util.h
//
// Thread-safety: none needed; it runs in main() before any thread.
#ifndef ROOST_CLIENT_SECURITY_FLAGS_H_
#define ROOST_CLIENT_SECURITY_FLAGS_H_

#include <CLI/CLI.hpp>

#include "client/rpc_util.h"

namespace roost {

// Adds --tls, --tls-ca, --tls-cert, --tls-key, --tls-server-name, --token
// (or $ROOST_TOKEN) and --token-file (read as it is parsed) to `app`, in a
// group "Security".
void AddSecurityOptions(CLI::App* app, ChannelSecurity* security);

}  // namespace roost

#endif  // ROOST_CLIENT_SECURITY_FLAGS_H_
