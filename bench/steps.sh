# Sourced by the device scripts (gpu_sweep.sh, fma_device.sh): log and step, writing to $OUT.
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
step() {  # step NAME TIMEOUT COMMAND...: runs it, its output in $OUT/NAME.log
  local name=$1 limit=$2
  shift 2
  local t0=$(date +%s.%N)
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  local t1=$(date +%s.%N)
  log "$name: exit $rc ($(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s)"
  return $rc
}
