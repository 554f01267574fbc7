#!/usr/bin/env bash
# Installs the Debian packages that fibra-bench's peer programs (peers/) and
# experiments need, on Debian 12 (bookworm) or similar. Run as root.
#
#   scripts/install-peers.sh            # exit 0 even if some packages are missing
#   scripts/install-peers.sh --strict   # exit 1 if any package is missing
#
# It tries all packages in one apt-get call first; if that fails (say one
# package is unknown to this release), it retries them one by one, so one bad
# package never blocks the others. Then it prints which packages are
# installed and which are missing. Safe to re-run: installed packages are
# left alone.
#
# Go: the bench machines have a recent one (/usr/local/go); where none is
# found, Debian's golang-go is installed (peers/go asks for Go 1.21; an older
# Debian Go still builds them or fails with its version named). Java >= 21
# (virtual threads, peers/java) is not a Debian 12 package: the script says
# whether one is found, and where; fibra-bench reports Java missing otherwise.
set -euo pipefail

PACKAGES=(
    ruby                 # E1 Fiber peer, E3 Thread peer, E4 servers (MRI)
    jruby                # E1 Fiber peer on the JVM; E3 (no global lock)
    lua5.1 lua5.4 luajit # E1 coroutine peers
    gcc g++ libc6-dev    # compile the C/C++ peers
    libboost-context-dev # E1 boost.context fcontext peer
    strace               # E2 system-call counts
    wrk apache2-utils    # E4, http- and https-throughput load drivers (wrk; ab from apache2-utils)
    erlang-nox           # Erlang/OTP peer: ractor-pingpong, ractor-fanin, ractor-scale (erl, erlc)
)

# Prints the path of `go`: on PATH, or where the official tarball puts it.
find_go() {
    command -v go || { [[ -x /usr/local/go/bin/go ]] && echo /usr/local/go/bin/go; } || true
}
[[ -n $(find_go) ]] || PACKAGES+=(golang-go) # Go peers (E1, E2, E3, E4, spawn, echo, scale)

strict=0
case "${1:-}" in
    "") ;;
    --strict) strict=1 ;;
    *) echo "usage: $0 [--strict]" >&2; exit 2 ;;
esac

if [[ $(id -u) -ne 0 ]]; then
    echo "install-peers: must run as root" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
APT_OPTS=(-y -q --no-install-recommends)

is_installed() {
    [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true) == "install ok installed" ]]
}

# A failed index update (e.g. one unreachable mirror) should not stop us:
# whatever can be installed from the lists we have still gets installed.
echo "== apt-get update"
apt-get update -q || echo "install-peers: warning: apt-get update failed; continuing" >&2

echo "== apt-get install (all at once)"
if ! apt-get install "${APT_OPTS[@]}" "${PACKAGES[@]}"; then
    echo "== install failed as a whole; retrying one package at a time"
    for pkg in "${PACKAGES[@]}"; do
        is_installed "$pkg" && continue
        echo "-- $pkg"
        apt-get install "${APT_OPTS[@]}" "$pkg" ||
            echo "install-peers: warning: could not install $pkg" >&2
    done
fi

# ---- summary -----------------------------------------------------------------

installed=() missing=()
for pkg in "${PACKAGES[@]}"; do
    if is_installed "$pkg"; then installed+=("$pkg"); else missing+=("$pkg"); fi
done

# Prints the version line of a Java binary (e.g. `openjdk version "25.0.3"`).
java_version_line() { "$1" -version 2>&1 | head -n 1; }

# Major version of a Java binary: 1.8 -> 8, 17.0.15 -> 17, 25 -> 25.
java_major() {
    local v
    v=$(java_version_line "$1" | sed -n 's/.*version "\([^"]*\)".*/\1/p')
    v=${v#1.}
    echo "${v%%[!0-9]*}"
}

# Finds the newest Java >= 21 among the usual places; prints its path.
find_java21() {
    local best="" best_major=0 cand major
    for cand in "$(command -v java || true)" ${JAVA_HOME:+"$JAVA_HOME/bin/java"} \
        /usr/lib/jvm/*/bin/java /opt/*/bin/java /opt/*/*/bin/java; do
        [[ -n $cand && -x $cand ]] || continue
        major=$(java_major "$cand")
        [[ -n $major ]] || continue
        if (( major >= 21 && major > best_major )); then
            best=$(readlink -f "$cand") best_major=$major
        fi
    done
    [[ -n $best ]] && echo "$best"
}

echo
echo "== summary"
echo "installed (${#installed[@]}): ${installed[*]:-none}"
echo "missing   (${#missing[@]}): ${missing[*]:-none}"

go_bin=$(find_go)
if [[ -n $go_bin ]]; then
    echo "go:        $go_bin ($("$go_bin" version))"
else
    echo "go:        NOT FOUND (peers/go needs it; golang-go did not install)"
fi

java_bin=$(find_java21 || true)
if [[ -n $java_bin ]]; then
    echo "java>=21:  $java_bin ($(java_version_line "$java_bin"))"
    default_java=$(command -v java || true)
    if [[ -n $default_java && $(readlink -f "$default_java") != "$java_bin" ]]; then
        echo "           note: \`java\` on PATH is $(java_version_line "$default_java");" \
            "run peers/java with the path above"
    fi
else
    echo "java>=21:  NOT FOUND (peers/java needs virtual threads; not installed by this script)"
fi

if (( strict && ${#missing[@]} > 0 )); then
    exit 1
fi
exit 0
