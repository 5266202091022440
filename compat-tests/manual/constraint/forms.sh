#!/bin/sh
t() { echo "== sbatch $*"; out=$(sbatch -o /dev/null "$@" --wrap 'sleep 30' 2>&1); echo "$out"; id=$(echo "$out" | awk '/Submitted/{print $4}'); if [ -n "$id" ]; then sleep 2; squeue -h -j $id -o '%T %R %D'; scancel $id; sleep 1; fi; }
t -C 'a*2&b*2'
t -C 'r1*1&r2*1'
t -C '[r1*1&r2*1]' -n1
t -C '[r1*2&ib*1]' -n1
t -C '[r1|r2]' -n8
t -C 'ib&[r1|r2]' -N2
t -C 'ib&[r1|r2]' -N1
t -C '(r1|r2)&ib' -N2
t -C 'r1|r2&ib' -N2
t -C '[r1&r2]'
t -C '[r1*1|r2]'
t -C 'r1&nosuch'
t -C 'ib*3'
t -C '[r1*1&r2*1]' -N1
t -C 'ib*2' -n1
t -C '[r1|r2]' -N3
t -C 'r1,ib'
t -C 'r1&'
t -C '(r1)ib'
