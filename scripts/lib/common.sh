# scripts/lib/common.sh — sourced by scripts/run-daemon, scripts/test and scripts/bench.
#
# One list of the Debian packages pagesync needs, one way to install the missing ones, and the one
# release build configuration that every script and the Makefile share.
#
# To add a package: append it to the list for the phase that needs it. Nothing else changes.

# Needed to build pagesyncd and pagesync, and by pagesyncd at run time (scripts/run-daemon);
# libyaml reads the config file; cmark-gfm and its extensions (tables) render markdown in the
# pager; http-parser reads the request heads of the metrics and web listeners; wslay frames the
# web listener's WebSockets. Each -dev package pulls its shared library, which the binaries link
# (the Debian package depends on those: libuv1, libssl3, libhiredis0.14, libyaml-0-2,
# libcmark-gfm*, libhttp-parser2.9, libwslay1).
PAGESYNC_BUILD_PACKAGES=(pkg-config libuv1-dev libssl-dev libhiredis-dev libyaml-dev libcmark-gfm-dev libcmark-gfm-extensions-dev libhttp-parser-dev libwslay-dev)
# Also installed by scripts/run-daemon, for the README's next step once the daemon runs
# (`printf 'next\n' | nc -q1 127.0.0.1 7777`); the end-to-end tests use `nc -q1` too.
PAGESYNC_RUN_PACKAGES=(netcat-openbsd)
# Also needed by scripts/test: `make build man install` and the end-to-end tests
# (the pager under tmux, socket activation and unit checks, `man --warnings`,
# certificates for the TLS tests and the README's `socat - OPENSSL:...`, a real redis-server for the
# Redis engine's tests, and Prometheus: a real one scrapes the daemon's /metrics, its promtool
# checks the format), python3-websocket (websocket-client: an independent WebSocket client for
# the web listener's protocol tests, run with Debian's /usr/bin/python3), and Chromium with its
# driver and Selenium (the follower page in a real headless browser).
PAGESYNC_TEST_PACKAGES=(make tmux systemd man-db openssl socat redis-server prometheus python3-websocket chromium chromium-driver python3-selenium)
# `make deb` (dpkg-dev: dpkg-shlibdeps, dpkg-gencontrol) and scripts/package-test, which scripts/test
# runs as root: lintian, and a minimal Debian 12 made with debootstrap and booted with
# systemd-nspawn (systemd-container).
PAGESYNC_DEB_PACKAGES=(dpkg-dev lintian debootstrap systemd-container)
# The servers scripts/bench compares pagesyncd with (scripts/test runs `scripts/bench --quick`).
PAGESYNC_BENCH_PACKAGES=(redis-server nats-server)

# The release build: `make build`, `make install`, `make man`, scripts/run-daemon, scripts/bench
# and scripts/test (products and tests) all use exactly these flags, so they share one
# .build/release and never rebuild each other. The Makefile reads them from here
# (SWIFT_BUILD_FLAGS), so the two cannot disagree.
# The executables link the Swift runtime statically in release; Package.swift says so
# (staticSwiftRuntime), not `--static-swift-stdlib` here, because that flag changes every compile
# command and has no Testing module, so the tests could not be built in the same build.
# The tests import the modules under test without @testable (what they use is `package`), so
# this build needs no -enable-testing, which would make the shipped daemon slower.
# -use-ld=lld: the Swift toolchain's own lld links the static binaries. GNU ld printed a glibc
# note ("the use of `mktemp' is dangerous") for every link, because FoundationEssentials (which
# swift-configuration and swift-argument-parser use) has a temporary-file function that
# references mktemp; pagesync never calls it, and lld does not print such notes. lld also links
# faster.
PAGESYNC_RELEASE_FLAGS=(-c release -Xswiftc -use-ld=lld)

# pagesync_missing_packages PACKAGE...: prints those of PACKAGE... that dpkg does not list as
# installed, space-separated, each once (the phases' lists overlap). Prints nothing without dpkg
# (not Debian: install them yourself).
pagesync_missing_packages() {
    command -v dpkg-query >/dev/null 2>&1 || return 0
    local package missing=()
    for package in "$@"; do
        [[ " ${missing[*]} " == *" $package "* ]] && continue
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
    done
    echo "${missing[*]}"
}

# pagesync_install WHO PACKAGE...: installs those of PACKAGE... that are missing, with apt-get
# (through sudo when not root), saying what it installs on stderr. WHO names the calling script
# in messages. Returns non-zero when something was missing and could not be installed.
pagesync_install() {
    local who=$1; shift
    local missing
    read -r -a missing <<< "$(pagesync_missing_packages "$@")"
    [ "${#missing[@]}" -gt 0 ] || return 0
    local sudo=()
    if [ "$(id -u)" != 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "$who: missing ${missing[*]}; not root and no sudo: install them with apt-get" >&2
            return 1
        fi
        sudo=(sudo)
    fi
    echo "$who: installing ${missing[*]} (apt-get)" >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 &&
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
}
