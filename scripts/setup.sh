# Shared by scripts/run and scripts/test (sourced, not run): installs what attnviz needs from
# Debian's packages, then configures and builds it. Quick when everything is already there.

ATTNVIZ_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ATTNVIZ_BUILD=${ATTNVIZ_BUILD:-$ATTNVIZ_ROOT/build}

# Every package attnviz builds, runs and tests with.
ATTNVIZ_PACKAGES=(
    cmake ninja-build g++ pkg-config
    libeigen3-dev nlohmann-json3-dev libcli11-dev zlib1g-dev
    libpcre2-dev libutf8proc-dev libsentencepiece-dev
    libgtest-dev libgmock-dev libbenchmark-dev
    libimgui-dev libglfw3-dev libgl-dev python3-glad libstb-dev fonts-dejavu-core
    xvfb xauth libgl1-mesa-dri xdotool x11-utils
    dpkg-dev file librsvg2-bin
    clang-format ccache
)

# attnviz_install_packages [more packages...]: installs whatever of ATTNVIZ_PACKAGES and the
# packages given is not installed yet.
attnviz_install_packages() {
    local missing=() pkg
    for pkg in "${ATTNVIZ_PACKAGES[@]}" "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "Installing: ${missing[*]}"
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { echo "error: need root or sudo to install ${missing[*]}" >&2; return 1; }
        sudo=(sudo)
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# attnviz_configure [extra cmake args...]: configures $ATTNVIZ_BUILD (Release unless the arguments
# say otherwise); warnings are errors when $CI is set. Compiles go through ccache where it is
# installed, with this checkout as its base directory: paths are hashed relative to it, so another
# clone of the same sources (a CI run, a worktree) reuses the objects of the first.
attnviz_configure() {
    local werror=OFF launcher=()
    [ -n "${CI:-}" ] && werror=ON
    if command -v ccache >/dev/null; then
        export CCACHE_BASEDIR="$ATTNVIZ_ROOT" CCACHE_NOHASHDIR=1
        launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    fi
    cmake -S "$ATTNVIZ_ROOT" -B "$ATTNVIZ_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DATTNVIZ_WERROR=$werror "${launcher[@]}" "$@" >/dev/null
}

# attnviz_build [extra cmake args...]: configure once (Release), then build incrementally.
attnviz_build() {
    attnviz_configure "$@"
    cmake --build "$ATTNVIZ_BUILD" -j "$(nproc)"
}
