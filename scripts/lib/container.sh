# shellcheck shell=bash
# Lightweight "containers" for test clusters, without Docker:
#   network: one hub netns per cluster holding bridge br0; each container has
#            its own netns with eth0 = one end of a veth whose other end is in
#            the hub, enslaved to br0. Nothing is created in the host netns.
#   the rest: unshare(mount, uts, pid) + overlayfs (read-only rootfs below a
#            per-container upper dir) + chroot. PID 1 of the container is a
#            tiny bash loop; killing it kills every process of the container.
# Sourced by scripts/cluster (needs common.sh). Functions take the cluster
# state dir in $CDIR and the cluster name in $CNAME.

hub_ns() { echo "srs-$CNAME-hub"; }
host_ns() { echo "srs-$CNAME-$1"; }
host_dir() { echo "$CDIR/hosts/$1"; }

net_up() {
  local hub; hub=$(hub_ns)
  ip netns list | grep -qx "$hub\( (id: [0-9]*)\)\?" && return 0
  ip netns add "$hub"
  ip -n "$hub" link set lo up
  ip -n "$hub" link add br0 type bridge
  ip -n "$hub" link set br0 up
}

net_down() {
  ip netns del "$(hub_ns)" 2>/dev/null || true
}

# ctr_start HOST ROOTFS IP/PREFIX GPUS IDX  (IDX names the veth: host names may be long)
# Starts the container's PID 1 and returns once its filesystem is ready.
# Bind mounts (host path -> container path) come from $CDIR/hosts/HOST/binds,
# one "src dst [ro]" per line, written by the caller beforehand.
ctr_start() {
  local name=$1 rootfs=$2 ip=$3 gpus=$4 idx=$5
  local d; d=$(host_dir "$name")
  local ns; ns=$(host_ns "$name")
  local hub; hub=$(hub_ns)
  [ -x "$rootfs/bin/bash" ] || die "rootfs $rootfs missing: run scripts/setup"
  mkdir -p "$d/upper" "$d/work" "$d/merged"
  touch "$d/binds"
  echo "$idx" > "$d/idx"; echo "$rootfs" > "$d/rootfs"; echo "${ip%/*}" > "$d/ip"; echo "$gpus" > "$d/gpus"
  # network: veth pair created in the hub, one end moved into the container netns
  ip netns add "$ns"
  ip -n "$hub" link add "v$idx" type veth peer name eth0 netns "$ns"
  ip -n "$hub" link set "v$idx" master br0 up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$ip" dev eth0
  ip -n "$ns" link set eth0 up
  # ip netns exec gives a fresh /sys for this netns; unshare makes mount,
  # uts and pid namespaces (mount propagation private by default).
  setsid ip netns exec "$ns" unshare --mount --uts --pid --fork \
    /bin/bash "$SRS_ROOT/scripts/lib/ctr-init.sh" "$d" "$name" \
    </dev/null >"$d/init.log" 2>&1 &
  echo $! > "$d/unshare.pid"

  for _ in $(seq 200); do [ -f "$d/ready" ] && break; sleep 0.05; done
  [ -f "$d/ready" ] || { cat "$d/init.log" >&2; die "container $name did not start"; }
  # host pid of the container's PID 1 (written by ctr-init.sh)
  local ipid; ipid=$(cat "$d/ready")
  [ -n "$ipid" ] && kill -0 "$ipid" 2>/dev/null || die "cannot find PID 1 of container $name"
  echo "$ipid" > "$d/init.pid"
}

# ctr_exec HOST [USER] -- CMD...: run CMD inside, exit code passed through.
ctr_exec() {
  local name=$1 user=${2:-root}; shift 2
  [ "${1:-}" = -- ] && shift
  local pid; pid=$(cat "$(host_dir "$name")/init.pid" 2>/dev/null) || die "host $name is not running"
  kill -0 "$pid" 2>/dev/null || die "host $name is not running"
  local home=/root
  [ "$user" != root ] && home=/home/$user
  local envv=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$home"
              USER="$user" LOGNAME="$user" TERM="${TERM:-dumb}" LANG=C.UTF-8)
  # (nsenter -w DIR would resolve DIR outside the container: cd from inside instead)
  local run=(/bin/sh -c 'cd "$HOME" 2>/dev/null || cd /; exec "$@"' sh)
  if [ "$user" = root ]; then
    nsenter -t "$pid" -m -u -n -p -r -w -- /usr/bin/env -i "${envv[@]}" "${run[@]}" "$@"
  else
    nsenter -t "$pid" -m -u -n -p -r -w -- /usr/bin/env -i "${envv[@]}" "${run[@]}" \
      runuser -u "$user" -- "$@"
  fi
}

# ctr_kill HOST: SIGKILL the container's PID 1, which takes the whole pid
# namespace with it (that takes the kernel a moment: kill all, then ctr_stop each).
ctr_kill() {
  local d; d=$(host_dir "$1")
  [ -s "$d/init.pid" ] && { kill -KILL "$(cat "$d/init.pid")" 2>/dev/null || true; }
  return 0
}

ctr_stop() {
  local name=$1 d; d=$(host_dir "$name")
  local pid
  if [ -s "$d/init.pid" ]; then
    pid=$(cat "$d/init.pid")
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  fi
  if [ -s "$d/unshare.pid" ]; then
    pid=$(cat "$d/unshare.pid")
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  [ -s "$d/idx" ] && { ip -n "$(hub_ns)" link del "v$(cat "$d/idx")" 2>/dev/null || true; }
  ip netns del "$(host_ns "$name")" 2>/dev/null || true
  cgroup_release "$name"
  rm -f "$d/init.pid" "$d/unshare.pid" "$d/ready"
}

# ---- optional real cgroup v1 hierarchy per container (--cgroups) ----
# Each controller gets a sub-directory slurm-rs/<cluster>/<host> of the host's
# hierarchy, bind-mounted at the container's /sys/fs/cgroup/<controller>.
CG_CONTROLLERS="cpu cpuacct cpuset memory devices freezer pids"
cgroup_path() { echo "/sys/fs/cgroup/$1/slurm-rs/$CNAME/$2"; }
cgroup_prepare() {
  local host=$1 c p
  for c in $CG_CONTROLLERS; do
    [ -d "/sys/fs/cgroup/$c" ] || continue
    p=$(cgroup_path "$c" "$host")
    mkdir -p "$p"
    if [ "$c" = cpuset ]; then   # a new cpuset is empty: inherit cpus/mems down the path
      local q=/sys/fs/cgroup/cpuset
      for part in slurm-rs "$CNAME" "$host"; do
        [ -s "$q/$part/cpuset.cpus" ] || cat "$q/cpuset.cpus" > "$q/$part/cpuset.cpus"
        [ -s "$q/$part/cpuset.mems" ] || cat "$q/cpuset.mems" > "$q/$part/cpuset.mems"
        q=$q/$part
      done
    fi
    echo "$c slurm-rs/$CNAME/$host" >> "$(host_dir "$host")/cgroup-binds"
  done
}
# remove the sub-hierarchy bottom-up (only empty cgroups can be removed)
cgroup_release() {
  local host=$1 c p
  [ -f "$(host_dir "$host")/cgroup-binds" ] || return 0
  for c in $CG_CONTROLLERS; do
    p=$(cgroup_path "$c" "$host")
    [ -d "$p" ] || continue
    find "$p" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    rmdir "/sys/fs/cgroup/$c/slurm-rs/$CNAME" 2>/dev/null || true
    rmdir "/sys/fs/cgroup/$c/slurm-rs" 2>/dev/null || true
  done
}
