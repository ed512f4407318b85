#include "util/cli.h"

#include <sysexits.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>

#include "util/str_cat.h"

namespace roost {

// CLI11's AsSizeValue reads the unit (b, k, M, G, T, P with or without "i"
// and "B", any case, all powers of 1024); around it we insist on leading
// digits (it takes "G" alone as 1 G and passes "-1" through) and parse what
// it makes strictly, so that nothing wraps.
absl::StatusOr<uint64_t> ParseSize(const std::string& text) {
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        StrCat("bad size \"", text,
               "\" (a whole number of bytes up to 2^50, optionally with k, M "
               "or G)"));
  };
  if (text.empty() || text[0] < '0' || text[0] > '9') return bad();
  std::string bytes = text;
  try {
    if (!CLI::AsSizeValue(/*kb_is_1000=*/false)(bytes).empty()) return bad();
  } catch (const CLI::Error&) {  // overflow, a fraction, an unknown unit
    return bad();
  }
  uint64_t n = 0;
  const char* end = bytes.data() + bytes.size();
  auto [rest, ec] = std::from_chars(bytes.data(), end, n);
  constexpr uint64_t kMaxSize = uint64_t{1} << 50;
  if (ec != std::errc() || rest != end || n > kMaxSize) return bad();
  return n;
}

CLI::Validator SizeValue() {
  // No description: --help shows the option's own type name (BYTES), not
  // a ":SIZE" after it.
  return CLI::Validator(
      [](std::string& value) -> std::string {
        // Plain digits are left to the option's own checks and conversion.
        if (value.find_first_not_of("0123456789") == std::string::npos) {
          return {};
        }
        absl::StatusOr<uint64_t> bytes = ParseSize(value);
        if (!bytes.ok()) return std::string(bytes.status().message());
        value = std::to_string(*bytes);
        return {};
      },
      /*validator_desc=*/"", /*validator_name=*/"SIZE");
}

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string_view WithoutDashes(std::string_view s) {
  while (!s.empty() && s.front() == '-') s.remove_prefix(1);
  return s;
}

// The optimal string alignment distance: Levenshtein's edits plus the swap
// of two neighbours ("inptu" is one edit from "input"), each cost 1.
size_t EditDistance(std::string_view a, std::string_view b) {
  // Three rows of the table: i-2, i-1, i.
  std::vector<size_t> before(b.size() + 1), last(b.size() + 1),
      row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) last[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({last[j] + 1, row[j - 1] + 1, last[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], before[j - 2] + 1);
      }
    }
    std::swap(before, last);
    std::swap(last, row);
  }
  return last[b.size()];
}

// Thrown by --version given with a subcommand or a stray argument.
class VersionNotAlone : public CLI::ParseError {
 public:
  explicit VersionNotAlone(std::string message)
      : CLI::ParseError("VersionNotAlone", std::move(message), EX_USAGE) {}
};

// The root of `app`'s tree of subcommands: the program.
const CLI::App* Root(const CLI::App* app) {
  while (app->get_parent() != nullptr) app = app->get_parent();
  return app;
}

// The named subcommands of `app` (CLI11 keeps option groups among them,
// without names).
std::vector<CLI::App*> NamedSubcommands(CLI::App* app) {
  return app->get_subcommands(
      [](CLI::App* sub) { return !sub->get_name().empty(); });
}

// Every flag name `app` takes ("--input", "-i").
void AddFlagNames(CLI::App* app, std::vector<std::string>* out) {
  for (const CLI::Option* option :
       app->get_options([](const CLI::Option*) { return true; })) {
    for (const std::string& name : option->get_lnames()) {
      out->push_back("--" + name);
    }
    for (const std::string& name : option->get_snames()) {
      out->push_back("-" + name);
    }
  }
}

// An argument that no option or subcommand took, and where: the command
// whose arguments it came among.
struct Stray {
  CLI::App* app;
  std::string arg;
};

// The first argument of `app`, then of the subcommands it parsed, that
// nothing took.
std::optional<Stray> FindStray(CLI::App* app) {
  for (const std::string& arg : app->remaining(/*recurse=*/false)) {
    return Stray{app, arg};
  }
  for (CLI::App* sub : app->get_subcommands()) {
    if (auto stray = FindStray(sub)) return stray;
  }
  return std::nullopt;
}

bool IsFlag(std::string_view arg) { return arg.size() > 1 && arg[0] == '-'; }

// What to say of `stray`: "unknown flag --inptu (did you mean --input?)",
// and which subcommand's ("build: ...").
std::string DescribeStray(const Stray& stray) {
  CLI::App* app = stray.app;
  // The command it came with: the deepest subcommand parsed that hands what
  // it does not take to `app`.
  const CLI::App* command = app;
  for (CLI::App* sub = app; !sub->get_subcommands().empty();) {
    sub = sub->get_subcommands().front();
    if (!sub->get_fallthrough()) break;
    command = sub;
  }
  const std::string where =
      command->get_parent() != nullptr ? StrCat(command->get_name(), ": ") : "";
  if (IsFlag(stray.arg)) {
    const std::string flag = stray.arg.substr(0, stray.arg.find('='));
    // The flags that could have been meant: this command's, those of the
    // subcommands it parsed (which fall through to it), and its parents'
    // when it falls through to them.
    std::vector<std::string> names;
    AddFlagNames(app, &names);
    for (CLI::App* sub = app; !sub->get_subcommands().empty();) {
      sub = sub->get_subcommands().front();
      AddFlagNames(sub, &names);
    }
    for (CLI::App* up = app; up->get_fallthrough() && up->get_parent();) {
      up = up->get_parent();
      AddFlagNames(up, &names);
    }
    if (auto near = ClosestMatch(flag, names)) {
      return StrCat(where, "unknown flag ", flag, " (did you mean ", *near,
                    "?)");
    }
    // A program-wide flag given after a subcommand that does not take it.
    for (const CLI::App* up = app->get_parent(); up != nullptr;
         up = up->get_parent()) {
      if (up->get_option_no_throw(flag) != nullptr) {
        return StrCat(where, "unknown flag ", flag, " (", flag, " is ",
                      up->get_name(), "'s: give it before ", app->get_name(),
                      ")");
      }
    }
    return StrCat(where, "unknown flag ", flag);
  }
  const std::vector<CLI::App*> subcommands = NamedSubcommands(app);
  if (!subcommands.empty() && app->get_subcommands().empty()) {
    std::vector<std::string> names;
    for (const CLI::App* sub : subcommands) names.push_back(sub->get_name());
    if (auto near = ClosestMatch(stray.arg, names)) {
      return StrCat(where, "unknown subcommand \"", stray.arg,
                    "\" (did you mean ", *near, "?)");
    }
    std::string list;
    for (const std::string& name : names) {
      list += list.empty() ? name : ", " + name;
    }
    return StrCat(where, "unknown subcommand \"", stray.arg, "\" (one of ",
                  list, ")");
  }
  return StrCat(where, "unexpected argument \"", stray.arg, "\"");
}

void PrintUsageError(const CLI::App& app, std::string_view message) {
  const std::string text = StrCat(Root(&app)->get_name(), ": ", message,
                                  "\nRun with --help for more information.\n");
  std::fflush(stdout);
  std::fputs(text.c_str(), stderr);
}

}  // namespace

std::optional<std::string> ClosestMatch(
    std::string_view word, const std::vector<std::string>& candidates) {
  const std::string w = Lower(WithoutDashes(word));
  if (w.empty()) return std::nullopt;
  const size_t max_edits = w.size() <= 4 ? 1 : w.size() <= 8 ? 2 : 3;
  std::optional<std::string> best;
  size_t best_distance = max_edits + 1;
  std::optional<std::string> only_prefix;
  size_t prefixes = 0;
  for (const std::string& candidate : candidates) {
    const std::string c = Lower(WithoutDashes(candidate));
    // A one-letter flag is one edit from any two-letter word: no guess.
    if (c.size() == 1 && w.size() > 1) continue;
    const size_t d = EditDistance(w, c);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
    if (c.size() > w.size() && c.compare(0, w.size(), w) == 0) {
      ++prefixes;
      only_prefix = candidate;
    }
  }
  if (best) return best;
  if (prefixes == 1 && w.size() >= 3) return only_prefix;
  return std::nullopt;
}

void AddVersionFlag(CLI::App& app, std::string line, std::string hint) {
  CLI::App* root = &app;
  app.add_flag_callback(
         "--version",
         // CLI11 runs this once the whole command line is read, before it
         // checks for required flags or stray arguments.
         [root, line, hint] {
           if (root->get_subcommands().empty() &&
               root->remaining(/*recurse=*/true).empty()) {
             throw CLI::CallForVersion(line, 0);
           }
           const std::string& program = root->get_name();
           throw VersionNotAlone(
               StrCat("--version prints ", program,
                      "'s version and takes no subcommand or argument (",
                      program, " --version)", hint.empty() ? "" : "; ", hint));
         },
         "Print the program's version and exit")
      ->configurable(false);
}

int ReportParseError(CLI::App& app, const CLI::ParseError& error) {
  if (error.get_exit_code() == 0) return app.exit(error);  // --help
  if (dynamic_cast<const VersionNotAlone*>(&error) == nullptr) {
    if (std::optional<Stray> stray = FindStray(&app)) {
      PrintUsageError(app, DescribeStray(*stray));
      return EX_USAGE;
    }
  }
  PrintUsageError(app, error.what());
  return EX_USAGE;
}

std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return ReportParseError(app, e);
  }
  return std::nullopt;
}

}  // namespace roost
