#!/bin/sh
# Install the LLVM 19 tools the tests use as oracles, when missing and apt can be used.
# Tests that need a tool which is still missing skip with a reason naming the Debian package.
set -u
need=""
[ -x /usr/lib/llvm-19/bin/llvm-mc ] || need="$need llvm-19"
[ -x /usr/lib/llvm-19/bin/ld.lld ] || need="$need lld-19"
[ -x /usr/lib/llvm-19/bin/clang ] || need="$need clang-19"
[ -z "$need" ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing oracle packages:$need"
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null 2>&1 \
        || echo "warning: apt-get could not install$need; tests that need them will skip"
else
    echo "note: missing$need (not root or no apt-get); tests that need them will skip"
fi
exit 0
