#!/usr/bin/env bash
# The figures of one soak.sh run from its raw outputs (rss<i>.txt: the lines Soak printed, in
# the order of configs.txt): per configuration the RSS growth in MB/min from t=120 s to the end
# of the new classes (least-squares slope: the VM's own growth settles in the first two
# minutes), the same minus the slope with no agent, the slope of the quiet part and the RSS
# at the end. For sigquit: configurations, the RSS before the first dump and at the end.
#
#   bench/soak/report.sh <dir of a run kept with SOAK_KEEP=<dir>>
set -euo pipefail
work=${1:?usage: $0 <dir>}
read -r new_s quiet_s < "$work/times.txt"
mapfile -t configs < "$work/configs.txt"

# slope in MB/min of rss_kb over t in [from, to]
slope() {
  awk -v from="$2" -v to="$3" '/^t=/ {
      split($1, a, "="); split($2, b, "="); t = a[2]; r = b[2] / 1024
      if (t >= from && t <= to) { n++; sx += t; sy += r; sxx += t * t; sxy += t * r }
    } END { d = n * sxx - sx * sx; printf "%.2f", (d > 0 ? 60 * (n * sxy - sx * sy) / d : 0) }' "$1"
}
rss_at() { awk -v t="$2" '/^t=/ { split($1, a, "="); split($2, b, "="); if (a[2] <= t) r = b[2] } END { printf "%.1f", r / 1024 }' "$1"; }

base=""
for i in "${!configs[@]}"; do [ "${configs[$i]}" = none ] && base=$(slope "$work/rss$i.txt" 120 "$new_s"); done
printf '%-48s %10s %10s %10s %10s\n' configuration "MB/min" "over none" "quiet/min" "end MB"
for i in "${!configs[@]}"; do
  c=${configs[$i]}
  s=$(slope "$work/rss$i.txt" 120 "$new_s")
  q=$(slope "$work/rss$i.txt" $((new_s + 10)) $((new_s + quiet_s)))
  over=$([ -n "$base" ] && awk -v a="$s" -v b="$base" 'BEGIN { printf "%.2f", a - b }' || echo -)
  printf '%-48s %10s %10s %10s %10s\n' "$c" "$s" "$over" "$q" "$(rss_at "$work/rss$i.txt" 1e9)"
  if [ "$c" != "${c#sigquit:}" ]; then
    echo "  SIGQUIT dumps at t=$((new_s + 30)),$((new_s + 50)),$((new_s + 70)): RSS before" \
      "$(rss_at "$work/rss$i.txt" $((new_s + 20))) MB, after $(rss_at "$work/rss$i.txt" 1e9) MB"
  fi
done
