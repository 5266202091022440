#!/bin/sh
t() { echo "== sbatch $*"; out=$(sbatch -o /dev/null "$@" --wrap 'sleep 30' 2>&1); echo "$out" | sed 's/job [0-9]*/job N/'; id=$(echo "$out" | awk '/Submitted/{print $4}'); if [ -n "$id" ]; then sleep 3; squeue -h -j $id -o '%T %R %D'; scancel $id; sleep 3; fi; }
t -C 'ib*2'
t -C 'ib*2' -n2
t -C '[r1*1&r2*1]'
t -C '[r1*1&r2*1]' -n2
t -C '[r1*2&ib*1]' -n3
t -C '[r1*2&ib*1]' -n2
t -C '(r1|r2)&ib' -N2
t -C 'r1|r2&ib' -N2
t -C 'r1&'
t -C '(r1)ib'
t -C '[r1|r2]' -n8
