#!/bin/bash
# bench/client.sh - the client-side half of scripts/bench. Runs where the
# Slurm clients are (a login container, or the host with SLURM_CONF set) and
# prints samples as "metric<TAB>unit<TAB>value" lines on stdout.
#
#   client.sh ping RUNS                 scontrol ping latency, one sample per run
#   client.sh squeue TAG RUNS           `squeue -h | wc -l` latency (+ the line count)
#   client.sh sinfo TAG RUNS            `sinfo` latency (+ the line count)
#   client.sh sbatch TAG N PAR          N held `sbatch --wrap true` with PAR in parallel: jobs/s
#   client.sh e2e N PAR TIMEOUT         N runnable trivial jobs, from first submit until the queue
#                                       is empty: jobs/s (fails after TIMEOUT s)
#   client.sh cancel TIMEOUT            scancel this user's jobs and wait for an empty queue
#
# Timing is bash's $EPOCHREALTIME around the client command (no extra fork).
# Every loop is bounded by its count and, where it waits, by a timeout.
set -uo pipefail

now() { echo "$EPOCHREALTIME"; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", (b-a)*1000}'; }
sample() { printf '%s\t%s\t%s\n' "$1" "$2" "$3"; }
ME=$(id -un)
qlen() { squeue -h -u "$ME" -o %i 2>/dev/null | wc -l; }

wait_empty() { # TIMEOUT -> 0 when this user's queue is empty in time
  local end=$(( $(date +%s) + $1 ))
  while [ "$(date +%s)" -lt "$end" ]; do
    [ "$(qlen)" -eq 0 ] && return 0
    sleep 0.25
  done
  return 1
}

cmd=${1:-}; shift || true
case $cmd in
  ping)
    for ((k = 0; k < $1; k++)); do
      t0=$(now); scontrol ping >/dev/null 2>&1; rc=$?; t1=$(now)
      [ $rc = 0 ] && sample ping_ms ms "$(ms "$t0" "$t1")" || sample ping_failed text "rc=$rc"
    done ;;
  squeue)
    tag=$1
    for ((k = 0; k < $2; k++)); do
      t0=$(now); n=$(squeue -h 2>/tmp/squeue.err | wc -l); t1=$(now)
      sample "squeue_ms@$tag" ms "$(ms "$t0" "$t1")"
    done
    sample "squeue_lines@$tag" lines "$n"
    [ -s /tmp/squeue.err ] && sample "squeue_error@$tag" text "$(head -c 200 /tmp/squeue.err | tr '\t\n' '  ')"
    ;;
  sinfo)
    tag=$1
    for ((k = 0; k < $2; k++)); do
      t0=$(now); n=$(sinfo 2>/tmp/sinfo.err | wc -l); t1=$(now)
      sample "sinfo_ms@$tag" ms "$(ms "$t0" "$t1")"
    done
    sample "sinfo_lines@$tag" lines "$n"
    [ -s /tmp/sinfo.err ] && sample "sinfo_error@$tag" text "$(head -c 200 /tmp/sinfo.err | tr '\t\n' '  ')"
    ;;
  sbatch)
    tag=$1 n=$2 par=$3
    t0=$(now)
    ok=$(seq "$n" | xargs -P "$par" -I{} sbatch --parsable --hold -o /dev/null --wrap true 2>/tmp/sbatch.err | grep -c '^[0-9]')
    t1=$(now)
    sample "sbatch_${tag}_jobs_per_s" jobs/s "$(awk -v n="$ok" -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", n/(b-a)}')"
    sample "sbatch_${tag}_accepted" count "$ok"
    [ "$ok" -lt "$n" ] && sample "sbatch_${tag}_error" text "$((n - ok)) of $n failed: $(sort /tmp/sbatch.err | uniq -c | sort -rn | head -2 | tr '\t\n' '  ' | head -c 300)"
    ;;
  e2e)
    n=$1 par=$2 timeout=$3
    t0=$(now)
    ok=$(seq "$n" | xargs -P "$par" -I{} sbatch --parsable -o /dev/null --wrap true 2>/tmp/e2e.err | grep -c '^[0-9]')
    t1=$(now)
    sample e2e_submit_phase_s s "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')"
    sample e2e_accepted count "$ok"
    [ "$ok" -lt "$n" ] && sample e2e_error text "$((n - ok)) of $n submissions failed: $(sort /tmp/e2e.err | uniq -c | sort -rn | head -2 | tr '\t\n' '  ' | head -c 300)"
    if wait_empty "$timeout"; then
      t2=$(now)
      sample e2e_jobs_per_s jobs/s "$(awk -v n="$ok" -v a="$t0" -v b="$t2" 'BEGIN{printf "%.1f", n/(b-a)}')"
      sample e2e_total_s s "$(awk -v a="$t0" -v b="$t2" 'BEGIN{printf "%.2f", b-a}')"
    else
      left=$(qlen)
      sample e2e_error text "queue not empty after ${timeout}s: $left of $ok jobs left ($(squeue -h -u "$ME" -o '%T %r' | sort | uniq -c | sort -rn | head -2 | tr '\n' ' '))"
    fi ;;
  cancel)
    scancel -u "$ME" 2>/dev/null
    wait_empty "$1" || sample cancel_error text "queue not empty after $1 s"
    ;;
  *) echo "usage: client.sh ping|squeue|sinfo|sbatch|e2e|cancel ..." >&2; exit 2 ;;
esac
