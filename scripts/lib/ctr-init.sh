#!/bin/bash
# ctr-init.sh DIR NAME - PID 1 of a test-cluster container (see container.sh).
# Runs inside fresh mount/uts/pid namespaces and the container's netns;
# builds the container's filesystem, then becomes a reaper loop in the chroot.
set -euo pipefail
d=$1 name=$2
rootfs=$(cat "$d/rootfs")
gpus=$(cat "$d/gpus")
m=$d/merged

# Our pid as the host sees it: /proc is still the host's procfs here, and
# `read` is a builtin, so /proc/self is this bash ($$ would say 1).
read -r host_pid _ < /proc/self/stat
mount --make-rprivate /
mount -t overlay overlay -o "lowerdir=$rootfs,upperdir=$d/upper,workdir=$d/work" "$m"
mount -t proc proc "$m/proc"
mount --rbind /sys "$m/sys"          # this netns' sysfs (ip netns exec remounted it)
# Hide the host's cgroup tree: an empty tmpfs, plus per-container
# sub-hierarchies when the cluster asked for cgroups.
if [ -d "$m/sys/fs/cgroup" ]; then
  mount -t tmpfs -o mode=755,size=1m cgroup "$m/sys/fs/cgroup"
  if [ -f "$d/cgroup-binds" ]; then
    # /sys/fs/cgroup/* are not visible after `ip netns exec` remounted /sys:
    # mount each hierarchy privately, bind the container's sub-directory.
    while read -r c rel; do
      mkdir -p "$d/cgmnt/$c" "$m/sys/fs/cgroup/$c"
      mount -t cgroup -o "$c" cgroup "$d/cgmnt/$c"
      mount --bind "$d/cgmnt/$c/$rel" "$m/sys/fs/cgroup/$c"
      umount "$d/cgmnt/$c"
    done < "$d/cgroup-binds"
  fi
  mount -o remount,ro,bind "$m/sys/fs/cgroup" 2>/dev/null || true
fi

# A private /dev: only harmless host devices, its own pts and shm, and fake
# GPUs (char devices 195:N like NVIDIA's; nothing backs them) for gres.conf.
mount -t tmpfs -o mode=755,size=1m dev "$m/dev"
for n in null zero full random urandom tty; do
  touch "$m/dev/$n"; mount --bind "/dev/$n" "$m/dev/$n"
done
mkdir -p "$m/dev/pts" "$m/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$m/dev/pts"
ln -s pts/ptmx "$m/dev/ptmx"
mount -t tmpfs -o mode=1777 shm "$m/dev/shm"
ln -s /proc/self/fd "$m/dev/fd"
ln -s /proc/self/fd/0 "$m/dev/stdin"; ln -s /proc/self/fd/1 "$m/dev/stdout"; ln -s /proc/self/fd/2 "$m/dev/stderr"
for ((i = 0; i < gpus; i++)); do mknod -m 666 "$m/dev/nvidia$i" c 195 "$i"; done
[ "$gpus" -gt 0 ] && mknod -m 666 "$m/dev/nvidiactl" c 195 255

mount -t tmpfs -o mode=755 run "$m/run"
mount -t tmpfs -o mode=1777 tmp "$m/tmp"

# cluster-wide directories (config, homes, shared, logs, our binaries)
while read -r src dst opt; do
  [ -n "$src" ] || continue
  mkdir -p "$m$dst"
  mount --bind "$src" "$m$dst"
  [ "${opt:-}" = ro ] && mount -o remount,ro,bind "$m$dst"
done < "$d/binds"

hostname "$name"
echo "$host_pid" > "$d/ready.tmp"; mv "$d/ready.tmp" "$d/ready"
# PID 1: reap orphans (daemons are started with setsid and re-parent here)
exec chroot "$m" /bin/bash -c 'trap "exit 0" TERM INT; while :; do sleep 3600 & wait $!; done'
