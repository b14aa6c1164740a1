# scripts/lib/nspawn.sh — sourced by scripts/systemd-nspawn-test and scripts/package-test: a
# minimal Debian 12 booted with systemd-nspawn, copied from a root file system cached between runs.
# The sourcing script defines say and fail (its messages) and runs as root.
#
#   PAGESYNC_NSPAWN_CACHE=DIR    where the pristine root is kept (default /var/cache/pagesync-nspawn:
#                                outside the checkout, so `rm -rf .build` keeps it and every
#                                checkout on the machine shares it; a clean machine makes it once)
#   PAGESYNC_NSPAWN_MIRROR=URL   Debian mirror (default http://deb.debian.org/debian)
#   PAGESYNC_NSPAWN_KEEP=1       keep the container's copy for inspection
#
# The pristine root is `debootstrap --variant=minbase bookworm` with systemd, systemd-sysv and dbus,
# and apt's package lists: no procps (so no /bin/kill) and none of pagesync's libraries. Packages a
# test installs inside are first downloaded into its apt cache (nspawn_prefetch), so that the
# container, which has no network (--private-network), installs them from there. Whatever changes
# the pristine root, or copies it, holds the cache's lock (flock), so checkouts testing at once
# share it safely.
#
# After nspawn_copy and nspawn_boot: WORK (a scratch directory, removed by nspawn_cleanup), CROOT
# (the container's root, seen from the host), LEADER (the container's systemd, host PID),
# NSPAWN_PID; `inside CMD` runs CMD in the container, `netns CMD` in its network only (the host's
# tools on the container's loopback), `inside_apt ARGS` runs apt-get there.

NSPAWN_CACHE=${PAGESYNC_NSPAWN_CACHE:-/var/cache/pagesync-nspawn}
NSPAWN_MIRROR=${PAGESYNC_NSPAWN_MIRROR:-http://deb.debian.org/debian}
NSPAWN_PRISTINE=$NSPAWN_CACHE/rootfs
# What the pristine root is made of: a cached root made from another recipe is made again.
NSPAWN_RECIPE="bookworm minbase +systemd,systemd-sysv,dbus +apt-lists"
NSPAWN_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORK="" CROOT="" LEADER="" NSPAWN_PID=""

# nspawn_locked COMMAND...: runs COMMAND holding the cache's lock.
nspawn_locked() {
    mkdir -p "$NSPAWN_CACHE"
    ( flock 9 && "$@" ) 9>"$NSPAWN_CACHE/lock"
}

# nspawn_chroot_apt ROOT ARGS...: apt-get ARGS in ROOT (chroot, the host's network), quietly;
# its output is shown when it fails.
nspawn_chroot_apt() {
    local root=$1; shift
    local log=${WORK:-$NSPAWN_CACHE}/apt.log
    if ! chroot "$root" env -i PATH="$NSPAWN_PATH" DEBIAN_FRONTEND=noninteractive apt-get -q -y "$@" >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        return 1
    fi
}

nspawn_make_pristine() {
    if [ -x "$NSPAWN_PRISTINE/lib/systemd/systemd" ] && [ "$(cat "$NSPAWN_CACHE/recipe" 2>/dev/null)" = "$NSPAWN_RECIPE" ]; then
        return 0
    fi
    local tmp=$NSPAWN_CACHE/rootfs.tmp log=$NSPAWN_CACHE/debootstrap.log started=$SECONDS
    say "debootstrap --variant=minbase bookworm (systemd, systemd-sysv, dbus) into $NSPAWN_PRISTINE, once: later runs copy it"
    rm -rf "$tmp" "$NSPAWN_PRISTINE" "$NSPAWN_CACHE/recipe"
    if ! debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus bookworm "$tmp" "$NSPAWN_MIRROR" >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        fail "debootstrap failed (the whole log: $log)"
    fi
    cp -L /etc/resolv.conf "$tmp/etc/resolv.conf"
    nspawn_chroot_apt "$tmp" update || fail "apt-get update in the new root file system failed"
    mv "$tmp" "$NSPAWN_PRISTINE"
    echo "$NSPAWN_RECIPE" > "$NSPAWN_CACHE/recipe"
    say "made the root file system in $((SECONDS - started)) s ($(du -sm "$NSPAWN_PRISTINE" | cut -f1) MB)"
}

# nspawn_pristine: makes the pristine root unless it is cached (a few minutes, with the network).
nspawn_pristine() {
    nspawn_locked nspawn_make_pristine
}

nspawn_download() {
    local args=() item copies=()
    for item in "$@"; do
        if [ -f "$item" ]; then
            cp "$item" "$NSPAWN_PRISTINE/var/tmp/"
            copies+=("$NSPAWN_PRISTINE/var/tmp/$(basename "$item")")
            args+=("/var/tmp/$(basename "$item")")
        else
            args+=("$item")
        fi
    done
    cp -L /etc/resolv.conf "$NSPAWN_PRISTINE/etc/resolv.conf"
    # Lists older than the mirror name files it no longer has: update once and retry.
    local status=0
    nspawn_chroot_apt "$NSPAWN_PRISTINE" install --download-only "${args[@]}" 2>/dev/null ||
        { nspawn_chroot_apt "$NSPAWN_PRISTINE" update && nspawn_chroot_apt "$NSPAWN_PRISTINE" install --download-only "${args[@]}"; } ||
        status=$?
    rm -f "${copies[@]}"
    return "$status"
}

# nspawn_prefetch ITEM...: downloads into the pristine root's apt cache what `apt-get install
# ITEM...` (package names, or .deb files and their dependencies) would install, installing
# nothing. The network is needed only for what is not cached yet.
nspawn_prefetch() {
    nspawn_locked nspawn_download "$@" || fail "apt-get install --download-only $* failed"
}

# nspawn_copy: a fresh copy of the pristine root, CROOT, in the scratch directory WORK (made
# unless the caller made it).
nspawn_copy() {
    [ -n "$WORK" ] || WORK=$(mktemp -d /var/tmp/pagesync-nspawn.XXXXXX)
    CROOT=$WORK/root
    say "copying the root file system to $CROOT"
    nspawn_locked cp -a --reflink=auto "$NSPAWN_PRISTINE" "$CROOT"
}

# nspawn_cleanup: stops the container and removes WORK (unless PAGESYNC_NSPAWN_KEEP=1). For trap.
nspawn_cleanup() {
    if [ -n "$NSPAWN_PID" ] && kill -0 "$NSPAWN_PID" 2>/dev/null; then
        kill -TERM "$NSPAWN_PID" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$NSPAWN_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$NSPAWN_PID" 2>/dev/null || true
        wait "$NSPAWN_PID" 2>/dev/null || true
    fi
    [ -n "$WORK" ] || return 0
    if [ "${PAGESYNC_NSPAWN_KEEP:-}" = 1 ]; then say "kept $WORK"; else rm -rf "$WORK"; fi
}

inside() { nsenter --target "$LEADER" --mount --uts --ipc --net --pid --root --wd -- "$@"; }
netns() { nsenter --target "$LEADER" --net -- "$@"; }
inside_apt() { inside env -i PATH="$NSPAWN_PATH" DEBIAN_FRONTEND=noninteractive apt-get -q -y "$@"; }
journal() { inside journalctl --no-pager -o cat -u "$1" | tail -n "${2:-20}"; }

# nspawn_boot: boots CROOT with systemd-nspawn in a private network namespace and waits until its
# systemd has started everything (running or degraded).
nspawn_boot() {
    local machine=pagesync-$$ state=""
    say "booting $machine with systemd-nspawn (private network)"
    # --keep-unit --register=no: no scope or machined registration, so no host systemd is needed
    # (the host may be a container without systemd as PID 1).
    systemd-nspawn --quiet --boot --keep-unit --register=no --directory="$CROOT" --machine="$machine" --private-network \
        --console=passive >"$WORK/console.log" 2>&1 &
    NSPAWN_PID=$!
    for _ in $(seq 1 300); do
        LEADER=$(pgrep -P "$NSPAWN_PID" -x systemd 2>/dev/null | head -1 || true)
        [ -n "$LEADER" ] && break
        kill -0 "$NSPAWN_PID" 2>/dev/null || { cat "$WORK/console.log" >&2; fail "systemd-nspawn exited"; }
        sleep 0.1
    done
    [ -n "$LEADER" ] || { cat "$WORK/console.log" >&2; fail "no systemd inside the container"; }
    for _ in $(seq 1 600); do
        state=$(inside systemctl is-system-running 2>/dev/null || true)
        case "$state" in running|degraded) break ;; esac
        sleep 0.2
    done
    say "container systemd: $(inside systemctl --version | head -1); system state: $state"
    if [ "$state" = degraded ]; then inside systemctl --failed --no-legend --no-pager >&2 || true; fi
}
