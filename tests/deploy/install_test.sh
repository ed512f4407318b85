#!/usr/bin/env bash
# `cmake --install` into a scratch prefix and `cpack -G DEB`: what each
# holds, that the installed binaries run, that the example config's keys
# are all roost-server's, and the package's control fields. The package is
# looked into with dpkg-deb, never installed. Both build what they install
# first: each runs with roost-admin taken out of the build directory, as
# after scripts/demo.sh (which builds the other three), and must bring it
# back. ctest runs this test alone (RUN_SERIAL): the other tests run that
# binary.
# Usage: tests/deploy/install_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
tmp=$(mktemp -d)
admin=$build/client/roost-admin
# A failed build leaves the build directory as it found it.
restore_admin() { [ -e "$admin" ] || mv "$tmp/roost-admin" "$admin" 2>/dev/null || true; }
trap 'restore_admin; rm -rf "$tmp"' EXIT
fail() { echo "install_test: $*" >&2; exit 1; }
# Takes roost-admin out of the build directory, as if it was never built.
unbuild_admin() {
  [ -x "$admin" ] || fail "$admin is not built"
  mv "$admin" "$tmp/roost-admin"
}
# After `$1`: roost-admin was built again.
admin_rebuilt() {
  [ -x "$admin" ] || fail "$1 did not build roost-admin"
  rm -f "$tmp/roost-admin"
}

prefix=$tmp/prefix
unbuild_admin
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; fail "cmake --install failed"; }
admin_rebuilt "cmake --install"
for f in bin/roost-server bin/roost-load bin/roost-get bin/roost-admin; do
  [ -x "$prefix/$f" ] || fail "$f not installed, or not executable"
done
for f in share/doc/roost/README.md share/doc/roost/operations.md share/doc/roost/copyright \
         share/doc/roost/operations/reference.md \
         share/doc/roost/deploy/README.md share/doc/roost/format/manifest.md \
         share/roost/server.toml lib/systemd/system/roost-server.service; do
  [ -f "$prefix/$f" ] || fail "$f not installed"
done
# The copyright file, in Debian's machine-readable format (DEP-5): a
# header paragraph, then Files paragraphs, each with Copyright and
# License, and the license's own paragraph.
copyright=$prefix/share/doc/roost/copyright
[ "$(head -n 1 "$copyright")" = \
  "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" ] ||
  fail "copyright: not a machine-readable copyright file: $(head -n 1 "$copyright")"
awk -v RS= '/^Files: \*\nCopyright: [0-9]+ .+\nLicense: Apache-2\.0$/ { files = 1 }
            /^License: Apache-2\.0\n .*\/usr\/share\/common-licenses\/Apache-2\.0/ { text = 1 }
            END { exit !(files && text) }' "$copyright" ||
  fail "copyright: no Files: * paragraph under Apache-2.0 with its license paragraph: $(cat "$copyright")"
unit=$prefix/lib/systemd/system/roost-server.service
grep -qx "ExecStart=$prefix/bin/roost-server --config /etc/roost/server.toml" \
  "$unit" || fail "the installed unit's ExecStart is not in $prefix/bin: $(grep ExecStart= "$unit")"

# The installed binaries run and say what they are.
for b in roost-server roost-load roost-get roost-admin; do
  out=$("$prefix/bin/$b" --version) || fail "$b --version exited $?"
  [[ $out =~ ^$b\ [0-9]+\.[0-9]+\.[0-9]+\ \(revision\ ([0-9a-f]{40}|unknown)\)$ ]] ||
    fail "$b --version printed: $out"
done
# Every key of the example config is a flag: the server gets past its
# options and stops at the data directory, before binding any port.
set +e
out=$("$prefix/bin/roost-server" --config "$prefix/share/roost/server.toml" \
      --data-dir "$tmp/no-such-dir" 2>&1)
rc=$?
set -e
[ $rc -eq 1 ] && [[ $out == *"$tmp/no-such-dir does not exist"* ]] ||
  fail "roost-server --config server.toml: exit $rc: $out"

# The Debian package, from the install rules above (which build the four
# binaries first: `cpack -G DEB` after the demo failed, "cannot find
# .../client/roost-admin").
unbuild_admin
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/package" \
  >"$tmp/cpack.log" 2>&1 ||
  { cat "$tmp/cpack.log" >&2; fail "cpack -G DEB failed"; }
admin_rebuilt "cpack -G DEB"
debs=("$tmp"/package/*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || fail "cpack made no single .deb"
deb=${debs[0]}
info=$(dpkg-deb -I "$deb")
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = roost ] || fail "Package: $(field Package)"
version=$("$prefix/bin/roost-server" --version | cut -d' ' -f2)
[ "$(field Version)" = "$version" ] || fail "Version: $(field Version), not $version"
[ "$(field Architecture)" = "$(dpkg --print-architecture)" ] ||
  fail "Architecture: $(field Architecture)"
depends=$(field Depends)
# Found by dpkg-shlibdeps, from what the binaries link.
for lib in libc6 libstdc++6 'libgrpc++1.51' libprotobuf32 libssl3 \
           libprometheus-cpp-core1.0 passwd; do
  [[ ", $depends," == *", $lib"[\ ,]* ]] || fail "Depends lacks $lib: $depends"
done
for p in postinst prerm postrm; do
  [[ $info == *" $p"* ]] || fail "no $p in the control archive: $info"
done
listing=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in ./usr/bin/roost-server ./usr/bin/roost-load ./usr/bin/roost-get \
         ./usr/bin/roost-admin ./usr/lib/systemd/system/roost-server.service \
         ./usr/share/doc/roost/README.md ./usr/share/doc/roost/operations.md \
         ./usr/share/doc/roost/operations/reference.md \
         ./usr/share/doc/roost/copyright \
         ./usr/share/roost/server.toml; do
  grep -qx -- "$f" <<<"$listing" || fail "$f not in the package: $listing"
done
# Nothing outside /usr: /etc/roost and /var/lib/roost are postinst's.
if grep -v '^\./usr/' <<<"$listing" | grep -vqx './'; then
  fail "files outside /usr: $(grep -v '^\./usr/' <<<"$listing")"
fi
# Unpacked to a directory, not piped through tar: tar stops reading at the
# archive's end marker, and dpkg-deb, still writing the padding after it,
# then failed on the broken pipe now and then.
dpkg-deb -x "$deb" "$tmp/unpacked"
grep -qx 'ExecStart=/usr/bin/roost-server --config /etc/roost/server.toml' \
  "$tmp/unpacked/usr/lib/systemd/system/roost-server.service" ||
  fail "the package's unit does not start /usr/bin/roost-server"
echo "install_test: ok ($(basename "$deb"), $(stat -c %s "$deb") bytes; Depends: $depends)"
