# shellcheck shell=bash
# Shared helpers for scripts/setup, scripts/cluster and scripts/demo.
# shellcheck disable=SC2034  # variables used by the scripts that source this
# Sourced, never executed.

SRS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SRS_CACHE=${SLURM_RS_CACHE:-/var/cache/slurm-rs}        # rootfs + .deb cache, outside the checkout
SRS_RUN=${SLURM_RS_RUN:-/run/slurm-rs}                   # live cluster state
SRS_KEY=$SRS_CACHE/munge.key                              # throwaway key shared by all containers

# Slurm version -> Debian suite whose packages provide it.
suite_of() {
  case $1 in
    22.05) echo bookworm ;;
    24.11) echo trixie ;;
    26.05) echo forky ;;
    *) die "unknown Slurm version '$1' (use 22.05, 24.11 or 26.05)" ;;
  esac
}
ALL_VERSIONS="22.05 24.11 26.05"
# short tag used in host names: 22.05 -> 22
vtag() { echo "${1%%.*}"; }

rootfs_of() { echo "$SRS_CACHE/rootfs/$(suite_of "$1")"; }

die() { echo "error: $*" >&2; exit 1; }
note() { echo "== $*" >&2; }

need_root() { [ "$(id -u)" = 0 ] || die "must run as root"; }

# Test users and groups, identical on the host and in every rootfs.
# name:uid lines; both users have primary group users(100) and are in research(3001).
SRS_USERS="alice:2001 bob:2002"
SRS_EXTRA_GROUP="research:3001"

# Create the test users/groups under root directory $1 (/ for the host).
ensure_users() {
  local root=$1 g gid u uid
  g=${SRS_EXTRA_GROUP%%:*}; gid=${SRS_EXTRA_GROUP#*:}
  chroot "$root" getent group users >/dev/null || chroot "$root" groupadd -g 100 users
  chroot "$root" getent group "$g" >/dev/null || chroot "$root" groupadd -g "$gid" "$g"
  for u in $SRS_USERS; do
    uid=${u#*:}; u=${u%%:*}
    if ! chroot "$root" getent passwd "$u" >/dev/null; then
      chroot "$root" useradd -M -u "$uid" -g users -G "$g" -d "/home/$u" -s /bin/bash "$u"
    fi
    [ "$(chroot "$root" id -u "$u")" = "$uid" ] || die "user $u has the wrong uid under $root (want $uid)"
    chroot "$root" usermod -a -G "$g" "$u"
  done
}

# Cargo target dir (where slurmctld-rs & co. are built).
cargo_target_dir() {
  if [ -n "${CARGO_TARGET_DIR:-}" ]; then echo "$CARGO_TARGET_DIR"; return; fi
  local d
  d=$(cd "$SRS_ROOT" && cargo metadata --format-version 1 --no-deps 2>/dev/null |
      sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
  echo "${d:-$SRS_ROOT/target}"
}
# SLURM_RS_BIN_DIR overrides where slurmctld-rs/slurmd-rs/slurmdbd-rs are taken from.
rs_bin_dir() { echo "${SLURM_RS_BIN_DIR:-$(cargo_target_dir)/${SLURM_RS_PROFILE:-debug}}"; }
