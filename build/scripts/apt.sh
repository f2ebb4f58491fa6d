# apt.sh is sourced by the scripts that install Debian packages.
#
# apt_install installs packages with the distribution's apt, quietly. It
# waits up to 5 minutes for another apt or dpkg to let go of the lock (a
# machine may be installing something else), and when the package lists
# are missing or stale (a fresh machine) it updates them once and tries
# again.
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  local opts=(-o DPkg::Lock::Timeout=300 -y -qq)
  apt-get "${opts[@]}" install "$@" >/dev/null 2>&1 ||
    { apt-get -o DPkg::Lock::Timeout=300 update -qq && apt-get "${opts[@]}" install "$@" >/dev/null; }
}
